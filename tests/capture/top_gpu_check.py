#!/usr/bin/env python3
"""Checks `nvtxpp-capture top --json` output of a CUDA program under --cuda-sample
(scripts/verify_top_gpu.sh, issue 53 item 8): the GPU column fills while the window holds a
sampled period's GPU records, and is marked stale, with no GPU time, between them.

usage: top_gpu_check.py FILE.jsonl --range NAME [--attached]
FILE: one JSON object a line (a refresh each). NAME: the range whose row is followed ("step").
--attached: one refresh (`top --once --json PID`): the row is there, GPU detail sampled.
Exit status 0 = pass; prints what it checked.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--range", required=True)
    ap.add_argument("--attached", action="store_true")
    a = ap.parse_args()
    snaps = []
    with open(a.file, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                snaps.append(json.loads(line))
    failures = []

    def check(ok, what):
        print(("ok:   " if ok else "FAIL: ") + what)
        if not ok:
            failures.append(what)
        return ok

    def row(s):
        return next((r for r in s["rows"] if r["name"] == a.range and not r["other"]), None)

    with_row = [s for s in snaps if row(s) is not None]
    check(len(with_row) > 0, f"refreshes with a '{a.range}' row: {len(with_row)} of {len(snaps)}")
    if not with_row:
        return 1
    states = sorted({s["gpu_detail"] for s in with_row})
    check(all(st == "sampled" for st in states), f"GPU detail sampled: {states}")
    if a.attached:
        s = with_row[-1]
        print(f"attached: {a.range} total {row(s)['total_pct']:.1f}%, GPU {row(s)['gpu_pct']:.1f}%,"
              f" stale {s['gpu_stale']}, {s['ranges_per_s']:.0f} ranges/s")
        return 1 if failures else 0
    filled = [s for s in with_row if not s["gpu_stale"] and row(s)["gpu_ns"] > 0]
    stale = [s for s in with_row if s["gpu_stale"]]
    check(len(filled) > 0, f"refreshes whose GPU column is filled ('{a.range}' GPU time > 0, "
                           f"not stale): {len(filled)}")
    check(len(stale) > 0, f"refreshes marked stale (between periods): {len(stale)}")
    check(all(row(s)["gpu_ns"] == 0 and s["gpu_ns"] == 0 for s in stale),
          "stale refreshes show no GPU time: " +
          str([(row(s)["gpu_ns"], s["gpu_ns"]) for s in stale if row(s)["gpu_ns"] or s["gpu_ns"]]))
    # A step's GPU work (its launches' kernels, copies, memsets) is summed over its instances in
    # the window; it may exceed its wall time only when kernels overlap on several streams,
    # which the eager loop's single stream does not do.
    over = [(row(s)["gpu_ns"], row(s)["total_pct"]) for s in filled
            if row(s)["gpu_ns"] > 1.05 * row(s)["total_pct"] / 100 * s["window_s"] * 1e9]
    check(not over, f"'{a.range}' GPU time within its wall time in the window: {over[:3]}")
    # Share of the step's time on the GPU during periods, for the record.
    if filled:
        pct = sorted(row(s)["gpu_pct"] for s in filled)
        print(f"'{a.range}' GPU% in filled refreshes: min {pct[0]:.1f} median "
              f"{pct[len(pct) // 2]:.1f} max {pct[-1]:.1f}; covered "
              f"{sorted(round(s['gpu_covered'], 2) for s in filled)[:5]}...")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
