#!/usr/bin/env python3
"""The corpus results table (markdown) from compare_corpus.py's NAME.json files.

    corpus_table.py DIR [NAME...]     (default: every NAME.json in DIR)

One row per program: how many of the six reports agree, then each report's rows (ours/nsys)
with the mismatches, and the capture's line about GPU work with no launching call.
"""
import glob
import json
import os
import sys

REPORTS = ["nvtx_sum", "nvtx_gpu_proj_sum", "nvtx_kern_sum", "cuda_gpu_kern_sum",
           "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"]


def main():
    folder = sys.argv[1]
    names = sys.argv[2:]
    paths = [os.path.join(folder, n + ".json") for n in names] if names else sorted(
        p for p in glob.glob(os.path.join(folder, "*.json")) if not p.endswith(".report.json"))
    print("| program | reports agreeing | " + " | ".join(REPORTS) + " | unattributed |")
    print("|---|---|" + "---|" * len(REPORTS) + "---|")
    for path in paths:
        name = os.path.basename(path)[:-5]
        if not os.path.exists(path):
            print(f"| {name} | not run | " + " | ".join("-" for _ in REPORTS) + " | - |")
            continue
        with open(path) as fh:
            r = json.load(fh)
        agree = sum(1 for k in REPORTS if k in r and r[k][2] == 0 and r[k][0] == r[k][1])
        cells = [f"{r[k][0]}/{r[k][1]}" + ("" if r[k][2] == 0 else f" ({r[k][2]} off)")
                 if k in r else "-" for k in REPORTS]
        print(f"| {name} | {agree}/6 | " + " | ".join(cells) + f" | {r.get('unattributed') or 0} |")


if __name__ == "__main__":
    main()
