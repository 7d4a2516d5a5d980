#!/usr/bin/env python3
"""Corpus: a Numba program, the classic reduce example's shape. Numba compiles its kernels at
run time and launches them, and makes its copies, through the CUDA driver API (cuLaunchKernel,
cuMemcpyHtoD...). NVTX ranges come through the NVTX C API (ctypes over libcorpus_nvtx.so, as the
Python `nvtx` package calls it).

    numba_reduce.py LIBCORPUS_NVTX
"""
import ctypes
import sys

import numpy as np

if not hasattr(np, "row_stack"):
    # The GPU machine's numba-cuda names np.row_stack, which numpy 2.5 removed (an alias of
    # np.vstack): restore the alias so numba-cuda imports there.
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

nvtx = None  # the NVTX C API through ctypes (load_nvtx); numba_steps.py imports the kernels


def load_nvtx(path):
    global nvtx
    nvtx = ctypes.CDLL(path)
    nvtx.corpus_push.argtypes = [ctypes.c_char_p]
    return nvtx


class rng:
    def __init__(self, name):
        self.name = name.encode()

    def __enter__(self):
        nvtx.corpus_push(self.name)

    def __exit__(self, *exc):
        nvtx.corpus_pop()


@cuda.jit
def partial_reduce(array, partial):
    i = cuda.grid(1)
    if i < partial.size:
        s = 0.0
        j = i
        while j < array.size:
            s += array[j]
            j += partial.size
        partial[i] = s


@cuda.jit
def single_thread_sum(partial, out):
    if cuda.grid(1) == 0:
        s = 0.0
        for k in range(partial.size):
            s += partial[k]
        out[0] = s


def main():
    load_nvtx(sys.argv[1])
    n = 1 << 22
    host = np.ones(n, dtype=np.float32)
    with rng("H2D Memory"):
        array = cuda.to_device(host)
        partial = cuda.device_array(1024, dtype=np.float32)
        out = cuda.device_array(1, dtype=np.float32)
    with rng("Kernels"):
        for _ in range(5):
            partial_reduce[8, 128](array, partial)
            single_thread_sum[1, 1](partial, out)
    with rng("D2H Memory"):
        result = out.copy_to_host()
    if result[0] != n:
        print(f"wrong sum {result[0]}, want {n}", file=sys.stderr)
        return 1
    print("sum", result[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
