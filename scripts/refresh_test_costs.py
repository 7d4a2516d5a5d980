#!/usr/bin/env python3
"""Rewrites the NVTXPP_TEST_COSTS table of tests/test_costs.cmake from the timings ctest kept in
the builds scripts/test.sh made (Testing/Temporary/CTestCostData.txt of build/release,
build/asan and build/tsan, or the three directories given).

usage: scripts/refresh_test_costs.py [RELEASE ASAN TSAN] [--min SECONDS]
A test is listed when it took at least --min seconds (default 2.0) in one of the builds; its
three figures are the seconds of its latest run in each (0.0 where it did not run). Only the
order in which ctest starts the tests depends on them.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COSTS = os.path.join(HERE, "..", "tests", "test_costs.cmake")
# Figures kept whatever was measured: the CUDA compile matrix's fixture (an install, quick)
# starts first, so that the matrix's 22 builds can start early.
PINNED = {"consumer_cuda_install": (30.0, 0.0, 0.0)}


def read_costs(build):
    """{test: seconds of its latest run} from a build directory's CTestCostData.txt."""
    path = os.path.join(build, "Testing", "Temporary", "CTestCostData.txt")
    costs = {}
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("---"):
                    break  # the failed tests follow
                parts = line.split()
                if len(parts) == 3:
                    costs[parts[0]] = float(parts[2])
    except OSError as e:
        sys.exit(f"refresh_test_costs: cannot read {path}: {e.strerror}")
    return costs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="*", default=["build/release", "build/asan", "build/tsan"])
    ap.add_argument("--min", type=float, default=2.0)
    a = ap.parse_args()
    if len(a.builds) != 3:
        ap.error("three build directories: Release, ASan+UBSan, TSan")
    columns = [read_costs(b) for b in a.builds]
    names = sorted({n for c in columns for n, s in c.items() if s >= a.min} - set(PINNED))
    rows = [f"  {n:<46}" + "".join(f"{c.get(n, 0.0):6.1f}" for c in columns) for n in names]
    rows += [f"  {n:<46}" + "".join(f"{v:6.1f}" for v in figures) for n, figures in PINNED.items()]
    text = open(COSTS).read()
    new, count = re.subn(r"set\(NVTXPP_TEST_COSTS\n.*?\n\)", "set(NVTXPP_TEST_COSTS\n" +
                         "\n".join(rows) + "\n)", text, count=1, flags=re.S)
    if count != 1:
        sys.exit("refresh_test_costs: no NVTXPP_TEST_COSTS table in tests/test_costs.cmake")
    with open(COSTS, "w") as f:
        f.write(new)
    print(f"{len(rows)} tests listed in tests/test_costs.cmake")


if __name__ == "__main__":
    main()
