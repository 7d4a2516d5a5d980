#!/usr/bin/env python3
"""Tests of nvtxpp-capture: run annotated programs under it, parse the trace with `json`.

usage: run_tests.py CASE --capture PATH --app PATH [--nvtxpp-app PATH]
Each CASE is one ctest test. Exit status 0 = pass; failures print what differed.
"""
import argparse
import csv
import io
import json
import os
import signal
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(args, capture, *, out=None, extra=(), timeout=120):
    cmd = [capture] + list(extra) + (["-o", out] if out else []) + ["--"] + list(args)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return p


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def events(trace, ph=None, name=None):
    return [e for e in trace["traceEvents"]
            if (ph is None or e["ph"] == ph) and (name is None or e.get("name") == name)]


def only(trace, ph, name):
    found = events(trace, ph, name)
    check(len(found) == 1, f"exactly one {ph} event named {name!r}, got {len(found)}")
    return found[0] if found else {}


def ns(us):
    """A trace time (microseconds with exactly three decimals) as integer nanoseconds: sums of the
    floats json gives can round either way when two ends coincide."""
    return round(us * 1000)


def inside(outer, inner):
    o0, i0 = ns(outer["ts"]), ns(inner["ts"])
    return o0 <= i0 and i0 + ns(inner["dur"]) <= o0 + ns(outer["dur"])


def summary_rows(stdout):
    """Rows of a --csv summary: dicts keyed by the header."""
    lines = [l for l in stdout.splitlines() if l and not l.startswith("#")]
    start = next(i for i, l in enumerate(lines) if l.startswith("Time (%)"))
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))


# ---------------------------------------------------------------------------------------------

def case_basic(a, tmp):
    out = os.path.join(tmp, "basic.json")
    p = run([a.app, "basic"], a.capture, out=out)
    check(p.returncode == 0, f"exit status 0, got {p.returncode}: {p.stderr}")
    check("basic done" in p.stdout, "the program's own output passes through")
    t = load(out)
    xs = events(t, "X")
    check(sorted(e["name"] for e in xs) == ["inner \u00e9", "nvtx3 range", "outer", "read block"],
          f"the four push/pop ranges, got {sorted(e['name'] for e in xs)}")
    outer = only(t, "X", "outer")
    inner = only(t, "X", "inner \u00e9")
    check(outer.get("cat") == "default,setup", f"category of outer: {outer.get('cat')}")
    check(outer["args"].get("color") == "#00FF00", f"colour: {outer['args']}")
    check(outer["args"].get("color_argb") == "0xFF00FF00", "ARGB colour")
    check(outer["args"].get("payload") == -7 and outer["args"].get("payload_type") == "i64",
          f"payload: {outer['args']}")
    check(outer["args"].get("category") == 1 and outer["args"].get("category_name") == "setup",
          "category id and name in args")
    check(outer["args"]["depth"] == 0 and inner["args"]["depth"] == 1, "depths 0 and 1")
    check(inside(outer, inner), "inner lies inside outer")
    check(inner["dur"] >= 200, f"inner spun 200 us, dur {inner['dur']}")
    check(outer["tid"] == inner["tid"], "same thread")
    read = only(t, "X", "read block")
    check(read.get("cat") == "io,disk", f"domain and category as cat: {read.get('cat')}")
    check(read["args"].get("registered") is True, "registered string flagged")
    check(read["args"].get("payload") == 0.5, "double payload")
    check(read["dur"] >= 100, "read block spun 100 us")
    n3 = only(t, "X", "nvtx3 range")
    check(n3.get("cat") == "app", "nvtx3.hpp domain")
    check(n3["tid"] != outer["tid"], "worker range on the worker's track")
    mark = only(t, "i", "checkpoint")
    check(mark.get("s") == "t" and mark["tid"] == outer["tid"], "mark as thread instant")
    b = only(t, "b", "async")
    e = only(t, "e", "async")
    check(b.get("id") == e.get("id") and b.get("id"), "async begin/end share an id")
    check(b["tid"] == outer["tid"] and e["tid"] == n3["tid"], "started on main, ended on worker")
    check(e["ts"] >= n3["ts"] + n3["dur"], "ended after the worker's range")
    names = {ev["tid"]: ev["args"]["name"] for ev in events(t, "M", "thread_name")}
    check(names.get(outer["tid"]) == "main thread", f"main thread name: {names}")
    check(names.get(n3["tid"]) == "worker", f"worker thread name: {names}")
    procs = events(t, "M", "process_name")
    check(len(procs) == 1 and "capture_app basic" in procs[0]["args"]["name"], f"process: {procs}")
    res = t["otherData"]["resources"]
    check(res == [{"pid": outer["pid"], "kind": "cuda_stream", "handle": "0x42",
                   "name": "copy stream"}], f"resources: {res}")
    check(t["otherData"]["warnings"] == [], f"no warnings: {t['otherData']['warnings']}")
    # The summary (table form) names every range as domain:name.
    for r in [":outer", ":inner \u00e9", "io:read block", "app:nvtx3 range", ":async"]:
        check(r in p.stdout, f"summary row {r}")


