#!/usr/bin/env python3
"""The leave-it-on modes on a program in steps (scripts/verify_leave_on_gpu.sh, on the GPU
machine), each against a full capture of the same program: which kernels a "step" range holds
(by the time of the API call that launched them), and whether each mode's trace holds them.

usage: leave_on_check.py MODE FULL.json TRACE.json [TRACE.json ...] [--duration S] [--label L]
  sample   TRACE: a --cuda-sample capture. Periods are there; every kept launch started in a
           period; each step wholly inside a period has the full capture's kernels.
  raise    TRACE: the trigger's dump, then the dump of the raised steps. The trigger's dump
           holds the slow step; the raised dump has a 'GPU detail: raised' period, and each step
           wholly inside it has the full capture's kernels.
  window   TRACE: a --delay/--duration capture. Its steps span no more than the duration (and a
           step); no kernel outside its steps; each step but the first and last has the full
           capture's kernels.
  job      TRACE...: each rank's dump 1 and dump 2 of a job-wide dump and its raise: every rank's
           dump 1 has steps and a period; its dump 2 a raised period whose steps have the full
           capture's kernels.
Prints one line per check ("- ..."), "FAIL: ..." for each failure; exit 0 when all hold.
"""
import argparse
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sample_check as sc  # noqa: E402  (load, periods, per_step)

bad = []


def fail(what):
    bad.append(what)
    print("FAIL:", what)


def typical_step(full):
    _, _, steps = sc.per_step(sc.load(full))
    counts = collections.Counter(tuple(sorted(c.items())) for c in steps.values() if c)
    if not counts:
        fail(f"{full}: no step with kernels in the full capture")
        return ()
    return counts.most_common(1)[0][0]


def named_periods(events, name):
    begin, out = {}, []
    for e in events:
        if e.get("cat") == "nvtxpp-capture" and e.get("name") == name:
            if e["ph"] == "b":
                begin[e["id"]] = e["ts"]
            elif e["ph"] == "e" and e["id"] in begin:
                out.append((begin.pop(e["id"]), e["ts"]))
    return sorted(out)


def steps_inside(path, ps, typical, label):
    """Steps of `path` wholly inside the periods `ps`, and how many hold the typical kernels."""
    steps, calls, got = sc.per_step(sc.load(path))
    inside = [s for s, e in steps if any(a <= s and e < b for a, b in ps)]
    match = [s for s in inside if tuple(sorted(got[s].items())) == typical]
    kernels = sum(sum(got[s].values()) for s in inside)
    if not inside:
        fail(f"{label}: no step wholly inside a period")
    elif len(match) != len(inside):
        first = next(s for s in inside if s not in match)
        fail(f"{label}: {len(inside) - len(match)} of {len(inside)} steps differ from the full "
             f"capture's: {dict(got[first])} vs {dict(typical)}")
    return steps, calls, inside, match, kernels


def check_sample(typical, trace, label):
    events = sc.load(trace)
    ps = sc.periods(events)
    if not ps:
        fail(f"{label}: no GPU detail period")
        return
    steps, calls, inside, match, kernels = steps_inside(trace, ps, typical, label)
    outside = [t for t in calls.values() if not any(a <= t < b for a, b in ps)]
    if outside:
        fail(f"{label}: {len(outside)} launch(es) outside every period")
    print(f"- {label}: {len(ps)} period(s); {len(steps)} steps, {len(inside)} wholly inside a "
          f"period, {len(match)} of them with the full capture's {sum(n for _, n in typical)} "
          f"kernels ({kernels} kernels under those steps); {len(outside)} launch(es) outside")


def check_raise(typical, trigger_dump, raised_dump, label):
    if not os.path.exists(trigger_dump) or not os.path.exists(raised_dump):
        fail(f"{label}: dumps missing: {trigger_dump} {raised_dump}")
        return
    events = sc.load(trigger_dump)
    steps = [(e["ts"], e["dur"]) for e in events if e.get("ph") == "X" and e.get("name") == "step"]
    durs = [d for _, d in steps]
    slow = [d for d in durs if durs and d > 3 * statistics.median(durs)]
    if not slow:
        fail(f"{label}: the trigger's dump holds no slow step ({len(steps)} steps)")
    raised = raised_text(typical, raised_dump, label)
    if raised:
        print(f"- {label}: the trigger's dump holds {len(steps)} steps, the slow one "
              f"{max(durs) / 1e3 if durs else 0:.1f} ms against a median "
              f"{statistics.median(durs) / 1e3 if durs else 0:.2f} ms; the raised dump: "
              f"{raised}")


