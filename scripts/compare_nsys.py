#!/usr/bin/env python3
"""Compares nvtxpp-capture's SQLite output with Nsight Systems' export of the same program,
through nsys's own stats reports.

  compare_nsys.py OURS.sqlite NSYS.sqlite [--nsys PATH | --runner SCRIPT] [--tolerance 0.25]
                  [--floor-ns 1000] [--kernel-names mangled|demangled|base] [--lenient R,...]
                  [--noise NSYS2.sqlite]

Runs `nsys stats --force-export=false --format csv --report R FILE` for each report R of
nvtx_sum, nvtx_gpu_proj_sum, nvtx_kern_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
cuda_api_sum on both files (or `python3 SCRIPT R FILE`, a local runner printing the report's
CSV, with --runner), then per report:
  - the same rows (range names and styles, kernels, copy kinds, API functions), with equal
    counts (instances, calls, GPU ops, kernel instances);
  - time columns (Total, Avg, Med, Min, Max) equal within --tolerance (relative) or --floor-ns
    (absolute), whichever is looser; the largest relative difference is reported per table.
With --noise (more nsys exports of the same program, repeatable), a time also matches when the
two tools differ by at most twice the largest difference between NSYS.sqlite and another nsys
run in that cell (run-to-run noise: a range of a few microseconds varies by tens of percent
from run to run), and each row shows that nsys-vs-nsys difference beside ours-vs-nsys.
Kernels are compared by mangled name by default (the demangled forms of nsys and of the C++
runtime may spell types differently); nvtx_kern_sum rows are keyed without PID/TID (two runs,
two pids).

Prints a side-by-side markdown table per report; exits 0 when everything matches, 1 on a
mismatch, 2 when a report could not be run. --lenient R makes rows found in one file only a
note rather than a mismatch for report R (e.g. cuda_api_sum when the two tools trace different
driver calls).
"""
import argparse
import csv
import io
import os
import re
import subprocess
import sys

REPORTS = ["nvtx_sum", "nvtx_gpu_proj_sum", "nvtx_kern_sum", "cuda_gpu_kern_sum",
           "cuda_gpu_mem_time_sum", "cuda_api_sum"]
# The six reports a program's GPU work is judged by (tests/capture/corpus): every range, every
# GPU operation under its range, every kernel, copy and memset, by time and by size.
GPU_REPORTS = ["nvtx_sum", "nvtx_gpu_proj_sum", "nvtx_kern_sum", "cuda_gpu_kern_sum",
               "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"]

# Per report: key columns, count columns (compared exactly), time columns (within tolerance).
SPEC = {
    "nvtx_sum": (["Range", "Style"], ["Instances"],
                 ["Total Time", "Avg", "Med", "Min", "Max"]),
    "nvtx_gpu_proj_sum": (["Range", "Style"],
                          ["Range Instances", "Total GPU Ops", "Avg Range Lvl", "Avg Num Child"],
                          ["Total Proj Time", "Total Range Time", "Proj Avg", "Proj Med",
                           "Proj Min", "Proj Max"]),
    "nvtx_kern_sum": (["NVTX Range", "Style", "Kernel Name"], ["NVTX Inst", "Kern Inst"],
                      ["Total Time", "Avg", "Med", "Min", "Max"]),
    "cuda_gpu_kern_sum": (["Name"], ["Instances"], ["Total Time", "Avg", "Med", "Min", "Max"]),
    "cuda_gpu_mem_time_sum": (["Operation"], ["Count"],
                              ["Total Time", "Avg", "Med", "Min", "Max"]),
    "cuda_api_sum": (["Name"], ["Num Calls"], ["Total Time", "Avg", "Med", "Min", "Max"]),
    # Sizes are the program's own: compared exactly, as counts.
    "cuda_gpu_mem_size_sum": (["Operation"], ["Count", "Total", "Avg", "Med", "Min", "Max"], []),
}
KERNEL_REPORTS = {"nvtx_kern_sum", "cuda_gpu_kern_sum"}


class RunError(Exception):
    pass


def column_name(header):
    """'Total Time:dur_ns' or 'Total Time (ns)' -> 'Total Time'."""
    header = header.split(":", 1)[0]
    return re.sub(r"\s*\((ns|us|ms|s|%|B|MB)\)$", "", header).strip()


def parse_csv(text, report):
    """The report's rows from a stats run's stdout, as dicts keyed by column_name(). Lines
    before the CSV header (nsys's 'Processing ...' notes, blank lines) are skipped."""
    report = report.split(":")[0]
    keys = SPEC[report][0]
    lines = text.splitlines()
    for i, line in enumerate(lines):
        try:
            fields = next(csv.reader([line]))
        except (csv.Error, StopIteration):
            continue
        names = [column_name(f) for f in fields]
        if all(k in names for k in keys):
            reader = csv.reader(io.StringIO("\n".join(lines[i + 1:])))
            rows = []
            for r in reader:
                if len(r) != len(names):
                    break  # the next report's notes, if any
                rows.append(dict(zip(names, r)))
            return rows
    if re.search(r"does not contain|SKIPPED|no data", text, re.I):
        return []  # the report had nothing to summarise in this file
    if all(not l.strip() or l.startswith("Processing [") for l in text.splitlines()):
        # The report ran and printed no table: its tables were there but had no rows (an empty
        # table where nsys's export leaves the table out and the report says SKIPPED).
        return []
    raise RunError(f"{report}: no CSV table in the output:\n{text[:2000]}")