def case_summary_csv(a, tmp):
    p = run([a.app, "threads"], a.capture, extra=["--summary-only", "--csv"])
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    rows = summary_rows(p.stdout)
    check(len(rows) == 1, f"one row, got {rows}")
    if rows:
        r = rows[0]
        check(r["Range"] == ":work" and r["Style"] == "PushPop", f"row {r}")
        check(int(r["Instances"]) == 1000 + 2000 + 3000 + 4000, f"instances {r['Instances']}")
        check(float(r["Time (%)"]) == 100.0, "all the time")
        check(int(r["Min (ns)"]) <= float(r["Med (ns)"]) <= int(r["Max (ns)"]), "min<=med<=max")


def case_threads(a, tmp):
    out = os.path.join(tmp, "threads.json")
    p = run([a.app, "threads"], a.capture, out=out, extra=["--no-summary"])
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    check("Time (%)" not in p.stdout, "--no-summary prints no table")
    t = load(out)
    names = {ev["tid"]: ev["args"]["name"] for ev in events(t, "M", "thread_name")}
    check(sorted(names.values()) == ["t0", "t1", "t2", "t3"], f"thread names {names}")
    per = {}
    for e in events(t, "X", "work"):
        per[names.get(e["tid"])] = per.get(names.get(e["tid"]), 0) + 1
    check(per == {"t0": 1000, "t1": 2000, "t2": 3000, "t3": 4000},
          f"every range of every (exited) thread: {per}")


def case_exit(a, tmp):
    out = os.path.join(tmp, "exit.json")
    p = run([a.app, "exit"], a.capture, out=out)
    check(p.returncode == 5, f"exit(5) passes through, got {p.returncode}")
    t = load(out)
    check(len(events(t, "X", "thread work")) == 1, "thread range survived")
    for name in ["before exit", "deep"]:
        e = only(t, "X", name)
        check(e.get("args", {}).get("unterminated") is True, f"{name} closed at the end, marked")
    check("unterminated=2" in p.stdout, f"summary counts 2 unterminated ranges: {p.stdout}")


def case_exit_busy(a, tmp):
    out = os.path.join(tmp, "exit_busy.json")
    # The app calls exit() once each thread has recorded 20,000 ranges.
    p = run([a.app, "exit_busy", "20000"], a.capture, out=out, extra=["--no-summary"], timeout=60)
    check(p.returncode == 3, f"exit(3) passes through, got {p.returncode}: {p.stderr}")
    t = load(out)
    busy = events(t, "X", "busy")
    threads = {e["tid"] for e in busy}
    print(f"{len(busy)} ranges from {len(threads)} threads recorded before exit")
    per_thread = [sum(1 for e in busy if e["tid"] == t) for t in threads]
    check(len(threads) == 2 and min(per_thread, default=0) >= 20_000,
          f"each thread's 20,000 ranges before exit() in the trace, got {per_thread}")


def case_return(a, tmp):
    p = run([a.app, "return", "3"], a.capture, extra=["--summary-only"])
    check(p.returncode == 3, f"return 3 passes through, got {p.returncode}")
    check(":returning" in p.stdout, "range recorded")