def raised_text(typical, raised_dump, label):
    """The raised dump's periods and the steps inside them, checked; "" when it has none."""
    ps = named_periods(sc.load(raised_dump), "GPU detail: raised")
    if not ps:
        fail(f"{label}: no 'GPU detail: raised' period in the raised dump")
        return ""
    _, _, inside, match, kernels = steps_inside(raised_dump, ps, typical, label + " raised")
    return (f"{len(ps)} raised period(s) of {sum(b - a for a, b in ps) / 1e6:.2f} s, "
            f"{len(inside)} steps inside, {len(match)} with the full capture's kernels "
            f"({kernels} kernels)")


def check_job_rank(typical, trigger_dump, raised_dump, label):
    if not os.path.exists(trigger_dump) or not os.path.exists(raised_dump):
        fail(f"{label}: dumps missing: {trigger_dump} {raised_dump}")
        return
    events = sc.load(trigger_dump)
    steps = [e for e in events if e.get("ph") == "X" and e.get("name") == "step"]
    ps = sc.periods(events)
    if not steps or not ps:
        fail(f"{label}: the job's dump 1 holds {len(steps)} steps, {len(ps)} periods")
    raised = raised_text(typical, raised_dump, label)
    if raised:
        print(f"- {label}: dump 1 holds {len(steps)} steps and {len(ps)} period(s); dump 2 "
              f"{raised}")


def check_window(typical, trace, duration_s, label):
    events = sc.load(trace)
    steps, calls, got = sc.per_step(events)
    if not steps:
        fail(f"{label}: no step in the window")
        return
    span = (steps[-1][1] - steps[0][0]) / 1e6
    longest = max(e - s for s, e in steps) / 1e6
    if span > duration_s + 2 * longest + 0.05:
        fail(f"{label}: the steps span {span:.3f} s, the window {duration_s} s")
    kernels = [k for k in events if k.get("cat") == "cuda_kernel" and k.get("ph") == "X"]
    under = sum(sum(c.values()) for c in got.values())
    # A step the window's end cuts may leave its kernels under no recorded step: at most one
    # step's worth at each end.
    edge = len(kernels) - under
    if edge > 2 * sum(n for _, n in typical):
        fail(f"{label}: {edge} kernel(s) outside the window's steps")
    interior = [s for s, _ in steps[1:-1]]
    match = [s for s in interior if tuple(sorted(got[s].items())) == typical]
    if len(match) != len(interior) or not interior:
        fail(f"{label}: {len(interior) - len(match)} of {len(interior)} steps inside the window "
             f"differ from the full capture's")
    print(f"- {label}: {len(steps)} steps over {span:.3f} s (window {duration_s} s), "
          f"{len(match)} of {len(interior)} inner steps with the full capture's kernels, "
          f"{len(kernels)} kernels, {edge} of them under no recorded step (cut at an edge)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["sample", "raise", "window", "job"])
    ap.add_argument("full")
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    typical = typical_step(a.full)
    label = a.label or a.mode
    if a.mode == "sample":
        check_sample(typical, a.traces[0], label)
    elif a.mode == "raise":
        if len(a.traces) < 2:
            fail(f"{label}: the raise needs the trigger's dump and the raised dump")
        else:
            check_raise(typical, a.traces[0], a.traces[1], label)
    elif a.mode == "window":
        check_window(typical, a.traces[0], a.duration, label)
    else:
        # Each rank's dump 1 (the job's trigger dump) and dump 2 (its raised steps).
        if len(a.traces) % 2 != 0:
            fail(f"{label}: give each rank's dump 1 and dump 2")
        for i in range(0, len(a.traces) - 1, 2):
            check_job_rank(typical, a.traces[i], a.traces[i + 1], f"{label} rank {i // 2}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
