#!/usr/bin/env python3
"""Compile-time cost of including nvtxpp/nvtxpp.hpp, against nvtx3/nvtx3.hpp alone.

usage: compile_time.py [--repetitions N] [--compilers g++,nvcc] [--cuda-include DIR]

Each translation unit includes one header and defines a trivial function; each is compiled N
times (-O2 -c, C++17) and the median wall time is reported, with the time of a unit that includes
nothing subtracted to give the header's own cost. Run it on a quiet machine: the other processes'
load shows up in these figures.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

UNITS = {
    "nothing": "",
    "nvtx3/nvtx3.hpp": "#include <nvtx3/nvtx3.hpp>\n",
    "nvtxpp/nvtxpp.hpp": "#include <nvtxpp/nvtxpp.hpp>\n",
}
BODY = "int nvtxpp_compile_time_probe(int x) { return x + 1; }\n"


def command(compiler, src, cuda_include):
    incs = ["-I", os.path.join(ROOT, "include"), "-I", cuda_include]
    if os.path.basename(compiler).startswith("nvcc"):
        return [compiler, "-std=c++17", "-O2", "-c", src, "-o", os.devnull] + incs
    return [compiler, "-std=c++17", "-O2", "-c", src, "-o", os.devnull] + incs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repetitions", type=int, default=7)
    ap.add_argument("--compilers", default="g++,nvcc")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="nvtxpp-ct-")
    rows = []
    try:
        for compiler in args.compilers.split(","):
            if shutil.which(compiler) is None:
                print(f"{compiler}: not found, skipped", file=sys.stderr)
                continue
            ext = ".cu" if os.path.basename(compiler).startswith("nvcc") else ".cpp"
            medians = {}
            for label, text in UNITS.items():
                src = os.path.join(tmp, label.replace("/", "_").replace(".", "_") + ext)
                with open(src, "w") as f:
                    f.write(text + BODY)
                cmd = command(compiler, src, args.cuda_include)
                subprocess.run(cmd, check=True)  # warm the file cache
                times = []
                for _ in range(args.repetitions):
                    t0 = time.perf_counter()
                    subprocess.run(cmd, check=True)
                    times.append(time.perf_counter() - t0)
                medians[label] = (statistics.median(times), min(times), max(times))
            base = medians["nothing"][0]
            for label, (med, lo, hi) in medians.items():
                rows.append((compiler, label, med, lo, hi, med - base))
            own = {label: medians[label][0] - base for label in medians}
            rows.append((compiler, "ratio nvtxpp/nvtx3 (header's own cost)",
                         own["nvtxpp/nvtxpp.hpp"] / own["nvtx3/nvtx3.hpp"], None, None, None))
            rows.append((compiler, "ratio nvtxpp/nvtx3 (whole unit)",
                         medians["nvtxpp/nvtxpp.hpp"][0] / medians["nvtx3/nvtx3.hpp"][0], None,
                         None, None))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"repetitions: {args.repetitions}; median wall time, seconds")
    print("| compiler | unit includes | median s | min s | max s | minus empty unit s |")
    print("|---|---|---|---|---|---|")
    for compiler, label, med, lo, hi, own in rows:
        if lo is None:
            print(f"| {compiler} | {label} | {med:.2f}x | | | |")
        else:
            print(f"| {compiler} | `{label}` | {med:.3f} | {lo:.3f} | {hi:.3f} | {own:.3f} |")


if __name__ == "__main__":
    main()