def case_signal(a, tmp, which, steps=100):
    out = os.path.join(tmp, f"signal-{which}.json")
    p = run([a.app, "signal", which, str(steps)], a.capture, out=out)
    sig = signal.SIGINT if which == "int" else signal.SIGTERM
    check(p.returncode == -sig, f"dies of the same signal ({-sig}), got {p.returncode}")
    t = load(out)
    got = len(events(t, "X", "step"))
    check(got == steps, f"{steps} steps, got {got}")
    check(len(events(t, "X", "background")) == 1, "range of a still-running thread survived")
    e = only(t, "X", "interrupted")
    check(e.get("args", {}).get("unterminated") is True, "open range closed and marked")


def case_exception(a, tmp):
    out = os.path.join(tmp, "exception.json")
    p = run([a.app, "exception"], a.capture, out=out)
    check(p.returncode == -signal.SIGABRT, f"terminate -> SIGABRT, got {p.returncode}")
    t = load(out)
    e = only(t, "X", "throwing")
    check(e.get("args", {}).get("unterminated") is True, "open range closed and marked")


def case_warnings(a, tmp):
    out = os.path.join(tmp, "warnings.json")
    p = run([a.app, "warnings"], a.capture, out=out)
    check(p.returncode == 0, f"no crash, exit 0, got {p.returncode}")
    t = load(out)
    counts = t["otherData"]["warning_counts"]
    check(counts == {"unbalanced_pop": 1, "unknown_end": 1, "null_message": 1, "truncated": 1,
                     "unterminated": 1}, f"warning counts {counts}")
    marks = sorted(e["name"] for e in events(t, "i"))
    check(marks == ["(null)", "h" * 4096], f"null and truncated marks, got {[m[:10] for m in marks]}")
    for kind in ["unbalanced_pop=1", "unknown_end=1", "null_message=1", "truncated=1"]:
        check(kind in p.stdout, f"summary warns {kind}")


def case_fork(a, tmp):
    out = os.path.join(tmp, "fork.json")
    p = run([a.app, "fork"], a.capture, out=out)
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    t = load(out)
    parent = events(t, "X", "parent before fork") + events(t, "X", "parent after fork")
    child = events(t, "X", "in child")
    check(len(parent) == 2 and len(child) == 1, "all three ranges")
    if len(parent) == 2 and child:
        check(parent[0]["pid"] == parent[1]["pid"] != child[0]["pid"],
              "the child is its own process track")
        check(child[0]["pid"] == child[0]["tid"], "child's range on its main thread")
    check(len(events(t, "M", "process_name")) == 2, "two processes named")


def case_unwritable(a, tmp):
    marker = os.path.join(tmp, "ran")
    p = run([a.app, "touch", marker], a.capture, out="/nonexistent-dir/trace.json")
    check(p.returncode == 2, f"exit status 2, got {p.returncode}")
    check("cannot write trace file '/nonexistent-dir/trace.json'" in p.stderr,
          f"clear message, got {p.stderr!r}")
    check(not os.path.exists(marker), "the program was not started")
    p = run([a.app, "touch", marker], a.capture, out=os.path.join(tmp, "ok.json"))
    check(p.returncode == 0 and os.path.exists(marker), "with a writable path it runs")


def case_not_found(a, tmp):
    p = run([os.path.join(tmp, "no-such-program")], a.capture, extra=["--summary-only"])
    check(p.returncode == 127, f"127 when the program cannot start, got {p.returncode}")
    check("cannot run" in p.stderr, "says why")


def case_nvtxpp(a, tmp):
    out = os.path.join(tmp, "nvtxpp.json")
    p = run([a.nvtxpp_app], a.capture, out=out)
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    t = load(out)
    steps = sorted(e["name"] for e in events(t, "X") if e["name"].startswith("step"))
    check(steps == ["step 0", "step 1", "step 2"], f"formatted names built under the tool: {steps}")
    fn = events(t, "X", "compute_step")
    check(len(fn) == 3, f"function ranges, got {[e['name'] for e in events(t, 'X')]}")
    check(all(e["args"].get("registered") for e in fn), "function names registered once")
    names = sorted(ev["args"]["name"] for ev in events(t, "M", "thread_name"))
    check(names == ["driver 7", "helper"], f"thread names {names}")
    helper = only(t, "X", "on helper")
    check(helper.get("args", {}).get("color") == "#FFFF00", f"yellow: {helper.get('args')}")


