#!/usr/bin/env python3
"""Per-launch cost pooled over several runs: nvtxpp-capture against nsys and the CUPTI floor.

Reads launch-round files of scripts/verify_capture_gpu.sh (`launch.txt`) and of the experiment
scripts in bench/results/*/ (tool lines `no tool:`, `nvtxpp-capture:` or `capture:`,
`nsys -t cuda,nvtx:` or `nsys:`, `CUPTI floor:` or `floor:`). Every pass's figure is paired with
the no-tool median of its own round and file; each comparison pools the files that hold both
tools, by median and mean, with 95 % bootstrap intervals of the ratios (fixed seed, so reruns
agree). Two figures: the loop's time, and the whole process's CPU time (every thread; files from
2026-11-24 on).

    python3 bench/launch_pool.py FILE...
"""
import random
import statistics
import sys

from launch_cost import read_rounds

NAMES = {"no tool": "none", "nvtxpp-capture": "ours", "capture": "ours",
         "nsys -t cuda,nvtx": "nsys", "nsys": "nsys", "CUPTI floor": "floor", "floor": "floor"}
MEASURES = {"loop": "the loop's time", "process CPU": "the whole process's CPU time"}


def interval(a, b, stat, rounds=5000):
    rng = random.Random(1)
    ratios = sorted(stat([rng.choice(a) for _ in a]) / stat([rng.choice(b) for _ in b])
                    for _ in range(rounds))
    return ratios[int(0.025 * rounds)], ratios[int(0.975 * rounds) - 1]


def main(paths):
    # (measure, other tool) -> (ours, theirs): added ns per launch, every pass of the files that
    # hold both tools, so each ratio compares the same runs.
    pooled = {}
    for path in paths:
        figures = read_rounds(path, NAMES.get)
        for measure in MEASURES:
            f = {tool: per[measure] for tool, per in figures.items() if measure in per}
            if "none" not in f or "ours" not in f:
                continue
            base = {r: statistics.median(v) for r, v in f["none"].items()}
            added = {tool: [x - base[r] for r, xs in f[tool].items() if r in base for x in xs]
                     for tool in ("ours", "nsys", "floor") if tool in f}
            for other in ("nsys", "floor"):
                if added.get(other):
                    ours, theirs = pooled.setdefault((measure, other), ([], []))
                    ours.extend(added["ours"])
                    theirs.extend(added[other])
            print(f"{path} ({measure}): " + ", ".join(
                f"{tool} adds {statistics.median(v):6.0f} (n {len(v)})" for tool, v in added.items()))
    status = 2
    for measure, what in MEASURES.items():
        for other in ("nsys", "floor"):
            ours, theirs = pooled.get((measure, other), ([], []))
            if not ours or not theirs:
                continue
            status = 0
            for name, stat in (("median", statistics.median), ("mean", statistics.mean)):
                lo, hi = interval(ours, theirs, stat)
                print(f"{what}, pooled {name}: ours {stat(ours):.0f}, {other} {stat(theirs):.0f} "
                      f"ns added per launch, ours / {other} {stat(ours) / stat(theirs):.3f} "
                      f"(95 % interval {lo:.3f}-{hi:.3f}; n {len(ours)} and {len(theirs)})")
    return status


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
