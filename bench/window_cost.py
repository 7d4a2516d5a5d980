#!/usr/bin/env python3
"""What an NVTX range costs outside nvtxpp-capture's capture window, against a recorded one
(docs/capture-cost.md, "Capture windows").

Runs `nvtxpp_capture_app overhead N` (N nvtxRangePushA/nvtxRangePop pairs, timed inside the
program, three passes a run) under nvtxpp-capture with each configuration, RUNS times, the
configurations interleaved so that each run of each comes from the same moments of the machine:
  recorded       no capture options: every range recorded
  recorded+gate  --capture-range=nvtx --nvtx-capture=range --capture-range-end=none: the first
                 range opens a window that never closes (recorded, with gating on)
  outside:nvtx   --capture-range=nvtx --nvtx-capture=other: the window never opens; each push is
                 compared with the trigger's name
  outside:pattern  --nvtx-capture='oth*': the window never opens; each push's text is matched
                 against a pattern (which fails at its first character)
  outside:*pattern --nvtx-capture='*other': the same, a pattern that reads the whole text
  outside:cuda   --capture-range=cudaProfilerApi: the window never opens (no trigger to compare)
  outside:done   --capture-range=nvtx --nvtx-capture=range (stop): the first range opens and
                 closes the window; the trigger is disarmed, every later range is outside
Prints the median ns per range of each configuration and its ratio to `recorded`.

usage: bench/window_cost.py BUILD_DIR [--runs 7] [--ranges 2000000]
Exit status 0 (a benchmark: it reports, it does not judge); 2 when the build lacks the tools.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

CONFIGS = [
    ("recorded", []),
    ("recorded+gate", ["--capture-range=nvtx", "--nvtx-capture=range", "--capture-range-end=none"]),
    ("outside:nvtx", ["--capture-range=nvtx", "--nvtx-capture=other"]),
    ("outside:pattern", ["--capture-range=nvtx", "--nvtx-capture=oth*"]),
    ("outside:*pattern", ["--capture-range=nvtx", "--nvtx-capture=*other"]),
    ("outside:cuda", ["--capture-range=cudaProfilerApi"]),
    ("outside:done", ["--capture-range=nvtx", "--nvtx-capture=range"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--ranges", type=int, default=2_000_000)
    a = ap.parse_args()
    capture = os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    app = os.path.join(a.build, "tests", "capture", "nvtxpp_capture_app")
    for path in (capture, app):
        if not os.access(path, os.X_OK):
            print(f"window_cost: {path} not built", file=sys.stderr)
            return 2
    raw = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    figures = {name: [] for name, _ in CONFIGS}
    for run in range(a.runs):
        for name, extra in CONFIGS:
            p = subprocess.run([capture, "--summary-only"] + extra + ["--", app, "overhead",
                                                                      str(a.ranges)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, TMPDIR=raw), check=False)
            found = [float(x) for x in re.findall(r"push_pop_ns=([0-9.]+)", p.stdout)]
            # The first pass includes the thread's registration and first blocks: the later two.
            figures[name] += found[1:]
            print(f"run {run + 1} {name:16s} " + " ".join(f"{x:6.2f}" for x in found))
    base = statistics.median(figures["recorded"]) if figures["recorded"] else float("nan")
    print(f"\nmedian ns per range (push + pop), {a.runs} runs x 2 passes of {a.ranges} ranges:")
    for name, _ in CONFIGS:
        if figures[name]:
            m = statistics.median(figures[name])
            print(f"  {name:16s} {m:7.2f} ns   ratio to recorded {m / base:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
