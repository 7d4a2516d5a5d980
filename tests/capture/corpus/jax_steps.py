#!/usr/bin/env python3
"""Corpus: a JAX training loop. XLA compiles the step (its own kernels, cuBLAS's GEMMs through
the autotuner) and, when an NVTX tool is attached, writes its own NVTX ranges for each module and
thunk it runs; the loop adds a "step" range per step through jax.profiler.TraceAnnotation.
For scripts/verify_pytorch_gpu.sh's `jax` part (our reports against Nsight Systems').

    jax_steps.py [--steps N] [--warmup W] [--batch B]
W warm-up steps (compilation and autotuning), then N steps (default 30). Prints
"steps=N mean_step_ns=M median_step_ns=D".
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    width, layers = 1024, 4
    key = jax.random.PRNGKey(0)
    keys = jax.random.split(key, layers + 2)
    params = [jax.random.normal(k, (width, width), jnp.float32) / width**0.5 for k in keys[:layers]]
    x = jax.random.normal(keys[-2], (a.batch, width), jnp.float32)
    y = jax.random.normal(keys[-1], (a.batch, width), jnp.float32)

    def loss(ps, x, y):
        h = x
        for w in ps:
            h = jax.nn.gelu(h @ w)
        return jnp.mean((h - y) ** 2)

    @jax.jit
    def step(ps, x, y):
        g = jax.grad(loss)(ps, x, y)
        return [w - 1e-3 * gw for w, gw in zip(ps, g)]

    for _ in range(a.warmup):
        with jax.profiler.TraceAnnotation("warmup"):
            params = step(params, x, y)
            jax.block_until_ready(params)
    times = []
    for _ in range(a.steps):
        t = time.monotonic_ns()
        with jax.profiler.TraceAnnotation("step"):
            params = step(params, x, y)
            jax.block_until_ready(params)
        times.append(time.monotonic_ns() - t)
    print(f"steps={len(times)} mean_step_ns={int(statistics.mean(times))} "
          f"median_step_ns={int(statistics.median(times))}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
