#!/usr/bin/env python3
"""Job-wide dumps (--dump-scope=job; docs/leave-it-on.md, "A whole job") with real Open MPI
launches of four ranks: one rank's trigger, death or hang dumps every rank, under one number.

usage: job_tests.py CASE --capture PATH --app PATH(flight_app) --mpirun PATH
The ranks say how far they got through files; the tests wait for those conditions (bounded only
to turn a hang into a failure), never for a time.
"""
import os
import re
import signal
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flight_tests as ft  # noqa: E402  (check, wait_for, failures, main)

check, wait_for = ft.check, ft.wait_for


def mpirun_env(tmp):
    # Open MPI as root needs its consent; a generous grace between SIGTERM and SIGKILL at a
    # teardown (its default is 1 s), as docs/leave-it-on.md advises for job-wide dumps.
    return dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_ALLOW_RUN_AS_ROOT="1",
                OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_odls_base_sigkill_timeout="10",
                TMPDIR=tmp)


def mpirun(a, parts):
    """`mpirun` with MPMD parts: each (count, capture options, output, app arguments)."""
    cmd = [a.mpirun, "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for i, (n, opts, out, args) in enumerate(parts):
        if i:
            cmd.append(":")
        cmd += ["-np", str(n), a.capture] + opts + ["-o", out, "--", a.app] + args
    return cmd


def start(a, tmp, parts):
    return subprocess.Popen(mpirun(a, parts), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=mpirun_env(tmp))


def steps_in(path):
    db = sqlite3.connect(path)
    rows = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE eventType = 59").fetchall()
    db.close()
    return rows


def skip_without_mpirun(a):
    if not a.mpirun:
        print("mpirun not installed: skipped")
        return True
    return False


# ---------------------------------------------------------------------------------------------


def case_job_trigger(a, tmp):
    """Rank 2's slow step dumps all four ranks as dump 1; their windows share the moment; merge
    of the four names rank 2."""
    if skip_without_mpirun(a):
        return
    stop = os.path.join(tmp, "stop")
    out = os.path.join(tmp, "t.sqlite")
    # The slow step takes 1 s against 2 ms: an absolute bound no preemption reaches.
    opts = ["--flight-recorder=4MB", "--dump-scope=job", "--trigger=step>500ms", "--no-summary"]
    p = start(a, tmp, [(4, opts, out, ["job", tmp, stop, "slow:2:150"])])
    dumps = [os.path.join(tmp, f"t.rank{r}.dump1.sqlite") for r in range(4)]
    wait_for(lambda: all(os.path.exists(d) for d in dumps), "dump 1 of every rank")
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    print(err)
    check(p.returncode == 0, f"mpirun exits 0: {p.returncode}")
    check(len(re.findall(r"rank 2: dump 1 \(job dump started by rank 2: trigger 'step>500ms'", err))
          == 1, "rank 2 started it, once")
    for r in (0, 1, 3):
        check(re.search(rf"rank {r}: dump 1 \(job dump started by rank 2: trigger 'step>500ms'.*"
                        r"seen \d+ ms after the announcement", err) is not None,
              f"rank {r} says who started dump 1 and why")
    # The same moment: every window holds the instant of the slow step's end.
    slow_end = None
    for r, d in enumerate(dumps):
        rows = steps_in(d)
        check(len(rows) > 100, f"rank {r}'s window has steps: {len(rows)}")
        if r == 2:
            slow_end = max((x for x in rows if x[1] is not None), key=lambda x: x[1] - x[0])[1]
    merged = os.path.join(tmp, "job.sqlite")
    m = subprocess.run([a.capture, "merge", "-o", merged] + dumps, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=240)
    check(m.returncode == 0, f"merge: {m.stderr}")
    print(m.stdout, m.stderr)
    check(re.search(r":step: slowest instance on rank 2", m.stdout) is not None,
          f"the cross-rank summary names rank 2's slow step: {m.stdout}")
    db = sqlite3.connect(merged)
    per_rank = db.execute("SELECT globalTid >> 24 & 0xFFFFFF, min(start), max(end) FROM "
                          "NVTX_EVENTS WHERE eventType = 59 GROUP BY 1").fetchall()
    check(len(per_rank) == 4, f"four ranks on the merged timeline: {per_rank}")
    lo = max(x[1] for x in per_rank)
    hi = min(x[2] for x in per_rank)
    check(lo < hi, f"the four windows overlap on the merged timeline: {lo} < {hi}")
    check(slow_end is not None, "the slow step found")
    # A trigger's moment: every rank's window ends 10 ms after the slow step's end (1 ms for the
    # ranks' clocks on the merged timeline), however late each rank dumped.
    slow = db.execute("SELECT end FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY end - start "
                      "DESC LIMIT 1").fetchall()  # rank 2's 1 s step, the longest of all
    if check(len(slow) == 1, "the slow step on the merged timeline"):
        late = [(pid, (end - slow[0][0]) / 1e6) for pid, _, end in per_rank
                if end > slow[0][0] + 11_000_000]
        check(not late, f"no window goes on past 10 ms after the slow step (pid, ms): {late}")


def torchrun_env(rank, size, port):
    """The variables torchrun sets in each rank it starts (its default run id, "none")."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_", "PMI", "SLURM_"))}
    env.update(RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(rank),
               LOCAL_WORLD_SIZE=str(size), GROUP_RANK="0", TORCHELASTIC_RUN_ID="none",
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    return env


def case_job_torchrun(a, tmp):
    """torchrun's ranks are a job (no mpirun needed: two ranks with the variables torchrun sets):
    rank 1's slow step dumps both as dump 1, each file named by its rank; a second job beside it
    (another rendezvous port, the same default run id) is not disturbed."""
    stop = os.path.join(tmp, "stop")
    out = os.path.join(tmp, "t.sqlite")
    other_out = os.path.join(tmp, "other.sqlite")
    opts = ["--flight-recorder=4MB", "--dump-scope=job", "--trigger=step>500ms", "--no-summary"]
    procs = [subprocess.Popen([a.capture] + opts + ["-o", out, "--", a.app, "job", tmp, stop,
                                                    "slow:1:150"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=torchrun_env(r, 2, 29511)) for r in range(2)]
    other_dir = os.path.join(tmp, "other")
    os.mkdir(other_dir)
    procs += [subprocess.Popen([a.capture] + opts + ["-o", other_out, "--", a.app, "job",
                                                     other_dir, stop, "run"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=torchrun_env(r, 2, 29512)) for r in range(2)]
    dumps = [os.path.join(tmp, f"t.rank{r}.dump1.sqlite") for r in range(2)]
    wait_for(lambda: all(os.path.exists(d) for d in dumps), "dump 1 of both ranks")
    open(stop, "w").close()
    errs = []
    for p in procs:
        _, err = p.communicate(timeout=240)
        errs.append(err)
        check(p.returncode == 0, f"a rank exits 0: {p.returncode} {err}")
    check("rank 1: dump 1 (job dump started by rank 1: trigger 'step>500ms'" in errs[1],
          f"rank 1 started it: {errs[1]}")
    check(re.search(r"rank 0: dump 1 \(job dump started by rank 1", errs[0]) is not None,
          f"rank 0 dumped the same moment: {errs[0]}")
    for r, d in enumerate(dumps):
        check(len(steps_in(d)) > 100, f"rank {r}'s window has steps")
    for r, err in enumerate(errs[2:]):
        check("dump 1 (at exit)" in err and "job dump started" not in err,
              f"the other job's rank {r} dumped at its exit only: {err}")


def case_job_sigkill(a, tmp):
    """SIGKILL of one rank's program: the three others dump the same moment (dump 1)."""
    if skip_without_mpirun(a):
        return
    stop = os.path.join(tmp, "stop")
    out = os.path.join(tmp, "t.sqlite")
    opts = ["--flight-recorder=4MB", "--dump-scope=job", "--no-summary"]
    p = start(a, tmp, [(4, opts, out, ["job", tmp, stop, "run"])])
    wait_for(lambda: all(os.path.exists(os.path.join(tmp, f"ready.{r}")) for r in range(4)),
             "every rank warm")
    with open(os.path.join(tmp, "pid.1")) as f:
        os.kill(int(f.read()), signal.SIGKILL)
    dumps = [os.path.join(tmp, f"t.rank{r}.dump1.sqlite") for r in range(4)]
    wait_for(lambda: all(os.path.exists(d) for d in dumps), "dump 1 of every rank")
    open(stop, "w").close()  # the ranks mpirun has not torn down yet end by themselves
    _, err = p.communicate(timeout=240)
    print(err)
    check(p.returncode != 0, "mpirun reports the killed rank")
    for r in (0, 2, 3):
        check(re.search(rf"rank {r}: dump 1 \(job dump started by rank 1: program killed by "
                        r"signal 9", err) is not None, f"rank {r} dumped for rank 1's death")
    for r, d in enumerate(dumps):
        check(len(steps_in(d)) > 50, f"rank {r}'s dump 1 holds its steps")


def case_job_hang(a, tmp):
    """A hang on rank 3 only (the others' timeout is long): four stacks files, one dump number,
    and `stacks` names rank 3."""
    if skip_without_mpirun(a):
        return
    stop = os.path.join(tmp, "stop")
    out = os.path.join(tmp, "t.sqlite")
    base = ["--flight-recorder=4MB", "--dump-scope=job", "--no-summary"]
    # Rank 3 gets stuck last (its timeout counts from there): every rank is inside its ranges
    # by the time it hangs, however late the loaded machine started them.
    p = start(a, tmp, [(3, base + ["--hang-timeout=10m"], out,
                        ["job", tmp, stop, "stuck:allreduce"]),
                       (1, base + ["--hang-timeout=500ms"], out,
                        ["job", tmp, stop, "stuck_last:forward"])])
    files = [os.path.join(tmp, f"t.rank{r}.stacks.txt") for r in range(4)]
    dumps = [os.path.join(tmp, f"t.rank{r}.dump1.sqlite") for r in range(4)]
    wait_for(lambda: all(os.path.exists(f) and os.path.getsize(f) > 0 for f in files + dumps),
             "four stacks reports and four dumps")
    g = subprocess.run([a.capture, "stacks"] + files, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    print(g.stdout)
    check(g.returncode == 0, g.stderr)
    check("ranks 0-2: step > allreduce" in g.stdout and "rank 3: step > forward" in g.stdout,
          f"groups the ranks: {g.stdout}")
    check("rank 3 differs" in g.stdout, f"names the rank that differs: {g.stdout}")
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    print(err)
    check(p.returncode == 0, f"mpirun exits 0: {p.returncode}")
    check(re.search(r"rank 0: dump 1 \(job dump started by rank 3: hang", err) is not None,
          "rank 0 dumped for rank 3's hang")
    check("dump 2 (job dump" not in err, f"one job dump only: {err}")


def case_job_two_jobs(a, tmp):
    """Two jobs writing to one directory never trigger each other."""
    if skip_without_mpirun(a):
        return
    d1, d2 = os.path.join(tmp, "j1"), os.path.join(tmp, "j2")
    os.mkdir(d1)
    os.mkdir(d2)
    stop1, stop2 = os.path.join(tmp, "stop1"), os.path.join(tmp, "stop2")
    opts = ["--flight-recorder=4MB", "--dump-scope=job", "--trigger=step>500ms", "--no-summary"]
    quiet = start(a, tmp, [(2, opts, os.path.join(tmp, "q.sqlite"), ["job", d2, stop2, "run"])])
    wait_for(lambda: all(os.path.exists(os.path.join(d2, f"ready.{r}")) for r in range(2)),
             "the quiet job warm")
    loud = start(a, tmp, [(2, opts, os.path.join(tmp, "l.sqlite"),
                           ["job", d1, stop1, "slow:1:150"])])
    wait_for(lambda: all(os.path.exists(os.path.join(tmp, f"l.rank{r}.dump1.sqlite"))
                         for r in range(2)), "the loud job's dump 1 on both ranks")
    open(stop1, "w").close()
    _, err1 = loud.communicate(timeout=240)
    open(stop2, "w").close()
    _, err2 = quiet.communicate(timeout=240)
    check(loud.returncode == 0 and quiet.returncode == 0, f"both exit 0: {err1} {err2}")
    check("job dump" not in err2, f"the quiet job dumped only at its exit: {err2}")
    check(not os.path.exists(os.path.join(tmp, "q.rank0.dump2.sqlite")),
          "the quiet job has its exit dump only")
    check(not [f for f in os.listdir(tmp) if f.startswith(".nvtxpp-job-")],
          f"no meeting directory left: {os.listdir(tmp)}")


def case_job_bad_input(a, tmp):
    """--dump-scope without --flight-recorder, an unknown scope: exit 2 before the program runs;
    no job in the environment: a warning, and the process dumps alone."""
    marker = os.path.join(tmp, "ran")
    for opts, want in ((["--dump-scope=job"], "need --flight-recorder"),
                       (["--flight-recorder=1MB", "--dump-scope=world"], "--dump-scope")):
        p = subprocess.run([a.capture] + opts + ["-o", os.path.join(tmp, "t.json"), "--", a.app,
                                                 "touch", marker],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 2 and want in p.stderr, f"{opts}: exit 2, '{want}': {p.stderr}")
        check(not os.path.exists(marker), f"{opts}: the program did not run")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "SLURM_"))}
    p = subprocess.run([a.capture, "--flight-recorder=1MB", "--dump-scope=job", "--no-summary",
                        "-o", os.path.join(tmp, "s.json"), "--", a.app, "steps", "50"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    check(p.returncode == 0 and "no multi-rank job" in p.stderr and "dump 1 (at exit)" in p.stderr,
          f"alone, said: {p.stderr}")
    # A launcher's environment only partly set (RANK and torchrun's run id, no WORLD_SIZE): no
    # job either, said the same way; the file keeps its plain name.
    env.update(RANK="1", TORCHELASTIC_RUN_ID="none")
    env.pop("WORLD_SIZE", None)
    p = subprocess.run([a.capture, "--flight-recorder=1MB", "--dump-scope=job", "--no-summary",
                        "-o", os.path.join(tmp, "r.json"), "--", a.app, "steps", "50"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    check(p.returncode == 0 and "no multi-rank job" in p.stderr and
          os.path.exists(os.path.join(tmp, "r.dump1.json")),
          f"RANK without WORLD_SIZE: alone, said, plain name: {p.stderr} {os.listdir(tmp)}")


if __name__ == "__main__":
    sys.exit(ft.main(globals()))