def run_report(args, report, path):
    if args.runner:
        cmd = [sys.executable, args.runner, report, path]
    else:
        cmd = [args.nsys, "stats", "--force-export=false", "--format", "csv", "--report", report,
               path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = p.stdout + ("\n" + p.stderr if p.returncode != 0 else "")
    if p.returncode != 0 and not re.search(r"does not contain|SKIPPED", out, re.I):
        raise RunError(f"{' '.join(cmd)} exited {p.returncode}:\n{out[:2000]}")
    return parse_csv(p.stdout if p.returncode == 0 else out, report)


def number(s):
    s = (s or "").replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


def rel(a, b):
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def aggregate(rows, report, fold_digits=False):
    """Rows by key. nvtx_kern_sum rows of several threads with one key are added up (counts
    and totals; other time columns keep the first). fold_digits: every run of digits in a key
    reads `#`, and the rows that then share a key are added up the same way (names that carry
    an id of the run, as XLA's `program_id=6632`, compared across runs)."""
    keys, counts, times = SPEC[report]
    out = {}
    for r in rows:
        k = tuple(r.get(c, "") for c in keys)
        if fold_digits:
            k = tuple(re.sub(r"\d+", "#", x) for x in k)
        if k in out and (report == "nvtx_kern_sum" or fold_digits):
            prev = out[k]
            for c in counts + ["Total Time"]:
                a, b = number(prev.get(c)), number(r.get(c))
                if a is not None and b is not None:
                    total = a + b
                    prev[c] = str(int(total)) if total == int(total) else str(total)
        else:
            out[k] = dict(r)
    return out


def compare(report, ours, theirs, args, again=None):
    """Returns (markdown lines, mismatch count, max relative time difference, notes, max
    nsys-vs-nsys relative difference). `again`: the report's rows of a second nsys run."""
    keys, counts, times = SPEC[report]
    fold = args.fold_digits
    a, b = aggregate(ours, report, fold), aggregate(theirs, report, fold)
    n = [aggregate(r, report, fold) for r in again] if again is not None else None
    max_noise = 0.0
    lenient = report in args.lenient
    mismatches = 0
    max_rel = 0.0
    notes = []
    head = keys + [f"{c} (ours / nsys)" for c in counts] + [
        "Total (ours)", "Total (nsys)", "max time diff"] + (
        ["nsys vs nsys"] if n is not None else []) + ["ok"]
    total_col = times[0] if times else counts[0]
    time_mismatches = 0
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k in sorted(set(a) | set(b), key=lambda k: [str(x) for x in k]):
        ra, rb = a.get(k), b.get(k)
        cells = [c.replace("|", "\\|") for c in k]
        if ra is None or rb is None:
            where = "nsys" if ra is None else "ours"
            notes.append(f"only in {where}: {' / '.join(k)}")
            if not lenient:
                mismatches += 1
            r = ra or rb
            cells += [(r.get(c, "") + " / -") if ra else ("- / " + r.get(c, "")) for c in counts]
            cells += [ra.get(total_col, "-") if ra else "-", rb.get(total_col, "-") if rb else "-",
                      ""] + ([""] if n is not None else []) + ["note" if lenient else "MISSING"]
            lines.append("| " + " | ".join(cells) + " |")
            continue
        ok = True
        counts_ok = True
        rns = [m[k] for m in n if k in m] if n is not None else []
        for c in counts:
            x, y = number(ra.get(c)), number(rb.get(c))
            cell = f"{ra.get(c, '')} / {rb.get(c, '')}"
            if x != y:
                # A count nsys itself does not reproduce (migrations on demand): ours may differ
                # from nsys by twice what nsys differs from itself, and the cell says so.
                spread = max((abs(y - number(rn.get(c))) for rn in rns
                              if x is not None and y is not None
                              and number(rn.get(c)) is not None), default=0)
                if spread > 0 and abs(x - y) <= 2 * spread:
                    cell += f" (nsys varies by {spread:g})"
                else:
                    ok = counts_ok = False
            cells.append(cell)
        row_rel = 0.0
        row_noise = None
        for c in times:
            x, y = number(ra.get(c)), number(rb.get(c))
            if x is None or y is None:
                continue
            d = rel(x, y)
            row_rel = max(row_rel, d)
            allowed = max(args.tolerance * max(abs(x), abs(y)), args.floor_ns)
            for rn in rns:
                z = number(rn.get(c))
                if z is not None:
                    row_noise = max(row_noise or 0.0, rel(y, z))
                    allowed = max(allowed, 2 * abs(y - z))
            if abs(x - y) > allowed:
                ok = False
        max_rel = max(max_rel, row_rel)
        max_noise = max(max_noise, row_noise or 0.0)
        cells += [ra.get(total_col, ""), rb.get(total_col, ""), f"{row_rel * 100:.1f}%"]
        if n is not None:
            cells.append("-" if row_noise is None else f"{row_noise * 100:.1f}%")
        if counts_ok and not ok and args.counts_only:
            cells.append("times differ")
            time_mismatches += 1
        else:
            cells.append("yes" if ok else "NO")
            if not ok:
                mismatches += 1
        lines.append("| " + " | ".join(cells) + " |")
    args.time_mismatches = getattr(args, "time_mismatches", 0) + time_mismatches
    return lines, mismatches, max_rel, notes, max_noise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ours")
    ap.add_argument("nsys_file")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--nsys", default="nsys", help="the nsys binary (default: nsys on PATH)")
    g.add_argument("--runner", help="a local script run as `python3 SCRIPT REPORT FILE`")
    ap.add_argument("--tolerance", type=float, default=0.25,
                    help="relative tolerance on times (default 0.25)")
    ap.add_argument("--floor-ns", type=float, default=1000.0,
                    help="absolute tolerance on times in ns (default 1000)")
    ap.add_argument("--kernel-names", choices=["mangled", "demangled", "base"], default="mangled")
    ap.add_argument("--lenient", default="",
                    help="comma-separated reports where rows in one file only are notes")
    ap.add_argument("--reports", default=",".join(REPORTS),
                    help="comma-separated reports, or `gpu` for the six of GPU_REPORTS")
    ap.add_argument("--counts-only", action="store_true",
                    help="rows and counts decide; time cells outside the tolerance are noted")
    ap.add_argument("--fold-digits", action="store_true",
                    help="compare names with every run of digits read as # (rows added up): "
                         "names that carry an id of the run, as XLA's")
    ap.add_argument("--json", help="also write {report: [rows ours, rows nsys, mismatches]}")
    ap.add_argument("--noise", action="append", default=[],
                    help="another nsys export of the same program (run-to-run noise; repeatable)")
    args = ap.parse_args()
    args.lenient = set(filter(None, args.lenient.split(",")))
    for f in [args.ours, args.nsys_file] + args.noise:
        if not os.path.isfile(f):
            print(f"compare_nsys: no file {f}", file=sys.stderr)
            return 2

    total_mismatch = 0
    print(f"# nvtxpp-capture vs nsys: `{os.path.basename(args.ours)}` / "
          f"`{os.path.basename(args.nsys_file)}`\n")
    print(f"Times within {args.tolerance * 100:g}% or {args.floor_ns:g} ns"
          + (", or twice the largest difference between nsys runs of the same program (`"
             + "`, `".join(os.path.basename(f) for f in args.noise) + "`)" if args.noise else "")
          + ".\n")
    if args.fold_digits:
        print("Names compared with every run of digits read as `#` (--fold-digits).\n")
    summary = []
    if args.reports == "gpu":
        args.reports = ",".join(GPU_REPORTS)
    for report in filter(None, args.reports.split(",")):
        if report not in SPEC:
            print(f"compare_nsys: unknown report {report}", file=sys.stderr)
            return 2
        name = report
        if report in KERNEL_REPORTS and args.kernel_names != "demangled":
            name = f"{report}:{args.kernel_names}"
        try:
            ours = run_report(args, name, args.ours)
            theirs = run_report(args, name, args.nsys_file)
            again = [run_report(args, name, f) for f in args.noise] if args.noise else None
        except RunError as e:
            print(f"compare_nsys: {e}", file=sys.stderr)
            return 2
        lines, mism, max_rel, notes, noise = compare(report, ours, theirs, args, again)
        total_mismatch += mism
        summary.append((report, len(ours), len(theirs), mism, max_rel, noise))
        print(f"## {name}\n")
        print("\n".join(lines))
        if notes:
            print()
            print("\n".join(f"- {n}" for n in notes))
        print(f"\nRows: ours {len(ours)}, nsys {len(theirs)}; mismatches {mism}; "
              f"max relative time difference {max_rel * 100:.1f}%\n")
    print("## Summary\n")
    extra = " nsys vs nsys |" if args.noise else ""
    print("| report | rows (ours / nsys) | mismatches | max time diff |" + extra)
    print("|---|---|---|---|" + ("---|" if args.noise else ""))
    for report, na, nb, mism, max_rel, noise in summary:
        print(f"| {report} | {na} / {nb} | {mism} | {max_rel * 100:.1f}% |"
              + (f" {noise * 100:.1f}% |" if args.noise else ""))
    if args.counts_only and getattr(args, "time_mismatches", 0):
        print(f"\n{args.time_mismatches} row(s) with equal counts and time cells outside the "
              "tolerance (noted, --counts-only)")
    if args.json:
        import json
        with open(args.json, "w") as fh:
            json.dump({r: [na, nb, mism] for r, na, nb, mism, _, _ in summary}, fh)
    return 1 if total_mismatch else 0


if __name__ == "__main__":
    sys.exit(main())
