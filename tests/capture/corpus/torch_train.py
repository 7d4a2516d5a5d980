#!/usr/bin/env python3
"""Corpus: a PyTorch transformer training loop, in the ways PyTorch users annotate and run it
(scripts/verify_pytorch_gpu.sh compares each under Nsight Systems and nvtxpp-capture).

    torch_train.py MODE [--steps N] [--warmup W] [--batch B] [--slow-at K] [--seconds S]
                        [--after S] [--window A/B] [--phase ON_MS/PERIOD_MS]
MODE:
  eager      torch.cuda.nvtx ranges: "step" holding "forward", "backward", "optimizer";
  emit_nvtx  the same under torch.autograd.profiler.emit_nvtx (a range per op);
  compile    the model under torch.compile (Triton kernels; compile workers as subprocesses);
  graphs     forward, backward and the optimizer step captured once in a CUDA graph
             (torch.cuda.graph), replayed each step;
  ddp        DistributedDataParallel over NCCL, under torchrun (one GPU per rank: LOCAL_RANK).
W warm-up steps ("warmup" ranges: allocator, heuristics, compilation, graph capture), then N
steps (default 30), or steps for S seconds when --seconds is given (under ddp, rank 0's clock
decides, broadcast before each step); step K (counted from 1)
runs its forward and backward eight times (a slow step for a trigger). Prints
"steps=N mean_step_ns=M median_step_ns=D" (rank 0 under ddp).
"""
import argparse
import os
import statistics
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(width)
        self.attn = torch.nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln2 = torch.nn.LayerNorm(width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                       torch.nn.Linear(4 * width, width))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


STARTED_WALL = time.time_ns()  # (--after)


def print_phase(times, walls, spec):
    """`phase inside=N:D outside=N:D after_on=N:D after_off=N:D`: the steps wholly inside and
    outside the sampled periods (which start on multiples of PERIOD of the wall clock), and those
    that hold a period's start or end, with their median durations (ns)."""
    on_ms, period_ms = (float(v) for v in spec.split("/"))
    on, period = int(on_ms * 1e6), int(period_ms * 1e6)
    groups = {"inside": [], "outside": [], "after_on": [], "after_off": []}
    for ns, wall in zip(times, walls):
        a = wall % period
        b = a + ns  # may run past the period's end
        starts_in = a < on
        if b < period and (not starts_in or b < on):
            groups["inside" if starts_in else "outside"].append(ns)
        else:
            groups["after_off" if starts_in else "after_on"].append(ns)
    print("phase " + " ".join(f"{k}={len(v)}:{int(statistics.median(v)) if v else 0}"
                              for k, v in groups.items()), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["eager", "emit_nvtx", "compile", "graphs", "ddp"])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--slow-at", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0.0)
    ap.add_argument("--after", type=float, default=0.0,
                    help="also the median of the steps that started SECONDS or more after "
                         "this script started (after a capture window closed: --duration)")
    ap.add_argument("--window", default="",
                    help="A/B: the steps that start between A and B seconds into the timed "
                         "loop run inside an NVTX range 'window' (for --capture-range=nvtx "
                         "--nvtx-capture=window); prints the median of the steps before A and "
                         "of those after B + 0.5 s, in the same process")
    ap.add_argument("--phase", default="",
                    help="ON_MS/PERIOD_MS: --cuda-sample's periods; the steps' medians by where "
                         "they fall, as a second line (bench/gpu/train_step.cu's --phase)")
    a = ap.parse_args()
    torch.manual_seed(0)
    rank = 0
    local = 0
    if a.mode == "ddp":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        torch.distributed.init_process_group("nccl")
        rank = torch.distributed.get_rank()
    dev = torch.device("cuda", local)
    width, heads, layers, seq = 512, 8, 4, 128
    model = torch.nn.Sequential(*[Block(width, heads) for _ in range(layers)]).to(dev)
    if a.mode == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=a.mode == "graphs")
    x = torch.randn(a.batch, seq, width, device=dev)
    y = torch.randn(a.batch, seq, width, device=dev)
    run_model = torch.compile(model) if a.mode == "compile" else model
    nvtx = torch.cuda.nvtx

    def forward_backward():
        nvtx.range_push("forward")
        loss = torch.nn.functional.mse_loss(run_model(x), y)
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        nvtx.range_pop()

    def optimizer():
        nvtx.range_push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=a.mode != "graphs")
        nvtx.range_pop()

    def step(name, repeats):
        nvtx.range_push(name)
        for _ in range(repeats):
            forward_backward()
        optimizer()
        torch.cuda.synchronize()
        nvtx.range_pop()

    graph = None
    if a.mode == "graphs":
        # Warm-up on a side stream, then one capture of a whole step; each step replays it.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                nvtx.range_push("warmup")
                forward_backward()
                optimizer()
                nvtx.range_pop()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            forward_backward()
            optimizer()

    def graph_step(name, repeats):
        nvtx.range_push(name)
        for _ in range(repeats):
            graph.replay()
        torch.cuda.synchronize()
        nvtx.range_pop()

    do_step = graph_step if graph is not None else step
    for _ in range(a.warmup):
        do_step("warmup", 1)
    times = []
    walls = []  # each step's start on the wall clock (--cuda-sample's periods are on it)

    flag = torch.ones(1, device=dev)

    def more(i, start):
        if a.seconds <= 0:
            return i < a.steps
        go = time.monotonic() - start < a.seconds
        if a.mode == "ddp":  # every rank stops at the same step: rank 0's clock decides
            flag.fill_(1.0 if go else 0.0)
            torch.distributed.broadcast(flag, 0)
            go = flag.item() > 0
        return go

    window = [float(v) for v in a.window.split("/")] if a.window else None

    def loop():
        start = time.monotonic()
        i = 0
        in_window = False
        while more(i, start):
            i += 1
            wall = time.time_ns()
            t = time.monotonic_ns()
            if window is not None:  # one range "window" over the steps that start in [A, B)
                at = time.monotonic() - start
                if not in_window and window[0] <= at < window[1]:
                    nvtx.range_push("window")
                    in_window = True
                elif in_window and at >= window[1]:
                    nvtx.range_pop()
                    in_window = False
            do_step("step", 8 if i == a.slow_at else 1)
            times.append(time.monotonic_ns() - t)
            walls.append(wall)

    if a.mode == "emit_nvtx":
        with torch.autograd.profiler.emit_nvtx():
            loop()
    else:
        loop()
    if rank == 0:
        print(f"steps={len(times)} mean_step_ns={int(statistics.mean(times))} "
              f"median_step_ns={int(statistics.median(times))}", flush=True)
        if a.phase:
            print_phase(times, walls, a.phase)
        if a.window:
            w0, w1 = (float(v) for v in a.window.split("/"))
            t0 = walls[0] if walls else 0
            early = [ns for ns, w in zip(times, walls) if w < t0 + int(w0 * 1e9)]
            late = [ns for ns, w in zip(times, walls) if w >= t0 + int((w1 + 0.5) * 1e9)]
            for key, group in (("before", early), ("after", late)):
                print(f"{key}={w0 if key == 'before' else w1 + 0.5:g}s steps={len(group)} "
                      f"median_step_ns={int(statistics.median(group)) if group else 0}",
                      flush=True)
        if a.after > 0:
            late = [ns for ns, w in zip(times, walls) if w >= STARTED_WALL + int(a.after * 1e9)]
            print(f"after={a.after:g}s steps={len(late)} "
                  f"median_step_ns={int(statistics.median(late)) if late else 0}", flush=True)
    if a.mode == "ddp":
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
