#!/usr/bin/env python3
"""nvtxpp-capture at scale: multi-rank launches (mpirun, or the launchers' rank variables set by
hand), output-name patterns, two launchers on one name, capture windows (--capture-range,
--delay, --duration) and NVTX domain filters. Traces are read with `json` (and `sqlite3`).

usage: scale_tests.py CASE --capture PATH --app PATH [--mpirun PATH] [--fake-cupti PATH]
Exit status 0 = pass; failures print what differed.
"""
import argparse
import glob
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile

failures = []

RANK_VARS = ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK",
             "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS", "OMPI_COMM_WORLD_LOCAL_RANK",
             "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID",
             "MASTER_ADDR", "MASTER_PORT", "NVTXPP_LAUNCHER_RANK"]
# The variables torchrun sets in each rank it starts (the rank's own added by torch_env).
TORCHRUN = {"WORLD_SIZE": 2, "LOCAL_WORLD_SIZE": 2, "TORCHELASTIC_RUN_ID": "none",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": 29500}


def torch_env(rank):
    return dict(TORCHRUN, RANK=rank, LOCAL_RANK=rank)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def clean_env(**extra):
    """The environment without any launcher's rank variables (ctest may itself run under one)."""
    env = {k: v for k, v in os.environ.items() if k not in RANK_VARS}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(a, args, *, out=None, extra=(), env=None, cwd=None, timeout=120):
    cmd = [a.capture, "--no-summary"] + list(extra) + (["-o", out] if out else [])
    cmd += ["--", a.app] + list(args)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env if env is not None else clean_env(), cwd=cwd, timeout=timeout)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def ranges(trace):
    return sorted(e["name"] for e in trace["traceEvents"] if e["ph"] == "X")


def names(trace, ph):
    return sorted(e["name"] for e in trace["traceEvents"] if e["ph"] == ph)


def pids(trace):
    return {e["pid"] for e in trace["traceEvents"] if e["ph"] == "X"}


# ------------------------------------------------------------------------------------------------
# Output names

