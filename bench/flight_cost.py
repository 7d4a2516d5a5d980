#!/usr/bin/env python3
"""What an NVTX range costs under nvtxpp-capture's flight recorder, against the normal capture
(docs/leave-it-on.md, "Costs"; the goal: at most 1.2x).

Runs `nvtxpp_capture_app overhead N` (N nvtxRangePushA/nvtxRangePop pairs, timed inside the
program, three passes a run) under nvtxpp-capture with each configuration, RUNS times,
interleaved so that each run of each comes from the same moments of the machine:
  capture        no options: every range to the raw file
  flight:64MB    --flight-recorder=64MB --dump-on-exit=no (the ring laps many times)
  flight:1GB     --flight-recorder=1GB --dump-on-exit=no
Prints the median ns per range of each and its ratio to `capture`.

usage: bench/flight_cost.py BUILD_DIR [--runs 7] [--ranges 5000000]
Exit status 0 (a benchmark: it reports, it does not judge); 2 when the build lacks the tools.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

CONFIGS = [
    ("capture", []),
    ("flight:64MB", ["--flight-recorder=64MB", "--dump-on-exit=no"]),
    ("flight:1GB", ["--flight-recorder=1GB", "--dump-on-exit=no"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--ranges", type=int, default=5_000_000)
    a = ap.parse_args()
    capture = os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    app = os.path.join(a.build, "tests", "capture", "nvtxpp_capture_app")
    for path in (capture, app):
        if not os.access(path, os.X_OK):
            print(f"flight_cost: {path} not built", file=sys.stderr)
            return 2
    figures = {name: [] for name, _ in CONFIGS}
    for _ in range(a.runs):
        for name, extra in CONFIGS:
            p = subprocess.run([capture, "--summary-only"] + extra +
                               ["--", app, "overhead", str(a.ranges)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               check=False)
            found = [float(x) for x in re.findall(r"push_pop_ns=([0-9.]+)", p.stdout)]
            figures[name] += found[1:]  # the first pass includes the first blocks' setup
    base = statistics.median(figures["capture"])
    print(f"{'configuration':<14} {'ns/range (median)':>18} {'min':>8} {'max':>8} {'ratio':>6}")
    for name, _ in CONFIGS:
        f = figures[name]
        m = statistics.median(f)
        print(f"{name:<14} {m:>18.2f} {min(f):>8.2f} {max(f):>8.2f} {m / base:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
