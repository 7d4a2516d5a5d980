#!/usr/bin/env python3
"""nvtxpp-capture's whole-process NVTX recording cost against its floor (docs/performance.md).

Runs `nvtxpp_capture_app overhead N` under nvtxpp-capture RUNS times. Each run makes three
passes; each pass times N pairs of TSC reads (the floor: the two timestamps a range needs) and
then N nvtxRangePushA/nvtxRangePop ranges, so each pair of figures comes from the same moment
of the machine. Prints every pass, then medians of the differences (range minus floor): over
all passes, and over the first pass of each run alone (thread registration and the first
blocks included).

--fallback: each run twice, alternating which goes first: as usual, and with the block writer
thread refused (tests/capture/heavy/refuse_threads.cpp, preloaded), so that the program's own
thread writes each 64 KiB block it fills (the fallback our_threads.cpp says out loud). Prints both
medians and their ratio, from the same runs.

usage: bench/recording_cost.py BUILD_DIR [--runs 10] [--ranges 2000000] [--capture PATH]
                               [--fallback]
Exit status 0 (a benchmark: it reports, it does not judge); 2 when the build lacks the tools.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--ranges", type=int, default=2_000_000)
    ap.add_argument("--capture", help="nvtxpp-capture to use (default: the build's)")
    ap.add_argument("--fallback", action="store_true",
                    help="also each run with the writer thread refused, and the ratio")
    a = ap.parse_args()
    capture = a.capture or os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    app = os.path.join(a.build, "tests", "capture", "nvtxpp_capture_app")
    for path in (capture, app):
        if not os.access(path, os.X_OK):
            print(f"recording_cost: {path} not built", file=sys.stderr)
            return 2
    raw = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    refuse = os.path.join(a.build, "tests", "capture", "libnvtxpp_refuse_threads.so")
    if a.fallback and not os.path.exists(refuse):
        print(f"recording_cost: {refuse} not built", file=sys.stderr)
        return 2
    configs = ["writer thread", "fallback"] if a.fallback else ["writer thread"]
    passes = []  # (run, pass, floor ns, range ns, config)
    for run in range(a.runs):
        order = configs if run % 2 == 0 else configs[::-1]
        for config in order:
            env = dict(os.environ, TMPDIR=raw)
            if config == "fallback":
                env.update(LD_PRELOAD=refuse, NVTXPP_TEST_REFUSE_THREADS="EAGAIN")
            p = subprocess.run([capture, "--summary-only", "--", app, "overhead", str(a.ranges)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env, check=False)
            if config == "fallback" and "block writer thread could not start" not in p.stderr:
                print(f"run {run + 1}: the writer thread was not refused: {p.stderr.strip()}")
                continue
            found = re.findall(r"two_tsc_ns=([0-9.]+) push_pop_ns=([0-9.]+)", p.stdout)
            if not found:
                print(f"run {run + 1}: no figures (exit {p.returncode}; not x86-64?)")
                continue
            for i, (floor, rng) in enumerate(found):
                passes.append((run + 1, i + 1, float(floor), float(rng), config))
                print(f"run {run + 1} {config} pass {i + 1}: two TSC reads {float(floor):6.2f} ns, "
                      f"push+pop {float(rng):6.2f} ns, difference "
                      f"{float(rng) - float(floor):6.2f} ns")
    if not passes:
        return 2

    def summary(what, rows):
        d = [r[3] - r[2] for r in rows]
        print(f"{what}: n {len(rows)}, floor median {statistics.median(r[2] for r in rows):.2f} ns, "
              f"push+pop median {statistics.median(r[3] for r in rows):.2f} ns, difference median "
              f"{statistics.median(d):.2f} ns (min {min(d):.2f}, max {max(d):.2f})")

    for config in configs:
        mine = [r for r in passes if r[4] == config]
        if not mine:
            continue
        print(f"== {config}")
        summary("all passes", mine)
        summary("first passes", [r for r in mine if r[1] == 1])
        summary("later passes", [r for r in mine if r[1] > 1])
    if a.fallback:
        med = {c: statistics.median(r[3] for r in passes if r[4] == c) for c in configs
               if any(r[4] == c for r in passes)}
        if len(med) == 2:
            print(f"fallback / writer thread, push+pop medians: "
                  f"{med['fallback']:.2f} / {med['writer thread']:.2f} ns = "
                  f"{med['fallback'] / med['writer thread']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
