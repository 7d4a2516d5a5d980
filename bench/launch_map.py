#!/usr/bin/env python3
"""The map's table from bench/gpu/launch_map.cu's runs (scripts/verify_launch_cost_gpu.sh,
docs/performance.md "What CUPTI costs a launch-bound loop").

usage: launch_map.py map.txt
map.txt holds several runs, each starting with a `--- run R (--start=late|early)` line. Per
phase: the median over the runs of its step over the same run's step with no tool, with the
runs' range; the extra cost per CUDA call (ns); the records a run's phase held (so a phase that
must record shows it did). Then the detach and attach times and the stream ids seen.
"""
import collections
import re
import statistics
import sys


def main():
    runs = []  # [(start, {phase: (ratio, ns_per_call, records)})]
    extra = collections.defaultdict(list)
    for line in open(sys.argv[1], encoding="utf-8"):
        m = re.match(r"--- run \d+ \(--start=(\w+)\)", line)
        if m:
            runs.append((m.group(1), {}))
            continue
        m = re.match(r"phase=(.+?)\s+median_step_us=\s*([\d.]+) vs_none=([\d.]+) "
                     r"ns_per_call=\s*([-+\d.]+) records (.*)", line)
        if m and runs:
            runs[-1][1][m.group(1)] = (float(m.group(3)), float(m.group(4)), m.group(5).strip(),
                                       float(m.group(2)))
            continue
        for key in ("detach", "attach", "stream id", "early", "device", "correlation"):
            if line.startswith(key) and runs:
                extra[key].append(line.strip())
    for start in ("late", "early"):
        rs = [r for s, r in runs if s == start]
        if not rs:
            continue
        order = list(rs[0])
        print(f"\n{len(rs)} run(s), --start={start}\n")
        if start == "late":
            print("| phase | step / no tool: median (range) | ns a CUDA call over no tool | "
                  "records (one run) |")
        else:
            print("| phase | step: median (range) | ratio to the detached phase | records |")
        print("|---|---|---|---|")
        for p in order:
            vals = [r[p] for r in rs if p in r]
            if start == "late":
                ratios = [v[0] for v in vals]
                ns = statistics.median(v[1] for v in vals)
                print(f"| {p} | {statistics.median(ratios):.3f} ({min(ratios):.3f}-"
                      f"{max(ratios):.3f}) | {ns:+.1f} | {vals[0][2]} |")
            else:
                steps = [v[3] for v in vals]
                det = [r.get("all detached (early)", (0, 0, "", 0))[3] for r in rs if p in r]
                ratios = [s / d for s, d in zip(steps, det) if d > 0]
                print(f"| {p} | {statistics.median(steps) / 1e3:.2f} ms ({min(steps) / 1e3:.2f}-"
                      f"{max(steps) / 1e3:.2f}) | {statistics.median(ratios):.3f} | "
                      f"{vals[0][2]} |")
    for key, lines in extra.items():
        print(f"\n{key}:")
        for text in sorted(set(lines)):
            print(f"    {text}")


if __name__ == "__main__":
    main()
