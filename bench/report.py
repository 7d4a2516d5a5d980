#!/usr/bin/env python3
"""Prints the nvtxpp benchmark table from Google Benchmark JSON files, one file per situation.

usage: report.py [--icount MODE=FILE]... MODE=FILE...

Each MODE=FILE is a Google Benchmark JSON output (run with --benchmark_repetitions and
--benchmark_report_aggregates_only); the table shows the median CPU time per iteration and the
ratio to nvtx3/scoped_range of the same run (and, under a tool, to
nvtx3/scoped_range_in_registered). --icount files hold "case<TAB>instructions per iteration"
lines (from callgrind). The goals of issue 5 are checked at the end; they are reported, never
turned into an exit status: timing does not decide whether anything passes.
"""
import json
import sys

RAW = "nvtx3/scoped_range"
REG = "nvtx3/scoped_range_in_registered"
TITLES = {
    "none": "no tool",
    "null": "null tool",
    "capture": "nvtxpp-capture",
    "nsys": "nsys -t nvtx",
}


def load_gbench(path):
    with open(path) as f:
        doc = json.load(f)
    medians, context = {}, dict(doc.get("context", {}))
    for b in doc["benchmarks"]:
        context.setdefault("repetitions", b.get("repetitions", 1))
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        medians[name] = b["cpu_time"] * scale  # a single run is its own median
    return medians, context


def load_icount(path):
    counts = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                counts[parts[0]] = float(parts[1])
    return counts


def fmt_ns(v):
    if v is None:
        return "pending"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def fmt_ratio(v, base):
    if v is None or not base:
        return "-"
    return f"{v / base:.2f}x"


def main(argv):
    runs, icounts = [], []
    args = iter(argv)
    for a in args:
        if a == "--icount":
            mode, path = next(args).split("=", 1)
            icounts.append((mode, load_icount(path)))
        else:
            mode, path = a.split("=", 1)
            if path in ("", "pending"):
                runs.append((mode, None, {}))
            else:
                medians, ctx = load_gbench(path)
                runs.append((mode, medians, ctx))
    names = []
    for _, m, _ in runs:
        for n in m or {}:
            if n not in names:
                names.append(n)

    for mode, m, ctx in runs:
        if m is not None:
            print(f"# {TITLES.get(mode, mode)}: {ctx.get('host_name', '?')}, "
                  f"{ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz, "
                  f"load {ctx.get('load_avg', '?')}, "
                  f"{ctx.get('repetitions', '?')} repetitions (median CPU time per iteration)")
    print()
    head = ["case"]
    for mode, m, _ in runs:
        t = TITLES.get(mode, mode)
        head += [f"{t} ns", f"{t} / nvtx3"]
        if mode != "none":
            head.append(f"{t} / nvtx3 reg.")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for n in names:
        row = [f"`{n}`"]
        for mode, m, _ in runs:
            v = (m or {}).get(n) if m is not None else None
            row += [fmt_ns(v) if m is not None else "pending",
                    fmt_ratio(v, (m or {}).get(RAW)) if m is not None else "-"]
            if mode != "none":
                row.append(fmt_ratio(v, (m or {}).get(REG)) if m is not None else "-")
        print("| " + " | ".join(row) + " |")

    if icounts:
        print()
        head = ["case"] + [f"{TITLES.get(mode, mode)} instr." for mode, _ in icounts] + \
               [f"{TITLES.get(mode, mode)} / nvtx3" for mode, _ in icounts]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        inames = [n for n in names if any(n in c for _, c in icounts)] or \
                 sorted({n for _, c in icounts for n in c})
        for n in inames:
            row = [f"`{n}`"] + [f"{c[n]:.1f}" if n in c else "-" for _, c in icounts] + \
                  [fmt_ratio(c.get(n), c.get(RAW)) for _, c in icounts]
            print("| " + " | ".join(row) + " |")

    print()
    print("Goals (issue 5), checked on the figures above:")

    def check(label, value, limit, at_most=True):
        if value is None:
            print(f"- {label}: not measured")
            return
        ok = value <= limit if at_most else value >= limit
        rel = "<=" if at_most else ">="
        print(f"- {label}: {value:.2f}x (goal {rel} {limit}x) {'met' if ok else 'MISSED'}")

    def ratio(m, a, b):
        if not m or a not in m or b not in m or not m[b]:
            return None
        return m[a] / m[b]

    sources = [(mode, m) for mode, m, _ in runs] + [(mode + " (instr.)", c) for mode, c in icounts]
    for mode, m in sources:
        if not m:
            continue
        t = TITLES.get(mode.split(" ")[0], mode)
        if mode.startswith("none"):
            check(f"[{t}{' instr.' if 'instr' in mode else ''}] nvtxpp/static vs {RAW}",
                  ratio(m, "nvtxpp/static", RAW), 1.1)
            for k in ("1", "3"):
                check(f"[{t}{' instr.' if 'instr' in mode else ''}] nvtxpp/formatted_{k} vs "
                      "nvtxpp/static", ratio(m, f"nvtxpp/formatted_{k}", "nvtxpp/static"), 2.0)
                check(f"[{t}{' instr.' if 'instr' in mode else ''}] naive/fmt_format_{k} vs "
                      f"nvtxpp/formatted_{k} (times cheaper)",
                      ratio(m, f"naive/fmt_format_{k}", f"nvtxpp/formatted_{k}"), 20.0,
                      at_most=False)
        else:
            for c in ("nvtxpp/static", "nvtxpp/registered_in", "nvtxpp/annotate_function"):
                check(f"[{t}{' instr.' if 'instr' in mode else ''}] {c} vs {REG}",
                      ratio(m, c, REG), 1.05)


if __name__ == "__main__":
    main(sys.argv[1:])