def case_patterns(a, tmp):
    """%p is the program's pid, %h the host name, %q{VAR} a variable, %% a percent sign."""
    p = run(a, ["rank"], out=os.path.join(tmp, "t.%p.%h.%q{WHO}.%%.json"),
            env=clean_env(WHO="me"))
    check(p.returncode == 0, f"exit 0, got {p.returncode}: {p.stderr}")
    pid = int(p.stdout.split()[1])
    want = os.path.join(tmp, f"t.{pid}.{socket.gethostname()}.me.%.json")
    check(os.path.exists(want), f"{want} written; the directory holds {os.listdir(tmp)}")
    if os.path.exists(want):
        check(pids(load(want)) == {pid}, "the trace's process is the pid in the name")
        check(ranges(load(want)) == ["rank ? of ?"], f"its range: {ranges(load(want))}")
    check(f"written to {want}" in p.stderr, f"the final name is said on stderr: {p.stderr}")
    # --convert: %p is the recording's (first) process.
    raw = os.path.join(tmp, "raw")
    p = run(a, ["rank"], out=os.path.join(tmp, "k.json"), extra=["--keep-raw", raw])
    pid = int(p.stdout.split()[1])
    c = subprocess.run([a.capture, "--convert", raw, "-o", os.path.join(tmp, "c.%p.json"),
                        "--no-summary"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=clean_env())
    check(c.returncode == 0, f"--convert exits 0: {c.stderr}")
    check(os.path.exists(os.path.join(tmp, f"c.{pid}.json")), f"--convert's %p: {os.listdir(tmp)}")


def case_pattern_errors(a, tmp):
    """A bad pattern is exit 2 before the program starts (it never runs)."""
    marker = os.path.join(tmp, "ran")
    for pattern, words in [("x.%q{NVTXPP_TEST_UNSET}.json", "NVTXPP_TEST_UNSET is not set"),
                           ("x.%z.json", "unknown pattern %z"), ("x%", "lone '%'"),
                           ("x.%q.json", "%q takes a variable"), ("x.%q{}.json", "%q takes")]:
        cmd = [a.capture, "-o", os.path.join(tmp, pattern), "--", "/bin/sh", "-c",
               f"touch {marker}"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=clean_env())
        check(p.returncode == 2, f"{pattern}: exit 2, got {p.returncode}")
        check(words in p.stderr, f"{pattern}: stderr says {words!r}: {p.stderr!r}")
        check(not os.path.exists(marker), f"{pattern}: the program did not run")
    check(os.listdir(tmp) == [], f"no file written: {os.listdir(tmp)}")


def case_ranks_env(a, tmp):
    """Each launcher's rank variables, set by hand: the rank goes before the extension, unless
    the pattern tells ranks apart or the name holds the rank already; a size of 1 is no
    multi-rank launch."""
    launchers = [
        ({"OMPI_COMM_WORLD_RANK": 3, "OMPI_COMM_WORLD_SIZE": 4}, "OMPI_COMM_WORLD_RANK"),
        ({"PMI_RANK": 2, "PMI_SIZE": 3}, "PMI_RANK"),
        ({"PMIX_RANK": 5, "SLURM_NTASKS": 8}, "PMIX_RANK"),
        ({"SLURM_PROCID": 1, "SLURM_NTASKS": 2}, "SLURM_PROCID"),
        (torch_env(1), "RANK"),
        # torchrun under srun: Slurm's variables number the torchruns, torchrun's the ranks
        (dict(torch_env(1), SLURM_PROCID=0, SLURM_NTASKS=2), "RANK"),
        ({"RANK": 1, "WORLD_SIZE": 4}, "RANK"),  # DeepSpeed's launcher: no run id
    ]
    for i, (env, var) in enumerate(launchers):
        rank = env[var]
        out = os.path.join(tmp, f"l{i}.json")
        p = run(a, ["rank"], out=out, env=clean_env(**env))
        want = os.path.join(tmp, f"l{i}.rank{rank}.json")
        check(p.returncode == 0 and os.path.exists(want), f"{var}: {want} written: {p.stderr}")
        check(f"rank {rank} of" in p.stderr and var in p.stderr, f"{var}: said on stderr")
        check(not os.path.exists(out), f"{var}: no file under the plain name")
    # SQLite and a name without extension
    p = run(a, ["rank"], out=os.path.join(tmp, "noext"),
            env=clean_env(OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=2))
    check(os.path.exists(os.path.join(tmp, "noext.rank1")), f"no extension: {os.listdir(tmp)}")
    # Patterns that tell ranks apart are kept as they are.
    env = clean_env(OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=2)
    for pattern in ["r%q{OMPI_COMM_WORLD_RANK}.json", "p%p.json"]:
        p = run(a, ["rank"], out=os.path.join(tmp, pattern), env=env)
        check("rank 1 of" not in p.stderr, f"{pattern}: no rank inserted: {p.stderr}")
    check(os.path.exists(os.path.join(tmp, "r1.json")), f"%q{{rank}}: {os.listdir(tmp)}")
    # A name that already holds this rank's tag (a wrapper script's) is kept; rank11 is not rank1.
    for given, want in [("w.rank1.json", "w.rank1.json"), ("w_rank1", "w_rank1"),
                        ("w.rank11.json", "w.rank11.rank1.json")]:
        p = run(a, ["rank"], out=os.path.join(tmp, given), env=env)
        check(p.returncode == 0 and os.path.exists(os.path.join(tmp, want)),
              f"{given}: {want} written: {os.listdir(tmp)} {p.stderr}")
    # Size 1 (a singleton run) and a size variable that is not a number: plain name.
    for env in [{"OMPI_COMM_WORLD_RANK": 0, "OMPI_COMM_WORLD_SIZE": 1},
                {"SLURM_PROCID": 0, "SLURM_NTASKS": "x"},
                {"RANK": 1}, {"RANK": 1, "TORCHELASTIC_RUN_ID": "none"},  # partly set
                {"RANK": 0, "WORLD_SIZE": 1}]:
        p = run(a, ["rank"], out=os.path.join(tmp, "single.json"), env=clean_env(**env))
        check(os.path.exists(os.path.join(tmp, "single.json")) and "rank" not in p.stderr.split(
            "written")[0], f"{env}: plain name: {p.stderr}")


def case_torchrun_one_trace(a, tmp):
    """`nvtxpp-capture -o t.json -- torchrun ...`: one trace of the launcher's processes, each
    rank's labelled with its rank (a stand-in launcher starts two ranks with the variables
    torchrun sets); in SQLite too."""
    script = ("import os, subprocess, sys\n"
              "app = sys.argv[1]\n"
              "ps = [subprocess.Popen([app, 'rank'], env=dict(os.environ, RANK=str(r), "
              "LOCAL_RANK=str(r), WORLD_SIZE='2', LOCAL_WORLD_SIZE='2', "
              "TORCHELASTIC_RUN_ID='none', MASTER_ADDR='127.0.0.1', MASTER_PORT='29500')) "
              "for r in range(2)]\n"
              "sys.exit(max(p.wait() for p in ps))\n")
    names = {}
    for ext in ("json", "sqlite"):
        out = os.path.join(tmp, "t." + ext)
        cmd = [a.capture, "--no-summary", "-o", out, "--", sys.executable, "-c", script, a.app]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=clean_env(), timeout=120)
        if ext == "sqlite" and "SQLite" in p.stderr and not os.path.exists(out):
            print("no SQLite in this build: the SQLite half skipped")
            continue
        check(p.returncode == 0 and os.path.exists(out), f"{ext}: exit 0: {p.stderr}")
        check("rank 0 of" not in p.stderr and not os.path.exists(os.path.join(tmp, f"t.rank0.{ext}")),
              f"{ext}: one output, under its plain name: {os.listdir(tmp)}")
        if ext == "json":
            names[ext] = sorted(e["args"]["name"] for e in load(out)["traceEvents"]
                                if e.get("ph") == "M" and e.get("name") == "process_name")
        else:
            import sqlite3
            db = sqlite3.connect(out)
            names[ext] = sorted(r[0] for r in db.execute("SELECT name FROM PROCESSES") if r[0])
        ranked = [n for n in names[ext] if n.startswith(("rank 0: ", "rank 1: "))]
        check(len(ranked) == 2 and ranked[0].startswith("rank 0: ") and
              ranked[1].startswith("rank 1: ") and all(" rank" in n for n in ranked),
              f"{ext}: each rank's process labelled with its rank: {names[ext]}")


