#!/usr/bin/env python3
"""The cost table of the sampled GPU mode from scripts/verify_sample_gpu.sh's runs
(docs/leave-it-on-gpu.md).

usage: sample_cost.py cost-runs.txt
Each line: `round=R config=C steps=N mean_step_ns=M median_step_ns=D [phase inside=N:D
outside=N:D after_on=N:D after_off=N:D] [after=Ts steps=N median_step_ns=D]`. Per configuration:
the median over rounds of its mean step over the same round's mean step without a tool (the cost
of leaving it on, periods included), with the rounds' range; for the sampled ones, the median
step of the steps that hold a switch, against the steps outside the periods, and the steps
outside the periods against the same round's median step without a tool; for those with an
`after` part (a raise or a capture window that ended), the median of the steps after it against
the same round's median step without a tool.
"""
import collections
import re
import statistics
import sys


def main():
    rows = collections.defaultdict(dict)
    phase = collections.defaultdict(list)
    after = collections.defaultdict(dict)
    before = collections.defaultdict(dict)
    for line in open(sys.argv[1], encoding="utf-8"):
        rc = re.search(r"round=(\d+) config=(\S+)", line)
        if not rc:
            continue
        r, c = int(rc.group(1)), rc.group(2)
        m = re.search(r"config=\S+ steps=(\d+) mean_step_ns=(\d+) median_step_ns=(\d+)", line)
        if m:
            rows[c][r] = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        p = re.search(r"phase inside=(\d+):(\d+) outside=(\d+):(\d+) after_on=(\d+):(\d+) "
                      r"after_off=(\d+):(\d+)", line)
        if p:
            phase[c].append([int(x) for x in p.groups()] + [r])
        q = re.search(r"after=(\S+) steps=(\d+) median_step_ns=(\d+)", line)
        if q and int(q.group(2)) > 0:
            after[c][r] = (q.group(1), int(q.group(2)), int(q.group(3)))
        b = re.search(r"before=(\S+) steps=(\d+) median_step_ns=(\d+)", line)
        if b and int(b.group(2)) > 0:
            before[c][r] = (b.group(1), int(b.group(2)), int(b.group(3)))
    base = rows.get("none", {})
    print("| configuration | steps a run | mean step | / no tool: median of rounds (range) |")
    print("|---|---|---|---|")
    for c, by_round in rows.items():
        ratios = [by_round[r][1] / base[r][1] for r in by_round if r in base]
        steps = statistics.median(v[0] for v in by_round.values())
        mean = statistics.median(v[1] for v in by_round.values())
        rng = f"{min(ratios):.4f}-{max(ratios):.4f}" if ratios else "-"
        med = f"{statistics.median(ratios):.4f}" if ratios else "-"
        print(f"| {c} | {steps:.0f} | {mean / 1e6:.3f} ms | {med} ({rng}) |")
    if phase:
        print()
        print("| configuration | steps wholly outside a period: median | inside | the step "
              "holding a switch on | ... a switch off |")
        print("|---|---|---|---|---|")
        for c, ps in phase.items():
            def med(i):
                vals = [p[i + 1] for p in ps if p[i] > 0]
                n = sum(p[i] for p in ps)
                return f"{statistics.median(vals) / 1e6:.3f} ms (n={n})" if vals else "-"
            print(f"| {c} | {med(2)} | {med(0)} | {med(4)} | {med(6)} |")
        # Within a run, against its own steps outside the periods (no run-to-run noise): what a
        # sampled step costs, and that times the share of steps sampled.
        print()
        print("| configuration | a step inside a period / outside: median of rounds (range) | "
              "steps sampled | the periods' cost: share x extra |")
        print("|---|---|---|---|")
        for c, ps in phase.items():
            ratios = [p[1] / p[3] for p in ps if p[0] > 0 and p[2] > 0]
            share = sum(p[0] + p[4] + p[6] for p in ps) / max(1, sum(p[0] + p[2] + p[4] + p[6]
                                                                     for p in ps))
            r = statistics.median(ratios)
            print(f"| {c} | {r:.4f} ({min(ratios):.4f}-{max(ratios):.4f}) | {100 * share:.1f}% | "
                  f"{100 * share * (r - 1):.3f}% |")
        # The steps between the periods against no tool's median step, the same round.
        print()
        print("| configuration | steps outside the periods / no tool's median step: median of "
              "rounds (range) |")
        print("|---|---|")
        for c, ps in phase.items():
            ratios = [p[3] / base[p[8]][2] for p in ps if p[2] > 0 and p[8] in base]
            if ratios:
                print(f"| {c} | {statistics.median(ratios):.4f} ({min(ratios):.4f}-"
                      f"{max(ratios):.4f}) |")
    if after:
        print()
        print("| configuration | the steps after the switch ended / no tool's median step: "
              "median of rounds (range) | steps a run |")
        print("|---|---|---|")
        for c, by_round in after.items():
            ratios = [v[2] / base[r][2] for r, v in by_round.items() if r in base]
            if ratios:
                steps = statistics.median(v[1] for v in by_round.values())
                print(f"| {c} (after {next(iter(by_round.values()))[0]}) | "
                      f"{statistics.median(ratios):.4f} ({min(ratios):.4f}-{max(ratios):.4f}) | "
                      f"{steps:.0f} |")


    within = [(c, r) for c in after for r in after[c] if r in before.get(c, {})]
    if within:
        # In one process: the steps after the switch against those before it (CUPTI detached
        # since cuInit), free of the run-to-run noise.
        print()
        print("| configuration | the steps after the switch / before it, same run: median of "
              "rounds (range) |")
        print("|---|---|")
        for c in after:
            ratios = [after[c][r][2] / before[c][r][2] for r in after[c] if r in before.get(c, {})]
            if ratios:
                print(f"| {c} | {statistics.median(ratios):.4f} ({min(ratios):.4f}-"
                      f"{max(ratios):.4f}) |")


if __name__ == "__main__":
    main()
