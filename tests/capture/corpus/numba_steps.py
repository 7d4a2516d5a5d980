#!/usr/bin/env python3
"""Corpus: a Numba program in steps. Numba compiles its kernels at run time and launches them,
and makes its copies, through the CUDA driver API; each step ("step" range, NVTX through ctypes
over libcorpus_nvtx.so) runs numba_reduce.py's two kernels and copies the sum back. For the leave-it-on checks (scripts/verify_leave_on_gpu.sh).

    numba_steps.py LIBCORPUS_NVTX [--seconds S] [--slow-at T]
Five warm-up steps ("warmup": the JIT compiles there), then steps for S seconds (default 4); the
first step that starts T seconds or more after the loop's start reduces ten times (a slow step
for a trigger). Prints "steps=N mean_step_ns=M".
"""
import argparse
import sys
import time

import numpy as np

# numba_reduce.py's kernels (importing it also restores the numpy alias numba-cuda needs)
from numba_reduce import load_nvtx, partial_reduce, single_thread_sum
from numba import cuda  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nvtx_lib")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--slow-at", type=float, default=-1.0)
    a = ap.parse_args()
    nvtx = load_nvtx(a.nvtx_lib)
    n = 1 << 24
    array = cuda.to_device(np.ones(n, dtype=np.float32))
    partial = cuda.device_array(4096, dtype=np.float32)
    out = cuda.device_array(1, dtype=np.float32)

    def step(name, repeats):
        nvtx.corpus_push(name)
        for _ in range(repeats):
            partial_reduce[32, 128](array, partial)
            single_thread_sum[1, 1](partial, out)
        result = out.copy_to_host()
        nvtx.corpus_pop()
        if result[0] != n:
            raise SystemExit(f"wrong sum {result[0]}, want {n}")

    for _ in range(5):
        step(b"warmup", 1)
    start = time.monotonic()
    slowed = a.slow_at < 0
    steps = 0
    while time.monotonic() - start < a.seconds:
        slow = not slowed and time.monotonic() - start >= a.slow_at
        slowed = slowed or slow
        step(b"step", 10 if slow else 1)
        steps += 1
    ns = int((time.monotonic() - start) * 1e9)
    print(f"steps={steps} mean_step_ns={ns // max(steps, 1)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