def case_torchrun_per_rank(a, tmp):
    """`torchrun --no-python ... nvtxpp-capture -o t.json -- app`: each rank's capture writes
    its own file, named by its rank, and records the rank for merge (from RANK); its process
    needs no label of its own."""
    out = os.path.join(tmp, "t.json")
    for r in range(2):
        p = run(a, ["rank"], out=out, env=clean_env(**torch_env(r)))
        check(p.returncode == 0 and f"rank {r} of 2 (RANK)" in p.stderr,
              f"rank {r}: named by its rank, said: {p.stderr}")
    files = [os.path.join(tmp, f"t.rank{r}.json") for r in range(2)]
    check(all(os.path.exists(f) for f in files), f"t.rank0.json, t.rank1.json: {os.listdir(tmp)}")
    titles = [e["args"]["name"] for f in files if os.path.exists(f)
              for e in load(f)["traceEvents"] if e.get("name") == "process_name"]
    check(titles and not any(t.startswith("rank ") for t in titles),
          f"no per-process label where the file is the rank's: {titles}")
    m = subprocess.run([a.capture, "merge", "-o", os.path.join(tmp, "m.json")] + files,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    check(m.returncode == 0 and m.stderr.count("(from RANK)") == 2,
          f"merge takes each file's rank from RANK: {m.stderr}")


def run_mpi(a, tmp, out, n=4):
    cmd = [a.mpirun, "--oversubscribe", "-np", str(n)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [a.capture, "--no-summary", "-o", out, "--", a.app, "rank"]
    # Root (containers, CI): the flag above, and Open MPI's variables for versions that want them.
    env = clean_env(OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_ALLOW_RUN_AS_ROOT="1",
                    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, cwd=tmp, timeout=240)


def case_mpirun_ranks(a, tmp):
    """mpirun -np 4 nvtxpp-capture -o x.json: four files, each with its own rank's range."""
    p = run_mpi(a, tmp, "x.json")
    check(p.returncode == 0, f"mpirun exits 0, got {p.returncode}: {p.stderr}")
    files = sorted(glob.glob(os.path.join(tmp, "x*.json")))
    want = [os.path.join(tmp, f"x.rank{r}.json") for r in range(4)]
    check(files == want, f"four per-rank files, got {files}")
    seen_pids = set()
    for r, f in enumerate(want):
        if os.path.exists(f):
            t = load(f)
            check(ranges(t) == [f"rank {r} of 4"], f"{f} holds rank {r}'s range: {ranges(t)}")
            seen_pids |= pids(t)
    check(len(seen_pids) == 4, f"four processes: {seen_pids}")


def case_mpirun_pattern(a, tmp):
    """nsys's own pattern: -o report.%q{OMPI_COMM_WORLD_RANK}.sqlite-style names."""
    p = run_mpi(a, tmp, "r%q{OMPI_COMM_WORLD_RANK}.json")
    check(p.returncode == 0, f"mpirun exits 0: {p.stderr}")
    check("rank 0 of" not in p.stderr, "no rank inserted")
    for r in range(4):
        f = os.path.join(tmp, f"r{r}.json")
        check(os.path.exists(f) and ranges(load(f)) == [f"rank {r} of 4"], f"{f}: rank {r}")


# ------------------------------------------------------------------------------------------------
# Collisions

def collide(a, tmp, name, reader):
    """Two launchers on one name at once: the first holds it while its program runs (a FIFO
    keeps it running until the second has finished); the second writes another name."""
    fifo = os.path.join(tmp, "hold")
    os.mkfifo(fifo)
    out = os.path.join(tmp, name)
    env = clean_env(OMPI_COMM_WORLD_RANK=0)  # a rank without size: no multi-rank launch
    first = subprocess.Popen([a.capture, "--no-summary", "-o", out, "--", "/bin/sh", "-c",
                              f"{a.app} rank && read x < {fifo}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # The first launcher has claimed the name once its program runs: its pid line is printed.
    first_pid = first.stdout.readline().split()
    second = run(a, ["rank"], out=out, env=env)
    with open(fifo, "w") as f:
        f.write("go\n")
    rest, err1 = first.communicate(timeout=120)
    check(first.returncode == 0, f"first launcher exits 0: {err1}")
    check(second.returncode == 0, f"second launcher exits 0: {second.stderr}")
    second_pid = int(second.stdout.split()[1])
    stem, ext = os.path.splitext(out)
    other = f"{stem}.pid{second_pid}{ext}"
    check(f"{out} is being written by another nvtxpp-capture; this one writes {other}"
          in second.stderr, f"the second says where it writes: {second.stderr!r}")
    check(f"written to {out}" in err1, f"the first writes {out}: {err1!r}")
    for path, pid in [(out, int(first_pid[1])), (other, second_pid)]:
        check(os.path.exists(path), f"{path} exists")
        if os.path.exists(path):
            got = reader(path)
            check(got == (pid, ["rank 0 of ?"]), f"{path} holds its own process's range: {got}")


def case_collision(a, tmp):
    def reader(path):
        t = load(path)
        return (next(iter(pids(t)), None), ranges(t))
    collide(a, tmp, "same.json", reader)
    # A later run (no live holder) overwrites as before.
    p = run(a, ["rank"], out=os.path.join(tmp, "same.json"))
    check("another nvtxpp-capture" not in p.stderr, f"a finished run holds nothing: {p.stderr}")


def case_collision_sqlite(a, tmp):
    def reader(path):
        db = sqlite3.connect(path)
        try:
            rows = db.execute("SELECT s.value, e.globalTid FROM NVTX_EVENTS e JOIN StringIds s "
                              "ON e.textId = s.id WHERE e.eventType = 59").fetchall()
            texts = sorted(r[0] for r in rows)
            tids = {r[1] for r in rows}
            pid = next(iter(tids)) >> 24 & 0xFFFFFF if tids else None
            return (pid, texts)
        finally:
            db.close()
    collide(a, tmp, "same.sqlite", reader)


# ------------------------------------------------------------------------------------------------
# Capture windows

def case_window_nvtx(a, tmp):
    """--capture-range=nvtx --nvtx-capture=capture: only ranges begun inside the first "capture"
    range (itself included); ranges begun inside keep their ends after it; ranges begun before
    it are dropped with their ends (no unbalanced-pop warning)."""
    out = os.path.join(tmp, "w.json")
    p = run(a, ["nvtx", "2"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capture"])
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    t = load(out)
    check(ranges(t) == sorted(["capture", "inside 0", "a: inside", "b: begun inside, ended after"]),
          f"ranges of the first window only: {ranges(t)}")
    check(names(t, "i") == ["mark inside 0"], f"marks inside only: {names(t, 'i')}")
    check(names(t, "b") == ["started inside 0"] and names(t, "e") == ["started inside 0"],
          f"the start/end begun inside is whole: {names(t, 'b')} {names(t, 'e')}")
    check(t["otherData"]["warning_counts"] == {},
          f"no warnings (no unbalanced pops): {t['otherData']['warnings']}")


def case_window_nvtx_repeat(a, tmp):
    out = os.path.join(tmp, "w.json")
    p = run(a, ["nvtx", "3"], out=out, extra=["--capture-range", "nvtx", "--nvtx-capture",
                                              "capture", "--capture-range-end=repeat:2"])
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    t = load(out)
    r = ranges(t)
    check(r.count("capture") == 2 and "inside 0" in r and "inside 1" in r and "inside 2" not in r,
          f"two windows of three: {r}")
    check(not any(n.startswith(("before", "after")) for n in r), f"nothing outside: {r}")
    p = run(a, ["nvtx", "3"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capture",
                                              "--capture-range-end=repeat"])
    check(ranges(load(out)).count("capture") == 3, f"repeat without N: every window")


def case_window_nvtx_none(a, tmp):
    """--capture-range-end=none: from the trigger to the end of the run."""
    out = os.path.join(tmp, "w.json")
    run(a, ["nvtx", "2"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capture",
                                          "--capture-range-end=none"])
    r = ranges(load(out))
    check("before 0" not in r and "after 0" in r and "before 1" in r and "inside 1" in r,
          f"everything from the first trigger on: {r}")


def case_window_nvtx_domain(a, tmp):
    """RANGE@DOMAIN: the trigger in another domain does not open the window; RANGE@* does."""
    out = os.path.join(tmp, "w.json")
    run(a, ["nvtx", "1"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capture@a"])
    check(ranges(load(out)) == [], f"capture@a: no window: {ranges(load(out))}")
    run(a, ["nvtx", "1"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capture@*"])
    check("capture" in ranges(load(out)), f"capture@*: a window: {ranges(load(out))}")
    run(a, ["nvtx", "1"], out=out,
        extra=["--capture-range=nvtx", "--nvtx-capture=a: inside@a", "--capture-range-end=none"])
    r = ranges(load(out))
    check(r[0:1] == ["a: inside"] and "inside 0" not in r and "after 0" in r,
          f"a range of domain a opens it: {r}")


def case_window_nvtx_registered(a, tmp):
    """The trigger as a registered string (capture@reg) and as a wide string (capture, default
    domain, with repeat)."""
    out = os.path.join(tmp, "w.json")
    run(a, ["registered"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capture@reg"])
    check(ranges(load(out)) == ["capture", "inside registered"],
          f"registered trigger: {ranges(load(out))}")
    run(a, ["registered"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capture"])
    check(ranges(load(out)) == ["capture", "inside wide"], f"wide trigger: {ranges(load(out))}")


def case_window_nvtx_pattern(a, tmp):
    """--nvtx-capture with patterns: the window opens at the first range that matches (an inline
    text: "inside 0", not the "capture" around it); a pattern on a registered string and on the
    domain (capt*@re?); on a wide string (c?pture, default domain)."""
    out = os.path.join(tmp, "w.json")
    p = run(a, ["nvtx", "2"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=inside *",
                                              "--capture-range-end=none"])
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    r = ranges(load(out))
    check("inside 0" in r and "before 0" not in r and "after 0" in r and "inside 1" in r,
          f"from the first matching range on: {r}")
    check(r.count("capture") == 1, f"the first 'capture' began before the window: {r}")
    run(a, ["registered"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capt*@re?"])
    check(ranges(load(out)) == ["capture", "inside registered"],
          f"registered string, domain pattern: {ranges(load(out))}")
    run(a, ["registered"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=c?pture"])
    check(ranges(load(out)) == ["capture", "inside wide"], f"wide string: {ranges(load(out))}")
    run(a, ["nvtx", "1"], out=out, extra=["--capture-range=nvtx", "--nvtx-capture=capture@[b-z]*"])
    check(ranges(load(out)) == [], f"a domain pattern the default domain does not match: "
          f"{ranges(load(out))}")


def case_domains_pattern(a, tmp):
    """Domain filters take patterns; `default` and escapes mean what they meant."""
    out = os.path.join(tmp, "d.json")
    p = run(a, ["domains"], out=out, extra=["--nvtx-domain-exclude=dr*,de\\,*"])
    check(ranges(load(out)) == ["in default", "in keep"], f"dr*, de\\,*: {ranges(load(out))}")
    check("enabled drop 0" in p.stdout and "enabled keep 1" in p.stdout, p.stdout)
    run(a, ["domains"], out=out, extra=["--nvtx-domain-include=k?ep"])
    check(ranges(load(out)) == ["in keep"], f"k?ep: {ranges(load(out))}")
    run(a, ["domains"], out=out, extra=["--nvtx-domain-include=*"])
    check(ranges(load(out)) == ["in de,fault", "in drop", "in keep"],
          f"* is every named domain, not the default one: {ranges(load(out))}")


def ticks(stdout, who="tick"):
    out = {}
    for line in stdout.splitlines():
        if line.startswith(who + " "):
            _, i, push, pop = line.split()
            out[f"tick {i}"] = (int(push), int(pop))
    return out


def check_time_window(t, all_ticks, pid, delay, duration, who):
    """The window of one process: never early (deterministic): no range that ended before the
    delay, none recorded that began after the first window's start plus the duration plus a
    margin for a late timer thread; the recorded ticks are one unbroken run."""
    base = t["otherData"]["base_ns"]  # CLOCK_MONOTONIC at the launch: the delay counts from it
    got = [e for e in t["traceEvents"] if e["ph"] == "X" and e["pid"] == pid
           and e["name"].startswith("tick ")]
    names_got = {e["name"] for e in got}
    check(len(got) > 0, f"{who}: some ticks are recorded")
    order = sorted(all_ticks, key=lambda n: all_ticks[n][0])
    flags = [n in names_got for n in order]
    if True in flags:
        first = flags.index(True)
        last = len(flags) - 1 - flags[::-1].index(True)
        check(all(flags[first:last + 1]), f"{who}: the recorded ticks are one unbroken run")
        check(all_ticks[order[first]][1] >= base + delay * 1e9,
              f"{who}: no tick that ended before the delay is recorded")
        start = min(e["ts"] for e in got) * 1000 + base
        check(all_ticks[order[last]][0] <= start + duration * 1e9 + 0.5e9,
              f"{who}: nothing long after the duration is recorded")


def case_window_time(a, tmp):
    """--delay / --duration (check_time_window)."""
    out = os.path.join(tmp, "w.json")
    delay, duration = 0.3, 0.6
    p = run(a, ["time", str(delay + duration + 0.4)], out=out,
            extra=[f"--delay={delay}", f"--duration={duration}"])
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    t = load(out)
    check_time_window(t, ticks(p.stdout), next(iter(pids(t)), None), delay, duration, "process")
    check("enabled at start 0" in p.stdout,
          "nvtxDomainIsEnabled answers 0 before the delay (no trigger to watch for)")


def case_window_time_fork(a, tmp):
    """The same in a forked child (its own timer thread, the launch's deadlines) and its parent;
    the range before the fork (inside the delay) is in neither."""
    out = os.path.join(tmp, "w.json")
    delay, duration = 0.3, 0.6
    env = clean_env()
    if "TSAN_OPTIONS" in env:
        # The child starts its timer thread: ThreadSanitizer refuses new threads after a fork of
        # a multi-threaded process unless told to go on.
        env["TSAN_OPTIONS"] += ":die_after_fork=0"
    p = run(a, ["fork_time", str(delay + duration + 0.4)], out=out,
            extra=[f"--delay={delay}", f"--duration={duration}"], env=env)
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    t = load(out)
    procs = {e["pid"] for e in t["traceEvents"] if e["ph"] == "M"}
    check(len(procs) == 2, f"two processes: {procs}")
    check("before fork" not in ranges(t), "the range before the delay is not recorded")
    by_pid = {}
    for e in t["traceEvents"]:
        if e["ph"] == "X":
            by_pid.setdefault(e["pid"], set()).add(e["name"])
    parent_ticks, child_ticks = ticks(p.stdout, "tick"), ticks(p.stdout, "child")
    for pid in procs:
        # Both print "tick N": a process's ranges are told by its pid in the trace.
        mine = child_ticks if f"forked {pid}" in p.stdout else parent_ticks
        check_time_window(t, mine, pid, delay, duration, f"pid {pid}")


def case_window_options(a, tmp):
    """Bad capture options: exit 2 before the program starts."""
    for extra, words in [(["--capture-range=sometimes"], "none, cudaProfilerApi or nvtx"),
                         (["--capture-range=nvtx"], "needs --nvtx-capture"),
                         (["--nvtx-capture=x"], "needs --capture-range=nvtx"),
                         (["--capture-range-end=repeat:0"], "count N of 1 or more"),
                         (["--capture-range-end=stop-shutdown"], "not supported"),
                         (["--delay=-1"], "takes seconds"), (["--duration=0"], "more than 0"),
                         (["--duration=soon"], "takes seconds"),
                         (["--nvtx-domain-include=a", "--nvtx-domain-exclude=b"], "together"),
                         (["--capture-range=nvtx", "--nvtx-capture=step [1-"],
                          "--nvtx-capture 'step [1-': pattern 'step [1-': the '[' at position 6 "
                          "has no closing ']'"),
                         (["--capture-range=nvtx", "--nvtx-capture=step@[z-a]"], "is reversed"),
                         (["--nvtx-domain-exclude=keep,[x"], "--nvtx-domain-exclude 'keep,[x'"),
                         (["--capture-range=cudaProfilerApi", "--cuda=off"], "not with --cuda=off")]:
        p = run(a, ["rank"], out=os.path.join(tmp, "o.json"), extra=extra)
        check(p.returncode == 2 and words in p.stderr, f"{extra}: exit 2 saying {words!r}: "
              f"{p.returncode} {p.stderr!r}")
        check("pid" not in p.stdout, f"{extra}: the program did not run")


def case_domains_exclude(a, tmp):
    out = os.path.join(tmp, "d.json")
    p = run(a, ["domains"], out=out, extra=["--nvtx-domain-exclude=drop,de\\,fault"])
    t = load(out)
    check(all(f"enabled {n}" in p.stdout for n in ["keep 1", "drop 0", "de,fault 0", "default 1"]),
          f"nvtxDomainIsEnabled answers 0 for excluded domains: {p.stdout}")
    check(ranges(t) == ["in default", "in keep"], f"drop and 'de,fault' excluded: {ranges(t)}")
    check(names(t, "i") == ["in keep"] and names(t, "b") == ["in keep"], "marks and start/end too")
    run(a, ["domains"], out=out, extra=["--nvtx-domain-exclude=default"])
    check(ranges(load(out)) == ["in de,fault", "in drop", "in keep"],
          f"default excluded: {ranges(load(out))}")


def case_domains_include(a, tmp):
    out = os.path.join(tmp, "d.json")
    run(a, ["domains"], out=out, extra=["--nvtx-domain-include=keep,default"])
    check(ranges(load(out)) == ["in default", "in keep"], f"keep+default: {ranges(load(out))}")
    run(a, ["domains"], out=out, extra=["--nvtx-domain-include=keep"])
    check(ranges(load(out)) == ["in keep"], f"keep only: {ranges(load(out))}")


def run_fake(a, tmp, extra, app_args=("profiler",), stdout=None):
    out = os.path.join(tmp, "g.json")
    env = clean_env(NVTXPP_CUPTI_PATH=a.fake_cupti)
    p = run(a, list(app_args), out=out, extra=["--cuda=on"] + extra, env=env)
    check(p.returncode == 0, f"exit 0: {p.returncode} {p.stderr}")
    if stdout is not None:
        stdout.append(p.stdout)
    return load(out) if os.path.exists(out) else {"traceEvents": []}


def kernels(t):
    return [e for e in t["traceEvents"] if e["ph"] == "X" and e["name"] == "fake(int *)"]


def nvtx_ranges(t):
    return sorted(e["name"] for e in t["traceEvents"]
                  if e["ph"] == "X" and "domain" in e.get("args", {}))


def case_window_cuda(a, tmp):
    """--capture-range=cudaProfilerApi: NVTX and GPU activity between cuProfilerStart and
    cuProfilerStop only (the test double of CUPTI records a kind only while it is enabled).
    CUPTI stays attached until the window opens (a detach would drop the subscriber that sees
    cuProfilerStart until our thread subscribes again: a start in between was lost, with its
    window), and detaches once the window that ends the capture closed."""
    said = []
    t = run_fake(a, tmp, ["--capture-range=cudaProfilerApi"], ("profiler", "wait_detach"), said)
    check("detached before the window: 0\n" in said[0], f"attached until the start: {said}")
    check("detached after the window: 1\n" in said[0], f"detached after the stop: {said}")
    check(nvtx_ranges(t) == ["profiled"], f"NVTX: only 'profiled': {nvtx_ranges(t)}")
    check(len(kernels(t)) == 2, f"the two kernels launched inside: {len(kernels(t))}")
    api = [e for e in t["traceEvents"] if e["ph"] == "X" and e["name"] == "cudaLaunchKernel"]
    check(len(api) == 2, f"their two API calls: {len(api)}")
    everything = run_fake(a, tmp, [])
    check(len(kernels(everything)) == 4, f"without the option all four: {len(kernels(everything))}")
    check(len(nvtx_ranges(everything)) == 5, f"and all NVTX ranges: {nvtx_ranges(everything)}")


def case_window_cuda_nvtx(a, tmp):
    """An NVTX window turns GPU recording on and off too: the kernels launched inside the range
    "profiled" only."""
    t = run_fake(a, tmp, ["--capture-range=nvtx", "--nvtx-capture=profiled"])
    check(nvtx_ranges(t) == ["profiled"], f"NVTX: only 'profiled': {nvtx_ranges(t)}")
    check(len(kernels(t)) == 2, f"the two kernels launched inside: {len(kernels(t))}")


def case_window_cuda_repeat(a, tmp):
    said = []
    t = run_fake(a, tmp, ["--capture-range=cudaProfilerApi", "--capture-range-end=repeat"],
                 stdout=said)
    check(nvtx_ranges(t) == ["profiled", "second window"], f"both windows: {nvtx_ranges(t)}")
    check("detached before the window: 0\n" in said[0], f"attached between windows: {said}")
    check(len(kernels(t)) == 2, f"no kernel outside: {len(kernels(t))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--mpirun", default="")
    ap.add_argument("--fake-cupti", default="")
    a = ap.parse_args()
    fn = globals().get("case_" + a.case)
    if fn is None:
        print("unknown case", a.case, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        fn(a, tmp)
    if failures:
        print(f"{len(failures)} failure(s) in {a.case}", file=sys.stderr)
        return 1
    print(f"{a.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
