#!/usr/bin/env python3
"""What a capture setting costs a kernel launch: reads rounds where each runs
bench/gpu/launch_overhead under nvtxpp-capture `before` and `after`, in an order that turns
every round. Written by scripts/verify_corpus_gpu.sh (phase bench: before is
NVTXPP_DRIVER_LAUNCHES=off, no driver launch records; after is the default) and
scripts/verify_flight_gpu.sh (step 6: the flight recorder with NVTXPP_API_CALLS=off, no call
table; after is the default). Prints,
per measure, the median of each and the ratio after / before, both of the medians and as the
median of the per-round ratios (the machine drifts between rounds; a round's two runs are
neighbours in time).

    python3 bench/driver_launch_cost.py launch-driver.txt
"""
import re
import statistics
import sys

MEASURES = {"loop ns per launch": r"^launches=\d+ ns_per_launch=([\d.]+)",
            "process CPU ns per launch": r"proc_cpu_ns_per_launch=([\d.]+)",
            "short-queue median ns per launch": r"^short_queue .*median_ns_per_launch=([\d.]+)"}


def main():
    rounds = {}  # round -> which -> measure -> [values]
    rnd = which = None
    for line in open(sys.argv[1], encoding="utf-8"):
        line = line.strip()
        m = re.match(r"round (\d+)$", line)
        if m:
            rnd = int(m.group(1))
            continue
        m = re.match(r"nvtxpp-capture (before|after):$", line)
        if m:
            which = m.group(1)
            continue
        for name, pattern in MEASURES.items():
            m = re.search(pattern, line)
            if m and rnd is not None and which:
                rounds.setdefault(rnd, {}).setdefault(which, {}).setdefault(name, []).append(
                    float(m.group(1)))
    if not rounds:
        print("no rounds found", file=sys.stderr)
        return 2
    print(f"{len(rounds)} rounds")
    print("| measure | before (median) | after (median) | after / before | per-round ratio "
          "(median, quartiles) |")
    print("|---|---|---|---|---|")
    for name in MEASURES:
        before = [v for r in rounds.values() for v in r.get("before", {}).get(name, [])]
        after = [v for r in rounds.values() for v in r.get("after", {}).get(name, [])]
        if not before or not after:
            continue
        ratios = sorted(statistics.median(r["after"][name]) / statistics.median(r["before"][name])
                        for r in rounds.values()
                        if name in r.get("after", {}) and name in r.get("before", {}))
        q = (ratios[len(ratios) // 4], statistics.median(ratios), ratios[(3 * len(ratios)) // 4])
        print(f"| {name} | {statistics.median(before):,.0f} | {statistics.median(after):,.0f} | "
              f"{statistics.median(after) / statistics.median(before):.3f} | "
              f"{q[1]:.3f} ({q[0]:.3f}-{q[2]:.3f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
