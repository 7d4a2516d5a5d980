#!/usr/bin/env python3
"""The sampled GPU mode (--cuda-sample, --cuda-raise; docs/leave-it-on-gpu.md) without a GPU,
through the test double of CUPTI (fake_cupti.cpp), which records a launch only while its
activity kinds are enabled, as CUPTI does.

usage: sample_tests.py CASE --capture PATH --app PATH(capture_app) --fake-cupti PATH
The program's steps are NVTX ranges with a mark "launch N" right before each launch: NVTX is
recorded all the time, so the marks say which launches fell in a sampled period. The tests wait
for conditions (files), never for time. Exit status 0 = pass.
"""
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flight_tests as ft  # noqa: E402  (check, wait_for, child_of, load, failures, main)

check, wait_for = ft.check, ft.wait_for
EDGE_US = 1000  # launches this near a period's edge may fall either side of it


def run_steps(a, tmp, extra, out, steps=60, step_us=10000, env_extra=None):
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti, APP_STEPS=str(steps),
               APP_STEP_US=str(step_us))
    env.update(env_extra or {})
    cmd = [a.capture] + extra + ["-o", out, "--", a.app, "fake_gpu", "sample_steps"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=240)
    check(p.returncode == 0, f"exit 0, got {p.returncode}: {p.stderr}")
    return p


def periods(events, name=None):
    """The GPU detail periods of a JSON trace: (start, end, name) by start, in us."""
    begin = {}
    out = []
    for e in events:
        if e.get("cat") != "nvtxpp-capture" or not e.get("name", "").startswith("GPU detail: "):
            continue
        if e["ph"] == "b":
            begin[e["id"]] = e
        elif e["ph"] == "e" and e["id"] in begin:
            b = begin.pop(e["id"])
            if name is None or b["name"] == name:
                out.append((b["ts"], e["ts"], b["name"]))
    return sorted(out)


def inside(t, ps, margin=0.0):
    return any(s + margin <= t < e - margin for s, e, _ in ps)


def of_cat(events, cat):
    return [e for e in events if e.get("cat") == cat and e.get("ph") == "X"]


def steps_and_launches(events):
    """Each step's range and its launch mark's time, by step number."""
    steps = {int(e["name"].split()[-1]): e for e in events
             if e.get("ph") == "X" and e.get("name", "").startswith("Train step ")}
    marks = {int(e["name"].split()[-1]): e["ts"] for e in events
             if e.get("ph") == "i" and e.get("name", "").startswith("launch ")}
    return steps, marks


def check_edge_rule(events, ps, what):
    """Every kept launch started in a period; every kernel has its launch (the edge rule)."""
    calls = {e["args"]["correlation"]: e for e in of_cat(events, "cuda_api")}
    kernels = of_cat(events, "cuda_kernel")
    check(all(inside(c["ts"], ps) for c in calls.values()),
          f"{what}: every API call started inside a period")
    check(all(k["args"]["correlation"] in calls for k in kernels),
          f"{what}: every kernel with its launching call")
    return calls, kernels


