#!/usr/bin/env python3
"""nvtxpp-capture's whole-process NVTX recording cost against its floor (docs/performance.md).

Runs `nvtxpp_capture_app overhead N` under nvtxpp-capture RUNS times. Each run makes three
passes; each pass times N pairs of TSC reads (the floor: the two timestamps a range needs) and
then N nvtxRangePushA/nvtxRangePop ranges, so each pair of figures comes from the same moment
of the machine. Prints every pass, then medians of the differences (range minus floor): over
all passes, and over the first pass of each run alone (thread registration and the first
blocks included).

usage: bench/recording_cost.py BUILD_DIR [--runs 10] [--ranges 2000000] [--capture PATH]
Exit status 0 (a benchmark: it reports, it does not judge); 2 when the build lacks the tools.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--ranges", type=int, default=2_000_000)
    ap.add_argument("--capture", help="nvtxpp-capture to use (default: the build's)")
    a = ap.parse_args()
    capture = a.capture or os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    app = os.path.join(a.build, "tests", "capture", "nvtxpp_capture_app")
    for path in (capture, app):
        if not os.access(path, os.X_OK):
            print(f"recording_cost: {path} not built", file=sys.stderr)
            return 2
    raw = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    passes = []  # (run, pass, floor ns, range ns)
    for run in range(a.runs):
        p = subprocess.run([capture, "--summary-only", "--", app, "overhead", str(a.ranges)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           env=dict(os.environ, TMPDIR=raw), check=False)
        found = re.findall(r"two_tsc_ns=([0-9.]+) push_pop_ns=([0-9.]+)", p.stdout)
        if not found:
            print(f"run {run + 1}: no figures (exit {p.returncode}; not x86-64?)")
            continue
        for i, (floor, rng) in enumerate(found):
            passes.append((run + 1, i + 1, float(floor), float(rng)))
            print(f"run {run + 1} pass {i + 1}: two TSC reads {float(floor):6.2f} ns, "
                  f"push+pop {float(rng):6.2f} ns, difference {float(rng) - float(floor):6.2f} ns")
    if not passes:
        return 2

    def summary(what, rows):
        d = [r[3] - r[2] for r in rows]
        print(f"{what}: n {len(rows)}, floor median {statistics.median(r[2] for r in rows):.2f} ns, "
              f"push+pop median {statistics.median(r[3] for r in rows):.2f} ns, difference median "
              f"{statistics.median(d):.2f} ns (min {min(d):.2f}, max {max(d):.2f})")

    summary("all passes", passes)
    summary("first passes", [r for r in passes if r[1] == 1])
    summary("later passes", [r for r in passes if r[1] > 1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
