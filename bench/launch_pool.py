#!/usr/bin/env python3
"""Per-launch cost pooled over several runs: nvtxpp-capture against nsys.

Reads launch-round files of scripts/verify_capture_gpu.sh (`launch.txt`) and of the experiment
scripts in bench/results/*/launch-modes/ (tool lines `no tool:`, `nvtxpp-capture:` or
`capture:`, `nsys -t cuda,nvtx:` or `nsys:`). Every pass's figure is paired with the no-tool
median of its own round and file; the pooled differences of the two tools are compared by
median and mean, with 95 % bootstrap intervals of the ratios (fixed seed, so reruns agree).

    python3 bench/launch_pool.py FILE...
"""
import random
import statistics
import sys

from launch_cost import read_rounds

NAMES = {"no tool": "none", "nvtxpp-capture": "ours", "capture": "ours",
         "nsys -t cuda,nvtx": "nsys", "nsys": "nsys"}


def interval(a, b, stat, rounds=5000):
    rng = random.Random(1)
    ratios = sorted(stat([rng.choice(a) for _ in a]) / stat([rng.choice(b) for _ in b])
                    for _ in range(rounds))
    return ratios[int(0.025 * rounds)], ratios[int(0.975 * rounds) - 1]


def main(paths):
    pooled = {"ours": [], "nsys": []}
    for path in paths:
        f = {tool: per["loop"] for tool, per in read_rounds(path, NAMES.get).items()
             if "loop" in per}
        if not all(k in f for k in ("none", "ours", "nsys")):
            print(f"{path}: lacks no tool, nvtxpp-capture or nsys; skipped")
            continue
        base = {r: statistics.median(v) for r, v in f["none"].items()}
        row = []
        for tool in ("ours", "nsys"):
            added = [x - base[r] for r, xs in f[tool].items() if r in base for x in xs]
            pooled[tool] += added
            row.append(f"{tool} adds {statistics.median(added):6.0f} (n {len(added)})")
        print(f"{path}: " + ", ".join(row))
    ours, nsys = pooled["ours"], pooled["nsys"]
    if not ours or not nsys:
        return 2
    for name, stat in (("median", statistics.median), ("mean", statistics.mean)):
        lo, hi = interval(ours, nsys, stat)
        print(f"pooled {name}: ours {stat(ours):.0f}, nsys {stat(nsys):.0f} ns added per launch, "
              f"ours / nsys {stat(ours) / stat(nsys):.3f} (95 % interval {lo:.3f}-{hi:.3f}; "
              f"n {len(ours)} and {len(nsys)})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
