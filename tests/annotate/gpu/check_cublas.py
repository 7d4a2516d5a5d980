#!/usr/bin/env python3
"""Checks that the cublasSgemm calls of annotate_cublas appear as NVTX ranges with their
kernels under them, in a trace read by `nsys stats` (an nsys .nsys-rep/.sqlite or
nvtxpp-capture's .sqlite), or in nvtxpp-capture's Chrome JSON.

  check_cublas.py --calls N --nsys NSYS FILE.sqlite|FILE.nsys-rep
  check_cublas.py --calls N FILE.json
"""
import argparse
import json
import os
import subprocess
import sys

NAME = "cublasSgemm"


def stats(nsys, path, report):
    """The report's rows (scripts/compare_nsys.py's parser: columns without units)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "..", "scripts"))
    import compare_nsys  # noqa: E402
    # An .nsys-rep is exported afresh; an .sqlite (ours) is read as it is (nsys refuses to
    # force an export from an .sqlite).
    force = "false" if path.endswith(".sqlite") else "true"
    p = subprocess.run([nsys, "stats", f"--force-export={force}", "--format", "csv",
                        "--report", report, path], capture_output=True, text=True, timeout=600)
    try:
        rows = compare_nsys.parse_csv(p.stdout, report)
    except compare_nsys.RunError as e:
        rows = []
        print(e)
    return rows, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, required=True)
    ap.add_argument("--nsys")
    ap.add_argument("trace")
    a = ap.parse_args()
    failures = []
    if a.trace.endswith(".json"):
        with open(a.trace) as f:
            ev = json.load(f)["traceEvents"]
        ranges = [e for e in ev if e.get("ph") == "X" and NAME in e.get("name", "")
                  and e.get("args", {}).get("domain", "").startswith("libcublas")]
        kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_kernel"]
        print(f"{len(ranges)} {NAME} ranges, {len(kernels)} kernels in {a.trace}")
        if len(ranges) != a.calls:
            failures.append(f"{len(ranges)} ranges, want {a.calls}")
        if len(kernels) < a.calls:
            failures.append(f"{len(kernels)} kernels, want at least {a.calls}")
    else:
        rows, raw = stats(a.nsys, a.trace, "nvtx_sum")
        hits = [r for r in rows if NAME in r.get("Range", "")]
        print(raw)
        n = sum(int(r["Instances"].replace(",", "")) for r in hits)
        if n != a.calls:
            failures.append(f"nvtx_sum: {n} {NAME} instances, want {a.calls}")
        rows, raw = stats(a.nsys, a.trace, "nvtx_kern_sum")
        print(raw)
        under = [r for r in rows if NAME in r.get("NVTX Range", "")]
        kn = sum(int(r["Kern Inst"].replace(",", "")) for r in under)
        if not under or kn < a.calls:
            failures.append(f"nvtx_kern_sum: {kn} kernel instances under {NAME}, want >= {a.calls}")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
