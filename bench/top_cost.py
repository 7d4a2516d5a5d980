#!/usr/bin/env python3
"""What `nvtxpp-capture top` costs (docs/top.md, "Cost"; the goals of issue 53: a watched step at
most 1.01x an unwatched one, top at most 5% of one core at 1M ranges a second, a refresh of 10 s
of 1M ranges a second in at most 100 ms).

One run of `nvtxpp_top_app flood RATE ...` under `nvtxpp-capture --flight-recorder=64MB`: bursts
of 1000 "tick" ranges (a step), RATE ranges a second, each burst timed inside the program. The
run alternates phases of PHASE seconds: nobody watching, then `nvtxpp-capture top --json
--interval=1s PID` attached, ROUNDS times; so both kinds of step come from the same run and the
same moments of the machine. Prints:
  step        the mean and median burst time in each kind of phase (1 s after each change left
              out), and their ratio: watched / unwatched
  top's CPU   its CPU time over a watched phase's wall time: with the attach (it reads the
              rings' history once), and steady (from its first full window on, by the CPU time
              it reports in each JSON object)
  refresh     the time one refresh took to compute its rows (refresh_ms in the JSON), over the
              refreshes whose window held 10 s of ranges

usage: bench/top_cost.py BUILD_DIR [--rate 1000000] [--phase 14] [--rounds 2]
Exit status 0 (a benchmark: it reports, it does not judge); 2 when the build lacks the tools.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def child_of(pid):
    path = f"/proc/{pid}/task/{pid}/children"
    for _ in range(2000):
        kids = open(path).read().split()
        if kids:
            return int(kids[0])
        time.sleep(0.005)
    raise SystemExit("top_cost: the launcher started no program")


def watch(capture, prog, seconds):
    """Attaches top for `seconds`: its JSON objects and its CPU seconds (rusage)."""
    p = subprocess.Popen([capture, "top", "--json", "--interval=1s", str(prog)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    objs = []
    reader = threading.Thread(target=lambda: objs.extend(
        json.loads(line) for line in p.stdout if line.startswith("{")))
    reader.start()
    time.sleep(seconds)
    p.send_signal(signal.SIGINT)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    return objs, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--rate", type=float, default=1_000_000)
    ap.add_argument("--phase", type=float, default=14)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    capture = os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    app = os.path.join(a.build, "tests", "capture", "nvtxpp_top_app")
    for path in (capture, app):
        if not os.access(path, os.X_OK):
            print(f"top_cost: {path} not built", file=sys.stderr)
            return 2
    total = 2 * a.phase * a.rounds + 1
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bursts.txt")
        launcher = subprocess.Popen([capture, "--flight-recorder=64MB", "--dump-on-exit=no",
                                     "--no-summary", "-o", os.path.join(tmp, "t.json"), "--",
                                     app, "flood", str(a.rate), str(total), out],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        prog = child_of(launcher.pid)
        phases = []  # (start ns, end ns, watched)
        cpu = []
        objs = []
        for _ in range(a.rounds):
            t = time.monotonic_ns()
            time.sleep(a.phase)
            phases.append((t, time.monotonic_ns(), False))
            t = time.monotonic_ns()
            o, c = watch(capture, prog, a.phase)
            phases.append((t, time.monotonic_ns(), True))
            cpu.append((c, (phases[-1][1] - t) / 1e9))
            objs.append(o)
        launcher.wait()
        bursts = [tuple(map(int, line.split())) for line in open(out)]
    margin = 1_000_000_000
    steps = {False: [], True: []}
    by_phase = [[] for _ in phases]
    for start, ns in bursts:
        for i, (a0, a1, watched) in enumerate(phases):
            if a0 + margin <= start < a1:
                steps[watched].append(ns)
                by_phase[i].append(ns)
    print(f"nvtxpp-capture top's cost: {a.rate:.0f} ranges/s (bursts of 1000), phases of "
          f"{a.phase:.0f} s, {a.rounds} round(s)")
    print(f"{'step (1000 ranges)':<28} {'bursts':>7} {'mean ns':>10} {'median ns':>10}")
    for watched in (False, True):
        s = steps[watched]
        print(f"{'top attached' if watched else 'nobody watching':<28} {len(s):>7} "
              f"{statistics.mean(s):>10.0f} {statistics.median(s):>10.0f}")
    print(f"{'ratio watched/unwatched':<28} {'':>7} "
          f"{statistics.mean(steps[True]) / statistics.mean(steps[False]):>10.3f} "
          f"{statistics.median(steps[True]) / statistics.median(steps[False]):>10.3f}")
    if a.rounds >= 2:
        # The machine's own noise: the same kind of phase, one round against another.
        print(f"{'noise: unwatched 2 / 1':<28} {'':>7} "
              f"{statistics.mean(by_phase[2]) / statistics.mean(by_phase[0]):>10.3f} "
              f"{statistics.median(by_phase[2]) / statistics.median(by_phase[0]):>10.3f}")
        print(f"{'noise: watched 2 / 1':<28} {'':>7} "
              f"{statistics.mean(by_phase[3]) / statistics.mean(by_phase[1]):>10.3f} "
              f"{statistics.median(by_phase[3]) / statistics.median(by_phase[1]):>10.3f}")
    for i, ((c, wall), o) in enumerate(zip(cpu, objs)):
        full = [x for x in o if x["window_s"] >= 9.5]
        steady = ""
        if len(full) >= 2:
            d_cpu = full[-1]["top_cpu_s"] - full[0]["top_cpu_s"]
            d_wall = full[-1]["uptime_s"] - full[0]["uptime_s"]
            steady = f", steady {100 * d_cpu / d_wall:.1f}% over {d_wall:.0f} s"
        rates = [x["ranges_per_s"] for x in o]
        print(f"top's CPU, watched phase {i + 1}: {100 * c / wall:.1f}% of one core with the "
              f"attach ({c:.2f} s in {wall:.1f} s){steady}; "
              f"{statistics.median(rates) if rates else 0:.0f} ranges/s seen")
        if full:
            r = [x["refresh_ms"] for x in full]
            print(f"refresh, watched phase {i + 1}: {len(r)} with a full window "
                  f"({full[0]['ranges']} ranges or more): median {statistics.median(r):.1f} ms, "
                  f"max {max(r):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
