#!/usr/bin/env python3
"""Corpus: a PyTorch training loop (an MLP block stack, AdamW), each step inside an NVTX range
"step" (torch.cuda.nvtx), ending with a synchronize. For the leave-it-on checks
(scripts/verify_leave_on_gpu.sh): the sampled mode, triggers and raises, job dumps, windows.

    torch_steps.py [--seconds S] [--slow-at T]
Five warm-up steps ("warmup" ranges: the caching allocator, cuBLAS heuristics), then steps for S
seconds (default 4); the first step that starts T seconds or more after the loop's start runs
its forward and backward ten times (a slow step for a trigger). Prints "steps=N mean_step_ns=M".
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--slow-at", type=float, default=-1.0)
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    width = 2048
    model = torch.nn.Sequential(*[
        torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                            torch.nn.Linear(4 * width, width), torch.nn.LayerNorm(width))
        for _ in range(4)]).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(256, width, device=dev)
    y = torch.randn(256, width, device=dev)

    def step(name, repeats):
        torch.cuda.nvtx.range_push(name)
        for _ in range(repeats):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()

    for _ in range(5):
        step("warmup", 1)
    start = time.monotonic()
    slowed = a.slow_at < 0
    steps = 0
    while time.monotonic() - start < a.seconds:
        slow = not slowed and time.monotonic() - start >= a.slow_at
        slowed = slowed or slow
        step("step", 10 if slow else 1)
        steps += 1
    ns = int((time.monotonic() - start) * 1e9)
    print(f"steps={steps} mean_step_ns={ns // max(steps, 1)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
