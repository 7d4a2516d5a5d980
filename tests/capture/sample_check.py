#!/usr/bin/env python3
"""A sampled trace against a full one of the same program (scripts/verify_sample_gpu.sh, on
the GPU machine): in the sampled trace every kept launch started inside a period (the edge
rule), and each step wholly inside a period has, kernel for kernel, what a step of the full
capture has (same kernel names and counts, each under its step).

usage: sample_check.py FULL.json SAMPLED.json    exit 0 when all holds, 1 otherwise
"""
import collections
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["traceEvents"]


def periods(events):
    begin, out = {}, []
    for e in events:
        if e.get("cat") == "nvtxpp-capture" and e.get("name", "").startswith("GPU detail: "):
            if e["ph"] == "b":
                begin[e["id"]] = e["ts"]
            elif e["ph"] == "e" and e["id"] in begin:
                out.append((begin.pop(e["id"]), e["ts"]))
    return sorted(out)


def per_step(events):
    """Kernel names (with counts) launched inside each `step` range, by the step's start."""
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("ph") == "X" and e.get("name") == "step")
    calls = {e["args"]["correlation"]: e["ts"] for e in events
             if e.get("cat") == "cuda_api" and e.get("ph") == "X"}
    starts = [s for s, _ in steps]
    out = {s: collections.Counter() for s in starts}
    import bisect
    for k in events:
        if k.get("cat") != "cuda_kernel" or k.get("ph") != "X":
            continue
        t = calls.get(k["args"]["correlation"])
        if t is None:
            continue
        i = bisect.bisect_right(starts, t) - 1
        if i >= 0 and t <= steps[i][1]:
            out[starts[i]][k["name"]] += 1
    return steps, calls, out


def main():
    full = load(sys.argv[1])
    sampled = load(sys.argv[2])
    bad = []
    _, _, full_steps = per_step(full)
    typical = collections.Counter(tuple(sorted(c.items())) for c in full_steps.values()
                                  ).most_common(1)[0][0]
    ps = periods(sampled)
    steps, calls, got = per_step(sampled)
    outside = [t for t in calls.values() if not any(s <= t < e for s, e in ps)]
    if outside:
        bad.append(f"{len(outside)} launch(es) outside every period")
    inside = [s for s, e in steps if any(ps_s <= s and e < ps_e for ps_s, ps_e in ps)]
    differ = [s for s in inside if tuple(sorted(got[s].items())) != typical]
    if not inside:
        bad.append("no step wholly inside a period")
    if differ:
        bad.append(f"{len(differ)} of {len(inside)} steps inside a period differ from the full "
                   f"capture's step: {dict(got[differ[0]])} vs {dict(typical)}")
    n_kernels = sum(n for _, n in typical)
    print(f"- sampled against full: {len(ps)} period(s), {len(inside)} step(s) wholly inside "
          f"them, each with the full capture's {n_kernels} kernels "
          f"({len(inside) - len(differ)} of {len(inside)} match); {len(calls)} launch(es) kept, "
          f"{len(outside)} outside a period")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