def case_sample_capture(a, tmp):
    """--cuda-sample=20ms/100ms over 60 steps of 10 ms: NVTX ranges all the time, GPU work in
    the periods only, each kernel under the step that launched it as in a full capture; the
    periods marked in JSON and SQLite (ranges of the domain nvtxpp-capture), the summary saying
    what its GPU tables cover."""
    out = os.path.join(tmp, "s.json")
    p = run_steps(a, tmp, ["--cuda-sample=20ms/100ms"], out)
    events = ft.load(out)["traceEvents"]
    steps, marks = steps_and_launches(events)
    check(len(steps) == 60 and len(marks) == 60, f"NVTX all the time: {len(steps)} steps")
    ps = periods(events)
    # About 600 ms of steps (longer on a loaded machine): one period per 100 ms of it.
    span = max(s["ts"] + s["dur"] for s in steps.values()) - min(s["ts"] for s in steps.values())
    check(abs(len(ps) - span / 100000) <= 2.5,
          f"one period per 100 ms of a {span / 1000:.0f} ms run: {len(ps)}")
    # (Bounds wide enough for a loaded machine, whose threads wake late: a sampler that did not
    # follow the periods at all would be far outside them.)
    durations = sorted(e - s for s, e, _ in ps)
    check(all(d <= 20000 + 60000 for d in durations) and
          15000 <= durations[len(durations) // 2] <= 35000,
          f"periods of 20 ms (the first may start late, the last end with the process): "
          f"{durations}")
    ends = [e for _, e, _ in ps][:-1]
    gaps = sorted(b - a_ for a_, b in zip(ends, ends[1:]))
    check(gaps and 90000 <= gaps[len(gaps) // 2] <= 110000 and
          all(40000 <= g <= 160000 for g in gaps), f"period ends 100 ms apart: {gaps}")
    calls, kernels = check_edge_rule(events, ps, "capture")
    by_step = {}
    for c in calls.values():
        for n, s in steps.items():
            if s["ts"] <= c["ts"] <= s["ts"] + s["dur"]:
                by_step[n] = c["args"]["correlation"]
    kernel_corr = {k["args"]["correlation"] for k in kernels}
    clearly_in = [n for n, t in marks.items() if inside(t, ps, EDGE_US)]
    clearly_out = [n for n, t in marks.items() if not inside(t, ps, -EDGE_US)]
    check(len(clearly_in) >= 5, f"launches inside periods: {clearly_in}")
    check(all(n in by_step and by_step[n] in kernel_corr for n in clearly_in),
          f"each launch inside a period has its call and kernel, under its step: "
          f"{sorted(set(clearly_in) - set(by_step))} missing")
    check(not any(n in by_step for n in clearly_out),
          f"no launch outside the periods: {sorted(n for n in clearly_out if n in by_step)}")
    check(len(kernels) == len(calls), f"one kernel per kept launch: {len(kernels)} {len(calls)}")
    text = p.stdout
    m = re.search(r"GPU detail was sampled \(--cuda-sample\): (\d+) period\(s\), .*\(([0-9.]+)%\)",
                  text)
    if check(m is not None, f"the summary says GPU detail was sampled: {text}"):
        check(int(m.group(1)) == len(ps) and 10.0 <= float(m.group(2)) <= 30.0,
              f"its periods and share (about 20%): {m.group(0)}")
    for title in ("NVTX GPU Projection Summary", "CUDA GPU Kernel Summary", "CUDA GPU MemOps"):
        check(re.search(re.escape(title) + r".*GPU detail in sampled periods only", text),
              f"'{title}' says it covers the sampled periods only")
    check(re.search(r"StartEnd\s+:?nvtxpp-capture:GPU detail: sampled", text) or
          "nvtxpp-capture:GPU detail: sampled" in text, "the periods in the range table")

    # Read back by merge (the JSON reader): its cross-rank projection says what it covers.
    m = subprocess.run([a.capture, "merge", "--summary-only", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    check(m.returncode == 0 and re.search(r"Cross-rank NVTX GPU Projection Summary .* - GPU detail "
                                          r"in sampled periods only on 1 rank\(s\)", m.stdout),
          f"merge's GPU projection says it covers the sampled periods only: {m.stdout}{m.stderr}")

    # The same in SQLite, in nsys's export layout (when this build writes SQLite).
    db = os.path.join(tmp, "s.sqlite")
    q = run_steps(a, tmp, ["--cuda-sample=20ms/100ms", "--no-summary"], db)
    if "SQLite" in q.stderr and not os.path.exists(db):
        print("no SQLite in this build: the SQLite half skipped")
        return
    con = sqlite3.connect(db)
    dom = con.execute("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = ?",
                      ("nvtxpp-capture",)).fetchall()
    if not check(len(dom) == 1, f"the domain nvtxpp-capture created once: {dom}"):
        return
    rows = con.execute(
        "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON e.textId = s.id "
        "WHERE e.eventType = 60 AND e.domainId = ? AND COALESCE(e.text, s.value) = "
        "'GPU detail: sampled' ORDER BY e.start", (dom[0][0],)).fetchall()
    first, last = con.execute("SELECT min(start), max(end) FROM NVTX_EVENTS WHERE eventType = 59"
                              ).fetchone()
    check(abs(len(rows) - (last - first) / 100e6) <= 2.5,
          f"the periods as start/end ranges, one per 100 ms of a {(last - first) / 1e6:.0f} ms "
          f"run: {len(rows)}")
    runtime = dict(con.execute(
        "SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchall())
    kern = con.execute("SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    check(len(kern) >= 5 and len(kern) == len(runtime),
          f"one kernel per kept launch: {len(kern)} kernels, {len(runtime)} calls")
    check(all(any(s <= t < e for s, e in rows) for t in runtime.values()),
          "every launch in the SQLite file started inside a period")


def case_sample_driver(a, tmp):
    """Work launched through the driver API (two cuLaunchKernel, a copy and a memset a step, as
    Numba and cuBLASLt launch theirs), sampled: each launch inside a period has its calls and
    its work under its step; none outside. The fake CUPTI, as CUPTI 13.0 does, records a driver
    function switched off one by one never again: the driver functions' records stay on, and
    the readers keep the calls that started in a period. A capture window (--capture-range=nvtx)
    over the same program holds the calls of its step alone."""
    out = os.path.join(tmp, "d.json")
    driver = {"APP_DRIVER": "1"}
    run_steps(a, tmp, ["--cuda-sample=20ms/100ms", "--no-summary"], out, env_extra=driver)
    events = ft.load(out)["traceEvents"]
    steps, marks = steps_and_launches(events)
    ps = periods(events)
    calls, kernels = check_edge_rule(events, ps, "driver launches")
    check(all(c["name"].startswith("cu") for c in calls.values()),
          f"driver calls only: {sorted({c['name'] for c in calls.values()})}")
    clearly_in = [n for n, t in marks.items() if inside(t, ps, EDGE_US)]
    clearly_out = [n for n, t in marks.items() if not inside(t, ps, -EDGE_US)]
    by_step = {}
    for c in calls.values():
        for n, s_ in steps.items():
            if s_["ts"] <= c["ts"] <= s_["ts"] + s_["dur"]:
                by_step.setdefault(n, set()).add(c["args"]["correlation"])
    kernel_corr = {k["args"]["correlation"] for k in kernels}
    check(len(clearly_in) >= 5, f"launches inside periods: {clearly_in}")
    check(all(len(by_step.get(n, ())) == 4 and len(by_step[n] & kernel_corr) == 2
              for n in clearly_in),
          f"each step inside a period: its 4 driver calls, its 2 kernels: "
          f"{[(n, len(by_step.get(n, ()))) for n in clearly_in]}")
    check(not any(n in by_step for n in clearly_out),
          f"no driver call outside the periods: {sorted(n for n in clearly_out if n in by_step)}")
    # A window over step 20 alone: its calls and work, none of the other steps' calls.
    out = os.path.join(tmp, "w.json")
    run_steps(a, tmp, ["--capture-range=nvtx", "--nvtx-capture=Train step 20", "--no-summary"],
              out, steps=30, env_extra=driver)
    events = ft.load(out)["traceEvents"]
    steps, _ = steps_and_launches(events)
    calls = of_cat(events, "cuda_api")
    check(sorted(steps) == [20], f"the window holds step 20: {sorted(steps)}")
    s20 = steps.get(20)
    check(len(calls) == 4 and s20 is not None and
          all(s20["ts"] <= c["ts"] <= s20["ts"] + s20["dur"] for c in calls),
          f"the window holds step 20's 4 driver calls and no other: {len(calls)}")
    check(len(of_cat(events, "cuda_kernel")) == 2, "and its 2 kernels")


def case_sample_edge(a, tmp):
    """Work launched inside a period that runs past its end (kernels 15 ms behind their launch)
    is kept whole; work launched outside is not, even when it would run inside a period."""
    out = os.path.join(tmp, "e.json")
    run_steps(a, tmp, ["--cuda-sample=20ms/100ms", "--no-summary"], out,
              env_extra={"FAKE_CUPTI_KERNEL_DELAY_NS": "15000000"})
    events = ft.load(out)["traceEvents"]
    ps = periods(events)
    calls, kernels = check_edge_rule(events, ps, "edge")
    past = [k for k in kernels if not inside(k["ts"], ps)]
    check(len(past) >= 1, f"kernels launched inside a period, run after its end, kept: "
                          f"{len(past)} of {len(kernels)}")
    check(all(k["dur"] > 0 for k in past), "kept whole (their end too)")
    _, marks = steps_and_launches(events)
    outside = [n for n, t in marks.items() if not inside(t, ps, -EDGE_US)]
    check(len(kernels) <= len(marks) - len(outside),
          f"no kernel of a launch outside the periods: {len(kernels)} kernels, "
          f"{len(marks) - len(outside)} launches near or in periods")


def case_sample_raise(a, tmp):
    """--flight-recorder with --cuda-sample=5ms/1h (no period in the run, almost surely) and
    --cuda-raise=300ms: the trigger's dump holds the slow step (NVTX); the dump that follows the
    raise holds the kernels of the steps after the firing, in a 'GPU detail: raised' range; that
    dump raises nothing again."""
    out = os.path.join(tmp, "r.json")
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti, APP_STOP=os.path.join(tmp, "stop"))
    cmd = [a.capture, "--flight-recorder=4MB", "--no-summary", "--cuda-sample=5ms/1h",
           "--cuda-raise=300ms", "--trigger=Train step *>150ms", "--trigger-max=1", "-o", out,
           "--", a.app, "fake_gpu", "steps"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    dump1, dump2 = (os.path.join(tmp, f"r.dump{n}.json") for n in (1, 2))
    wait_for(lambda: os.path.exists(dump2) or p.poll() is not None, "the raised steps' dump")
    open(os.path.join(tmp, "stop"), "w").close()
    _, err = p.communicate(timeout=240)
    print(err)
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    fired = re.search(r"dump 1 \(trigger 'Train step \*>150ms': \"Train step (\d+)\"", err)
    check(fired, "dump 1: the trigger's")
    # The slow step is step 5; on a machine loaded enough to stretch a 20 ms step past 150 ms,
    # an earlier one may fire first: the steps after the firing are what the raise is for.
    slow = int(fired.group(1)) if fired else 5
    check(re.search(r"dump 2 \(GPU detail raised after dump 1: the 0.3 s after it", err),
          f"dump 2: the raised steps': {err}")
    if not (check(os.path.exists(dump1), "dump 1 written") and
            check(os.path.exists(dump2), "dump 2 written")):
        return
    first = ft.load(dump1)["traceEvents"]
    if not periods(first, "GPU detail: sampled"):  # (a 5 ms period of the hour fell elsewhere)
        check(not of_cat(first, "cuda_kernel"), "no GPU detail before the firing")
    check(any(e.get("name") == f"Train step {slow}" and e.get("ph") == "X" for e in first),
          "the slow step in the trigger's dump")
    events = ft.load(dump2)["traceEvents"]
    raised = periods(events, "GPU detail: raised")
    if not check(len(raised) == 1, f"one raised period in dump 2: {raised}"):
        return
    length = raised[0][1] - raised[0][0]
    check(250000 <= length <= 1000000, f"raised for about 300 ms: {length / 1000:.1f} ms")
    calls, kernels = check_edge_rule(events, periods(events), "raise")
    steps, _ = steps_and_launches(events)
    after = [n for n, s in steps.items()
             if n > slow and inside(s["ts"] + s["dur"], raised, EDGE_US)]
    check(len(after) >= 2 and len(kernels) >= len(after),
          f"the kernels of the steps after the firing: {len(kernels)} kernel(s), steps {after}")
    last = os.path.join(tmp, "r.dump3.json")
    if check(os.path.exists(last), "the dump at exit"):
        check(len(periods(ft.load(last)["traceEvents"], "GPU detail: raised")) == 1,
              "the raised steps' dump raised nothing again")


def case_sample_raise_job(a, tmp):
    """--dump-scope=job over two Open MPI ranks: a trigger dumps both ranks (dump 1) and raises
    both; the dump of the raised steps is a job dump too (dump 2 on both ranks, started by one),
    with the kernels of the steps after the firing on each rank."""
    if not a.mpirun:
        print("mpirun not installed: skipped")
        return
    import job_tests as jt  # noqa: E402  (the Open MPI environment of the job tests)
    out = os.path.join(tmp, "j.json")
    stop = os.path.join(tmp, "stop")
    env = jt.mpirun_env(tmp)
    env.update(NVTXPP_CUPTI_PATH=a.fake_cupti, APP_STOP=stop)
    cmd = [a.mpirun, "--oversubscribe", "-x", "NVTXPP_CUPTI_PATH", "-x", "APP_STOP"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["-np", "2", a.capture, "--flight-recorder=4MB", "--dump-scope=job", "--no-summary",
            "--cuda-sample=5ms/1h", "--cuda-raise=300ms", "--trigger=Train step *>150ms",
            "--trigger-max=1", "-o", out, "--", a.app, "fake_gpu", "steps"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    second = [os.path.join(tmp, f"j.rank{r}.dump2.json") for r in range(2)]
    wait_for(lambda: all(os.path.exists(d) for d in second) or p.poll() is not None,
             "dump 2 of both ranks")
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    print(err)
    check(p.returncode == 0, f"mpirun exits 0: {p.returncode}")
    check(len(re.findall(r"rank \d: dump 2 \(job dump started by rank \d: GPU detail raised "
                         r"after dump 1", err)) == 2, "dump 2 on both ranks, a job dump")
    # Both ranks' step 5 is slow: two triggers, one moment (dump 1), one raised steps' dump.
    check(len(re.findall(r"GPU detail raised after dump", err)) == 2,
          "one dump of the raised steps for the job, not one per rank that fired")
    for r, d in enumerate(second):
        if not check(os.path.exists(d), f"rank {r}: dump 2 written"):
            continue
        events = ft.load(d)["traceEvents"]
        raised = periods(events, "GPU detail: raised")
        check(len(raised) == 1, f"rank {r}: one raised period: {raised}")
        check(len(of_cat(events, "cuda_kernel")) >= 5,
              f"rank {r}: the kernels of the steps after the firing")
        check_edge_rule(events, periods(events), f"rank {r}")


def case_sample_options(a, tmp):
    """Bad values are exit 2 before the program starts, each naming the option."""
    cases = [
        (["--cuda-sample=200ms"], "--cuda-sample takes ON/PERIOD"),
        (["--cuda-sample=2s/1s"], "ON must be shorter than PERIOD"),
        (["--cuda-sample=100us/1s"], "ON must be 1ms or more"),
        (["--cuda-sample=20ms/5d"], "unknown duration unit 'd'"),
        (["--cuda-sample=20ms/1s", "--cuda=off"], "not with --cuda=off"),
        (["--cuda-raise=1s"], "give --cuda-sample too"),
        (["--cuda-sample=20ms/1s", "--cuda-raise=1s"], "give --flight-recorder too"),
        (["--flight-recorder=1MB", "--cuda-sample=20ms/1s", "--cuda-raise=soon"],
         "--cuda-raise takes a duration"),
    ]
    for args, want in cases:
        p = subprocess.run([a.capture] + args + ["-o", os.path.join(tmp, "x.json"), "--",
                                                 a.app, "fake_gpu", "none"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        check(p.returncode == 2 and want in p.stderr,
              f"{args}: exit 2 naming '{want}', got {p.returncode}: {p.stderr}")
        check(not os.path.exists(os.path.join(tmp, "x.json")), f"{args}: nothing run")


if __name__ == "__main__":
    # --mpirun: optional (ft.main's), empty without Open MPI.
    sys.exit(ft.main(globals(), ["--fake-cupti"]))