def case_order(a, tmp):
    # 4 threads x 100,000 ranges with a nested child: about 250 blocks of 64 KiB, written by the
    # writer thread while the threads go on, and the threads exit with blocks still queued.
    n, nthreads = 100_000, 4
    out = os.path.join(tmp, "order.json")
    p = run([a.app, "order", str(n), str(nthreads)], a.capture, out=out, extra=["--no-summary"])
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    t = load(out)
    per = {}
    for e in events(t, "X", "ordered"):
        per.setdefault(e["tid"], []).append(e)
    check(len(per) == nthreads, f"{nthreads} threads, got {len(per)}")
    for tid, evs in per.items():
        evs.sort(key=lambda e: e["ts"])
        payloads = [e["args"]["payload"] for e in evs]
        check(payloads == list(range(n)), f"thread {tid}: payloads 0..{n - 1} in time order")
    children = events(t, "X", "child")
    check(len(children) == n * nthreads, f"{n * nthreads} children, got {len(children)}")
    parents = {}
    for tid, evs in per.items():
        parents[tid] = evs
    bad = 0
    for c in children:
        evs = parents[c["tid"]]
        # the parent is the last "ordered" range starting at or before the child
        lo, hi = 0, len(evs)
        while lo < hi:
            mid = (lo + hi) // 2
            if evs[mid]["ts"] <= c["ts"]:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0 or not inside(evs[lo - 1], c):
            bad += 1
    check(bad == 0, f"every child inside its parent ({bad} outside)")


def case_memory(a, tmp, ranges=10_000_000, threads=8, limit_mb=64):
    p = run([a.app, "memory", str(ranges), str(threads)], a.capture,
            extra=["--summary-only", "--csv"], timeout=300)
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    line = next((l for l in p.stdout.splitlines() if l.startswith("rss_before_kb=")), "")
    fields = dict(kv.split("=") for kv in line.split())
    growth_mb = int(fields.get("growth_kb", "999999999")) / 1024
    print(f"{ranges} ranges from {threads} threads: process grew by {growth_mb:.1f} MB")
    if a.sanitized:
        print("built with a sanitizer: its own memory use makes the bound meaningless; not checked")
    else:
        check(growth_mb < limit_mb, f"growth {growth_mb:.1f} MB < {limit_mb} MB")
    rows = summary_rows(p.stdout)
    check(len(rows) == 1 and int(rows[0]["Instances"]) == ranges,
          f"all {ranges} ranges in the summary: {rows}")


CASES = {
    "basic": case_basic,
    "summary_csv": case_summary_csv,
    "threads": case_threads,
    "exit": case_exit,
    "return": case_return,
    "exit_busy": case_exit_busy,
    "sigint": lambda a, t: case_signal(a, t, "int"),
    "sigterm": lambda a, t: case_signal(a, t, "term"),
    "sigterm_many": lambda a, t: case_signal(a, t, "term", 300_000),
    "order": case_order,
    "exception": case_exception,
    "warnings": case_warnings,
    "fork": case_fork,
    "unwritable": case_unwritable,
    "not_found": case_not_found,
    "nvtxpp": case_nvtxpp,
    "memory": case_memory,
    # 64 threads: the budget shared by all threads (16 MiB beyond each one's first 64 KiB block)
    # bounds them, not 64 times the per-thread bound (1 MiB).
    "memory_threads": lambda a, t: case_memory(a, t, 6_400_000, 64, 40),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--nvtxpp-app")
    ap.add_argument("--sanitized", action="store_true",
                    help="the programs were built with a sanitizer (memory bounds not checked)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        CASES[a.case](a, tmp)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
