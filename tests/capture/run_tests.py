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
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import raw_file as raw_format  # noqa: E402

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


def convert_json(a, raw, out):
    """Runs `--convert raw -o out` (no summary), checks it exits 0, returns (process, trace)."""
    p = subprocess.run([a.capture, "--convert", raw, "-o", out, "--no-summary"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, f"--convert exits 0, got {p.returncode}: {p.stderr}")
    return p, (load(out) if p.returncode == 0 else {"traceEvents": [], "otherData": {}})


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
    check(p.returncode == 0, f"exit 0, got {p.returncode}; stderr: {p.stderr[-3000:]}")
    t = load(out)
    parent = events(t, "X", "parent before fork") + events(t, "X", "parent after fork")
    child = events(t, "X", "in child")
    check(len(parent) == 2 and len(child) == 1, "all three ranges")
    if len(parent) == 2 and child:
        check(parent[0]["pid"] == parent[1]["pid"] != child[0]["pid"],
              "the child is its own process track")
        check(child[0]["pid"] == child[0]["tid"], "child's range on its main thread")
    check(len(events(t, "M", "process_name")) == 2, "two processes named")


def case_fork_busy(a, tmp):
    """Forks while another thread fills blocks, so the writer thread has blocks in hand at some
    forks: every child records its range and, under a leak checker, exits 0 (a child that lost
    track of the parent's blocks would be reported)."""
    out = os.path.join(tmp, "fork_busy.json")
    children = 30
    p = run([a.app, "fork_busy", str(children)], a.capture, out=out, timeout=300)
    check(p.returncode == 0, f"exit 0, got {p.returncode}: {p.stdout} stderr: {p.stderr[-3000:]}")
    check(f"children failed: 0 of {children}" in p.stdout, f"every child exits 0: {p.stdout}")
    t = load(out)
    child = events(t, "X", "in child")
    check(len(child) == children, f"{children} child ranges, got {len(child)}")
    check(len({e["pid"] for e in child}) == children, "each child its own process")


def case_tls_destructor(a, tmp):
    """A range recorded by a thread_local's destructor, at its thread's end, is kept, on that
    thread's track."""
    out = os.path.join(tmp, "tls.json")
    p = run([a.app, "tls_destructor"], a.capture, out=out)
    check(p.returncode == 0, f"exit 0, got {p.returncode}: {p.stderr}")
    t = load(out)
    worker = events(t, "X", "worker")
    late = events(t, "X", "in a thread_local destructor")
    check(len(worker) == 1 and len(late) == 1, f"both ranges: {len(worker)}, {len(late)}")
    if worker and late:
        check(late[0]["tid"] == worker[0]["tid"], "on the worker's track")
        check(late[0]["ts"] >= worker[0]["ts"] + worker[0]["dur"], "after the worker's range")


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


def case_heaps(a, tmp):
    """NVTX memory heaps: each heap's bytes in use as a counter track, in JSON and SQLite."""
    if not a.nvtxpp_app:
        return
    want = [0, 100, 300, 100, 150, 0, 0]
    out = os.path.join(tmp, "heaps.json")
    p = run([a.nvtxpp_app, "heaps"], a.capture, out=out, extra=["--no-summary"])
    check(p.returncode == 0, f"exit 0 (the heap was registered under the tool): {p.stderr}")
    t = load(out)
    track = [e for e in events(t, "C") if e["name"] == "arena bytes in use"]
    check([e["args"]["value"] for e in track] == want, f"arena bytes in use {want}, got {track}")
    seq = [e["ts"] for e in track]
    check(seq == sorted(seq), "the track's samples in time order (across both threads)")
    pooling = only(t, "X", "pooling")
    check(all(pooling["ts"] <= x <= pooling["ts"] + pooling["dur"] for x in seq[:-1]),
          "samples inside the range that made them")
    check(not t["otherData"]["warnings"], f"no warning: {t['otherData']['warnings']}")
    out = os.path.join(tmp, "heaps.sqlite")
    p = run([a.nvtxpp_app, "heaps"], a.capture, out=out, extra=["--no-summary"])
    if "built without SQLite output" in p.stderr:
        return
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    import sqlite3
    db = sqlite3.connect(out)
    rows = db.execute(
        "SELECT d.intVal FROM GENERIC_EVENTS e JOIN GENERIC_EVENT_TYPES t USING (typeId) "
        "JOIN StringIds n ON n.id = t.nameId "
        "JOIN GENERIC_EVENT_DATA d ON d.genericEventId = e.genericEventId AND d.fieldIdx = 0 "
        "WHERE n.value = 'arena bytes in use' ORDER BY e.timestamp, e.genericEventId").fetchall()
    check([r[0] for r in rows] == want, f"the same track in GENERIC_EVENTS, got {rows}")


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


def case_clock(a, tmp):
    """Times agree with the program's own CLOCK_MONOTONIC reads: a program that ends within a
    few ms (the tool's short start-up estimate of the tick rate) and one that runs 300 ms (a
    later calibration point replaces it)."""
    for late_ms in (0, 300):
        out = os.path.join(tmp, f"clock{late_ms}.json")
        p = run([a.app, "clock", str(late_ms)], a.capture, out=out, extra=["--no-summary"])
        check(p.returncode == 0, f"clock {late_ms}: exit 0, got {p.returncode}: {p.stderr}")
        mine = {f[1]: [int(x) for x in f[2:6]] for f in
                (line.split() for line in p.stdout.splitlines()) if f and f[0] == "clock"}
        t = load(out)
        names = ["early", "late"] if late_ms else ["early"]
        check(sorted(mine) == names, f"clock {late_ms}: the program's lines: {sorted(mine)}")
        for name in names:
            a_, b_, c_, d_ = mine[name]
            dur = only(t, "X", name)["dur"] * 1000.0
            # The duration lies between the inner and outer clock reads (1 us of rounding).
            check(c_ - b_ - 1000 <= dur <= d_ - a_ + 1000,
                  f"clock {late_ms}: {name} lasts {dur:.0f} ns, its clock reads say "
                  f"{c_ - b_}..{d_ - a_}")
        if late_ms:
            gap = (only(t, "X", "late")["ts"] - only(t, "X", "early")["ts"]) * 1000.0
            lo = mine["late"][0] - mine["early"][1]
            hi = mine["late"][1] - mine["early"][0]
            # 300 ms apart: a rate off by 1e-4 (the start-up estimate's order) is 30 us off.
            check(lo - 5000 <= gap <= hi + 5000,
                  f"clock {late_ms}: late starts {gap:.0f} ns after early, clock reads say "
                  f"{lo}..{hi}")


def case_memory(a, tmp, ranges=10_000_000, threads=8, limit_mb=64):
    if a.sanitized:
        # The bound is not checked there (below): a fifth of the ranges still fills and hands
        # over each thread's 64 KiB blocks many times (some 150 each at 8 threads, 12 at 64)
        # under the sanitizer, in a fifth of the time (10 million took 25 s of the ASan stage).
        ranges //= 5
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


# ---------------------------------------------------------------------------------------------
# Synthetic raw recordings (no GPU needed): nvtxpp-<pid>.bin files written the way the injection
# library writes them (tools/recording/format.hpp, gpu_format.hpp), read back with --convert.

T0 = 1_000_000_000  # CLOCK_MONOTONIC ns of the recording start; ticks are ns (tsc = 0)


class raw_file:
    def __init__(self, pid, command="synthetic"):
        self.pid = pid
        self.records = [(8, command.encode())]
        self.streams = {}  # tid -> bytes
        self.last = {}  # tid -> ticks of its last record
        self.strings = {}

    def nvtx(self, tid, etype, t, text=None, flags=0, category=None, ident=None, domain=0):
        rec = raw_format.encode_record(etype, T0 + t, self.last.get(tid, 0), text=text, flags=flags,
                                     category=category, ident=ident, domain=domain)
        self.last[tid] = T0 + t
        self.streams[tid] = self.streams.get(tid, b"") + rec

    def push(self, tid, t, name):
        self.nvtx(tid, 0, t, name)

    def pop(self, tid, t):
        self.nvtx(tid, 1, t)

    def gpu_string(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.records.append((14, struct.pack("<I", self.strings[text]) + text.encode()))
        return self.strings[text]

    def api(self, tid, start, end, corr, name, driver=False):
        self.records.append((13, struct.pack("<qqIIIIQIi", T0 + start, T0 + end, 1 if driver else 0,
                                             0, corr, self.pid, tid, self.gpu_string(name), 0)))

    def kernel(self, start, end, stream, corr, name, grid=(1, 1, 1), block=(1, 1, 1), device=0):
        body = struct.pack("<qqIIIII3i3iIiiI4xQQIBB2x", T0 + start, T0 + end, device, 1, stream, corr,
                           self.gpu_string(name), *grid, *block, 32, 0, 0, 0, 0, 1, 0, 0, 0)
        assert len(body) == 104
        self.records.append((9, body))

    def memcpy(self, start, end, stream, corr, nbytes, kind):
        self.records.append((10, struct.pack("<qqIIIIQBBBBI", T0 + start, T0 + end, 0, 1, stream,
                                             corr, nbytes, kind, 0, 0, 1, 0)))

    def memset(self, start, end, stream, corr, nbytes):
        self.records.append((11, struct.pack("<qqIIIIQIHH", T0 + start, T0 + end, 0, 1, stream,
                                             corr, nbytes, 0, 1, 0)))

    def info(self, text):
        self.records.append((15, text.encode()))

    def write(self, directory, end=100_000):
        out = b"NVTXPPC2" + struct.pack("<IIIIqqd", 2, self.pid, 1, 0, T0, T0, 1.0)
        recs = list(self.records)
        for i, (tid, stream) in enumerate(sorted(self.streams.items())):
            recs.append((1, raw_format.chunk_body(tid, i, 0, stream)))
        recs.append((7, struct.pack("<qqi", T0 + end, T0 + end, 0)))
        for kind, body in recs:
            out += struct.pack("<II", kind, len(body)) + body
        with open(os.path.join(directory, f"nvtxpp-{self.pid}.bin"), "wb") as f:
            f.write(out)


def gpu_recording(directory):
    """One process, thread 100: the ranges, runtime calls and GPU work the GPU cases check."""
    f = raw_file(100)
    f.push(100, 1000, "outer")
    f.push(100, 2000, "inner")
    f.api(100, 2100, 2200, 1, "cudaLaunchKernel")
    f.api(100, 2300, 2400, 2, "cudaMemcpyAsync")
    f.pop(100, 3000)
    f.api(100, 3100, 3200, 3, "cudaMemsetAsync")
    f.pop(100, 5000)
    f.push(100, 6000, "idle")
    f.pop(100, 7000)
    f.push(100, 8000, "late")
    f.api(100, 8100, 9500, 4, "cudaLaunchKernel")  # ends after the range: not inside it
    f.pop(100, 9000)
    # A driver call of the program's own (not inside a runtime call), after every range.
    f.api(100, 9600, 9700, 5, "cuLaunchKernel", driver=True)
    # nvtxNameCudaStream(handle 0x1234, "copy stream"); the CUPTI source maps it to stream 7.
    f.nvtx(100, 7, 500, "copy stream", category=2, ident=0x1234)
    f.info("stream=0x1234:7")
    f.info("cupti=loaded")
    f.kernel(10000, 14000, 7, 1, "_Z6kernelPfi", grid=(2, 1, 1), block=(128, 1, 1))
    f.memcpy(15000, 16000, 7, 2, 4096, 1)
    f.memset(20000, 20500, 3, 3, 64)
    f.kernel(30000, 31000, 3, 4, "_Z5otherv")
    f.kernel(32000, 33000, 3, 5, "_Z5otherv")
    f.write(directory)


def csv_tables(stdout):
    """Tables of a --csv summary with GPU activity: {title or 'nvtx_sum': [row dicts]}."""
    tables, title, lines = {}, "nvtx_sum", []
    def flush():
        if lines:
            tables[title] = list(csv.DictReader(io.StringIO("\n".join(lines))))
    for line in stdout.splitlines():
        if line.startswith("# ") and "layout" in line:
            flush()
            title, lines = re.search(r"nsys (\w+) layout", line).group(1), []
        elif line and not line.startswith("#"):
            lines.append(line)
        elif not line and lines:
            flush()
            lines = []
    flush()
    return tables


def case_gpu_json(a, tmp):
    raw = os.path.join(tmp, "raw")
    os.mkdir(raw)
    gpu_recording(raw)
    p, t = convert_json(a, raw, os.path.join(tmp, "gpu.json"))
    check("5 GPU operation(s), 5 CUDA API call(s)" in p.stderr, f"GPU totals: {p.stderr!r}")
    names = {e["tid"]: e["args"]["name"] for e in events(t, "M", "thread_name")}
    tracks = {name: tid for tid, name in names.items()}
    check("copy stream" in tracks, f"stream 7 named through NVTX: {names}")
    check("CUDA stream 3" in tracks, f"unnamed stream 3 gets a default name: {names}")
    k = only(t, "X", "kernel(float *, int)")
    check(k.get("cat") == "cuda_kernel" and k.get("tid") == tracks.get("copy stream"),
          f"kernel on the named stream's track: {k}")
    check(k.get("ts") == 10.0 and k.get("dur") == 4.0, f"kernel times (us from start): {k}")
    check(k["args"].get("grid") == [2, 1, 1] and k["args"].get("block") == [128, 1, 1]
          and k["args"].get("mangled") == "_Z6kernelPfi", f"kernel args: {k['args']}")
    m = only(t, "X", "[CUDA memcpy Host-to-Device]")
    check(m["args"].get("bytes") == 4096 and m.get("tid") == tracks.get("copy stream"),
          f"memcpy: {m}")
    ms = only(t, "X", "[CUDA memset]")
    check(ms.get("tid") == tracks.get("CUDA stream 3") and ms["args"].get("bytes") == 64,
          f"memset: {ms}")
    apis = [e for e in events(t, "X") if e.get("cat") == "cuda_api"]
    check(len(apis) == 5 and all(e["tid"] == 100 for e in apis),
          f"5 API calls on the calling thread: {apis}")
    starts = {e["id"]: e for e in events(t, "s")}
    ends = {e["id"]: e for e in events(t, "f")}
    check(len(starts) == 5 and set(starts) == set(ends), f"one flow per launch: {starts}")
    fid = (100 << 32) | 1
    check(starts.get(fid, {}).get("ts") == 2.1 and starts.get(fid, {}).get("tid") == 100,
          f"flow 1 leaves cudaLaunchKernel: {starts.get(fid)}")
    check(ends.get(fid, {}).get("ts") == 10.0 and ends.get(fid, {}).get("bp") == "e"
          and ends.get(fid, {}).get("tid") == tracks.get("copy stream"),
          f"flow 1 reaches the kernel: {ends.get(fid)}")
    check(len(events(t, "X", "outer")) == 1 and len(events(t, "X", "late")) == 1,
          "NVTX ranges still there")
    check(t["otherData"]["resources"] == [{"pid": 100, "kind": "cuda_stream", "handle": "0x1234",
                                           "name": "copy stream"}],
          f"named stream listed: {t['otherData']['resources']}")


def case_gpu_summary(a, tmp):
    raw = os.path.join(tmp, "raw")
    os.mkdir(raw)
    gpu_recording(raw)
    p = subprocess.run([a.capture, "--convert", raw, "--summary-only", "--csv"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    tables = csv_tables(p.stdout)
    check(set(tables) == {"nvtx_sum", "nvtx_gpu_proj_sum", "cuda_gpu_kern_sum",
                          "cuda_gpu_mem_time_sum"}, f"four tables: {list(tables)}")
    proj = {r["Range"]: r for r in tables.get("nvtx_gpu_proj_sum", [])}
    # outer: calls 1, 2, 3 inside it -> GPU 10,000..20,500; inner: calls 1, 2 -> 10,000..16,000.
    # idle launches nothing; late's call 4 ends after it and call 5 comes after it.
    check(sorted(proj) == [":inner", ":outer"], f"projected ranges: {sorted(proj)}")
    o, i = proj.get(":outer", {}), proj.get(":inner", {})
    check(o.get("Total Proj Time (ns)") == "10500" and o.get("Total Range Time (ns)") == "4000"
          and o.get("Total GPU Ops") == "3" and o.get("Avg Range Lvl") == "0.0"
          and o.get("Avg Num Child") == "1.0" and o.get("Style") == "PushPop",
          f"outer projection: {o}")
    check(i.get("Total Proj Time (ns)") == "6000" and i.get("Total Range Time (ns)") == "1000"
          and i.get("Total GPU Ops") == "2" and i.get("Avg Range Lvl") == "1.0"
          and i.get("Avg Num Child") == "0.0", f"inner projection: {i}")
    rows = tables.get("nvtx_gpu_proj_sum", [])
    check([r["Range"] for r in rows] == [":outer", ":inner"], "sorted by total projected time")
    kern = {r["Name"]: r for r in tables.get("cuda_gpu_kern_sum", [])}
    check(kern.get("kernel(float *, int)", {}).get("Total Time (ns)") == "4000"
          and kern.get("other()", {}).get("Instances") == "2"
          and kern.get("other()", {}).get("Total Time (ns)") == "2000"
          and kern.get("kernel(float *, int)", {}).get("Time (%)") == "66.7",
          f"kernel summary: {kern}")
    mem = {r["Operation"]: r for r in tables.get("cuda_gpu_mem_time_sum", [])}
    check(mem.get("[CUDA memcpy Host-to-Device]", {}).get("Total Time (ns)") == "1000"
          and mem.get("[CUDA memset]", {}).get("Count") == "1"
          and mem.get("[CUDA memset]", {}).get("Avg (ns)") == "500.0", f"memops: {mem}")
    p = subprocess.run([a.capture, "--convert", raw, "--summary-only"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check("** NVTX GPU Projection Summary" in p.stdout and "10,500" in p.stdout,
          f"table form: {p.stdout}")


def case_convert(a, tmp):
    check(subprocess.run([a.capture, "--convert", os.path.join(tmp, "missing"), "-o",
                          os.path.join(tmp, "x.json")], stderr=subprocess.PIPE).returncode == 2,
          "a missing directory: exit 2")
    raw = os.path.join(tmp, "raw")
    p = run([a.app, "basic"], a.capture, out=os.path.join(tmp, "direct.json"),
            extra=["--keep-raw", raw, "--no-summary"])
    check(p.returncode == 0, f"direct run: {p.stderr}")
    out = os.path.join(tmp, "later.json")
    p = subprocess.run([a.capture, "--convert", raw, "-o", out, "--csv"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, f"--convert exit 0: {p.stderr}")
    direct, later = load(os.path.join(tmp, "direct.json")), load(out)
    key = lambda e: (e["ph"], e.get("name"), e.get("tid"), e.get("dur"))
    check(sorted(map(key, direct["traceEvents"])) == sorted(map(key, later["traceEvents"])),
          "the converted trace has the direct one's events")
    check(len(summary_rows(p.stdout)) == 5, f"summary of the kept recording: {p.stdout}")
    check("sqlite" not in p.stderr, "no size notice for a small trace")
    p = subprocess.run([a.capture, "--convert", raw, "-o", out, "--no-summary"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, NVTXPP_CAPTURE_JSON_EVENT_LIMIT="3"))
    notice = [l for l in p.stderr.splitlines() if ".sqlite" in l]
    check(p.returncode == 0 and len(notice) == 1 and "events" in notice[0],
          f"one line pointing a large JSON trace to .sqlite: {p.stderr!r}")


def case_sqlite_output(a, tmp):
    marker = os.path.join(tmp, "ran")
    out = os.path.join(tmp, "trace.sqlite")
    p = run([a.app, "touch", marker], a.capture, out=out, extra=["--no-summary"])
    if "built without SQLite output" in p.stderr:
        check(p.returncode == 2, f"refused with exit 2, got {p.returncode}")
        check(not os.path.exists(marker), "refused before the program runs")
        return
    check(p.returncode == 0 and os.path.exists(marker), f"ran: {p.stderr}")
    with open(out, "rb") as f:
        check(f.read(16) == b"SQLite format 3\0", "-o .sqlite writes an SQLite database")


def case_write_fail(a, tmp):
    out = os.path.join(tmp, "full.json")
    env = dict(os.environ, NVTXPP_CAPTURE_FAIL_WRITE_AFTER="5000", TMPDIR=tmp)
    cmd = [a.capture, "-o", out, "--csv", "--", a.app, "memory", "20000", "1"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    check(p.returncode == 3, f"exit 3 when the program succeeded but the write failed, got "
          f"{p.returncode}: {p.stderr}")
    check(p.stderr.count("No space left on device") == 1, f"said once: {p.stderr!r}")
    check("written to" not in p.stderr, f"no claim the trace was written: {p.stderr!r}")
    check(not os.path.exists(out), "the partial file is removed")
    m = re.search(r"raw recording is kept in (\S+);", p.stderr)
    check(m is not None, f"the kept directory is named: {p.stderr!r}")
    rows = summary_rows(p.stdout)
    check(len(rows) == 1 and rows[0]["Instances"] == "20000", f"the summary still printed: {rows}")
    if m:
        raw = m.group(1)
        check(any(n.startswith("nvtxpp-") for n in os.listdir(raw)), "raw files kept")
        later = os.path.join(tmp, "later.json")
        q = subprocess.run([a.capture, "--convert", raw, "-o", later, "--no-summary"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(q.returncode == 0, f"--convert of the kept recording: {q.stderr}")
        check(len(events(load(later), "X")) == 20000, "all ranges converted")
        q = subprocess.run([a.capture, "--convert", raw, "-o", later, "--no-summary"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        check(q.returncode == 3 and not os.path.exists(later), "--convert failing: exit 3")
        shutil.rmtree(raw)
    # A failing program keeps its own status.
    p = subprocess.run([a.capture, "-o", out, "--no-summary", "--", a.app, "exit"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(env, NVTXPP_CAPTURE_FAIL_WRITE_AFTER="100"))
    check(p.returncode == 5, f"the program's status 5 wins, got {p.returncode}")
    m = re.search(r"raw recording is kept in (\S+);", p.stderr)
    if m:
        shutil.rmtree(m.group(1))


def case_disk_full(a, tmp):
    mnt = os.path.join(tmp, "small")
    os.mkdir(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt],
                      stderr=subprocess.DEVNULL).returncode != 0:
        print("SKIP: cannot mount a tmpfs here (needs root); write_fail covers the path")
        return
    try:
        out = os.path.join(mnt, "trace.json")
        p = subprocess.run([a.capture, "-o", out, "--no-summary", "--", a.app, "memory", "20000",
                            "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, TMPDIR=tmp))
        check(p.returncode == 3, f"exit 3 on a full disk, got {p.returncode}: {p.stderr}")
        check(p.stderr.count("No space left on device") == 1, f"said once: {p.stderr!r}")
        check(not os.path.exists(out), "partial file removed")
        m = re.search(r"raw recording is kept in (\S+);", p.stderr)
        check(m is not None and os.path.isdir(m.group(1)), "raw recording kept")
    finally:
        subprocess.run(["umount", mnt])


def case_summary_names(a, tmp):
    raw = os.path.join(tmp, "raw")
    os.mkdir(raw)
    f = raw_file(200)
    names = ["two\nlines", "esc\x1b[31mred", "comma, \"quoted\"", "\u00e9" * 100, "tab\there"]
    for i, n in enumerate(names):
        f.push(200, 1000 * (i + 1), n)
        f.pop(200, 1000 * (i + 1) + 100 * (i + 1))
    f.write(raw)
    p = subprocess.run([a.capture, "--convert", raw, "--summary-only"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    lines = p.stdout.splitlines()
    check(any(l.endswith(":two\\nlines") for l in lines), f"newline shown as \\n: {p.stdout}")
    check(any(":esc\\x1b[31mred" in l for l in lines), "ESC shown as \\x1b")
    check(any(":tab\\there" in l for l in lines), "tab shown as \\t")
    check("\x1b" not in p.stdout and "\t" not in p.stdout, "no raw control characters")
    long_line = next((l for l in lines if "\u00e9\u00e9\u00e9" in l), "")
    cell = long_line[long_line.index(":"):].rstrip()
    check(cell == ":" + "\u00e9" * 58 + "\u2026", f"long name cut at 60 columns: {cell!r}")
    p = subprocess.run([a.capture, "--convert", raw, "--summary-only", "--csv"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = sorted(r["Range"] for r in summary_rows(p.stdout))
    check(got == sorted(":" + n for n in names), f"CSV round-trips every name exactly: {got}")


def case_pieces(a, tmp):
    """A thread's stream reaches the file as pieces of blocks (a block handed to the writer, the
    rest of one flushed at exit or on a signal), in any order. Ticks are deltas within a block,
    so pieces are put back by block and offset, and a piece whose block start is missing is
    skipped with a warning, never decoded against the wrong base."""
    raw = os.path.join(tmp, "raw")
    os.mkdir(raw)
    f = raw_file(400)

    def block(records):
        out, last = b"", 0
        for etype, t, text in records:
            out += raw_format.encode_record(etype, T0 + t, last, text=text)
            last = T0 + t
        return out

    b0 = block([(0, 1000, "first"), (1, 2000, None), (0, 3000, "second"), (1, 4000, None)])
    cut = len(block([(0, 1000, "first"), (1, 2000, None)]))
    b1 = block([(0, 5000, "lost start"), (1, 6000, None), (0, 7000, "orphan"), (1, 8000, None)])
    cut1 = len(block([(0, 5000, "lost start"), (1, 6000, None)]))
    b2 = block([(0, 9000, "third"), (1, 9500, None)])
    # Block 0's tail reaches the file before its head; block 1's head never does.
    f.records.append((1, raw_format.chunk_body(400, 0, 0, b0[cut:], offset=cut)))
    f.records.append((1, raw_format.chunk_body(400, 0, 2, b2)))
    f.records.append((1, raw_format.chunk_body(400, 0, 1, b1[cut1:], offset=cut1)))
    f.records.append((1, raw_format.chunk_body(400, 0, 0, b0[:cut])))
    f.write(raw)
    _, t = convert_json(a, raw, os.path.join(tmp, "pieces.json"))
    got = sorted((e["name"], e["ts"], e["dur"]) for e in events(t, "X") if e.get("tid") == 400)
    check(got == [("first", 1.0, 1.0), ("second", 3.0, 1.0), ("third", 9.0, 0.5)],
          f"block 0 put back in order, block 2 whole, block 1 skipped: {got}")
    w = "\n".join(t["otherData"]["warnings"])
    check("block 1: bytes before offset" in w and "missing" in w, f"the lost start warned: {w}")


# nsys stats output for the same run (nsys 2025.3, /work/ref/reduce_v2.stats.txt): the rows our
# tables must reproduce from data/reduce_v2.bin, a raw recording rebuilt from that run's nsys
# SQLite export (its NVTX ranges, CUDA runtime calls, kernels, memcpys and memset).
NSYS_REDUCE_V2 = {
    "NVTX GPU Projection Summary": [
        ":H2D Memory PushPop 7,428,027 7,878,235 1 7,428,027.0 7,428,027.0 7,428,027 7,428,027 0.0 1 1.0 0.0 0.0",
        ":D2H Memory PushPop 7,263,288 7,960,156 1 7,263,288.0 7,263,288.0 7,263,288 7,263,288 0.0 1 1.0 0.0 0.0",
        ":Kernels PushPop 706,574 58,852 1 706,574.0 706,574.0 706,574 706,574 0.0 3 3.0 0.0 0.0",
        ":Compilation PushPop 330,311 117,525,983 1 330,311.0 330,311.0 330,311 330,311 0.0 4 4.0 0.0 0.0",
    ],
    "CUDA GPU MemOps Summary": [
        "50.6 7,428,027 1 7,428,027.0 7,428,027.0 7,428,027 7,428,027 0.0 [CUDA memcpy Host-to-Device]",
        "49.4 7,263,288 1 7,263,288.0 7,263,288.0 7,263,288 7,263,288 0.0 [CUDA memcpy Device-to-Host]",
        "0.0 1,056 1 1,056.0 1,056.0 1,056 1,056 0.0 [CUDA memset]",
    ],
    # Numbers only: nsys spells demangled names its own way ("const float *").
    "CUDA GPU Kernel Summary": [
        "57.0 413,800 2 206,900.0 206,900.0 1,760 412,040 290,111.8",
        "35.7 259,109 2 129,554.5 129,554.5 2,912 256,197 179,099.5",
        "7.4 53,570 2 26,785.0 26,785.0 17,825 35,745 12,671.4",
    ],
}


def case_gpu_nsys_reference(a, tmp):
    raw = os.path.join(tmp, "raw")
    os.mkdir(raw)
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "reduce_v2.bin"),
                os.path.join(raw, "nvtxpp-867.bin"))
    p = subprocess.run([a.capture, "--convert", raw, "--summary-only"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    for title, want in NSYS_REDUCE_V2.items():
        text = p.stdout[p.stdout.find("** " + title):]
        rows = []
        for line in text.splitlines()[4:]:
            if not line.strip():
                break
            rows.append(re.sub(r"\s+", " ", line.strip()))
        if title == "CUDA GPU Kernel Summary":
            rows = [" ".join(r.split(" ")[:8]) for r in rows]
        check(rows == want, f"{title} as nsys prints it:\n  got  {rows}\n  want {want}")


def case_extensions(a, tmp):
    """NVTX counters as Chrome counter tracks; structured payload fields in args."""
    out = os.path.join(tmp, "ext.json")
    p = run([a.app, "extensions"], a.capture, out=out, extra=["--no-summary"])
    check(p.returncode == 0, f"exit status 0, got {p.returncode}: {p.stderr}")
    check("8 counter sample(s)" in p.stderr, f"the launcher counts the samples: {p.stderr}")
    t = load(out)
    cs = events(t, "C")
    tracks = {}
    for e in cs:
        tracks.setdefault(e["name"], []).append(e)
    check(sorted(tracks) == ["bytes in flight", "load", "queue"],
          f"one track per counter, named by the counter, got {sorted(tracks)}")
    pid = only(t, "X", "counting").get("pid")
    check(all(e["pid"] == pid and e["cat"] == "ext" for e in cs),
          "counter tracks under the process, cat = the domain")
    # Values in call order: the unavailable sample draws nothing, the zero one draws 0.
    check([e["args"] for e in tracks.get("bytes in flight", [])] ==
          [{"value": 100}, {"value": 300}, {"value": 0}], "bytes in flight: 100, 300, 0")
    check([e["args"] for e in tracks.get("load", [])] == [{"value": 0.25}], "load: 0.25")
    check([e["args"]["value"] for e in tracks.get("queue", [])] == [1, 2, 3],
          "the batch: one sample per value, in order")
    counting = only(t, "X", "counting")
    times = [ns(e["ts"]) for e in sorted(cs, key=lambda e: e["ts"])]
    check(all(ns(counting["ts"]) <= x <= ns(counting["ts"]) + ns(counting["dur"]) for x in times),
          "every sample's time lies inside the range that made it")
    seq = [ns(e["ts"]) for e in tracks.get("bytes in flight", [])]
    check(seq == sorted(seq) and len(set(seq)) == len(seq), "a track's times increase")
    serve = only(t, "X", "serve").get("args", {})
    check(serve.get("payload_schema") == "request" and serve.get("id") == 42 and
          serve.get("size") == 1.5 and serve.get("tag") == "get",
          f"payload fields decoded into the push's args, got {serve}")
    unknown = only(t, "i", "unknown payload").get("args", {})
    check(unknown.get("payload_schema") == 0xBADBAD and
          unknown.get("payload_bytes", "").startswith("2a000000"),
          f"a payload of unknown schema is kept as hex bytes, got {unknown}")
    marks = [e for e in events(t, "i") if e["name"] == ""]
    check(len(marks) == 1 and marks[0]["args"].get("id") == 7, "nvtxMarkPayload's fields")
    w = t["otherData"]["warnings"]
    check(any("unknown schema 12245933" in x for x in w), f"unknown schema warned: {w}")
    check(t["otherData"]["warning_counts"] == {"payload": 1},
          f"no other warning, got {t['otherData']['warning_counts']}")


def case_extensions_sqlite(a, tmp):
    """Payload schemas in NVTX_PAYLOAD_SCHEMAS / _ENTRIES (nsys's layout), bytes in binaryData."""
    import sqlite3
    out = os.path.join(tmp, "ext.sqlite")
    p = run([a.app, "extensions"], a.capture, out=out, extra=["--no-summary"])
    if "built without SQLite output" in p.stderr:
        return
    check(p.returncode == 0, f"exit status 0, got {p.returncode}: {p.stderr}")
    db = sqlite3.connect(out)
    dom = db.execute("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'ext'"
                     ).fetchall()
    check(len(dom) == 1, f"the domain's creation row, got {dom}")
    dom = dom[0][0] if dom else None
    schemas = db.execute("SELECT * FROM NVTX_PAYLOAD_SCHEMAS").fetchall()
    check(len(schemas) == 1, f"one schema row, got {schemas}")
    sid = schemas[0][1] if schemas else None
    # (domainId, schemaId, name, type STATIC, flags NULL, numEntries, payloadSize, alignTo NULL)
    check(schemas == [(dom, sid, "request", 1, None, 3, 24, None)], f"schema row: {schemas}")
    check(sid is not None and sid >= 1 << 32, f"a tool-made schema id, got {sid}")
    entries = db.execute("SELECT * FROM NVTX_PAYLOAD_SCHEMA_ENTRIES ORDER BY idx").fetchall()
    check(entries == [(dom, sid, 0, None, 15, "id", None, None, None),
                      (dom, sid, 1, None, 20, "size", "bytes", None, 8),
                      (dom, sid, 2, 16, 1, "tag", None, 8, 16)],
          f"entry rows as nsys writes them (0 as NULL), got {entries}")
    cols = {r[1]: r[2] for r in db.execute("PRAGMA table_info(NVTX_EVENTS)")}
    check(cols.get("binaryData") == "TEXT", "binaryData declared TEXT as nsys does")
    blobs = db.execute("SELECT hex(binaryData) FROM NVTX_EVENTS WHERE binaryData IS NOT NULL "
                       "ORDER BY start").fetchall()
    check(len(blobs) == 3, f"three events carry payload bytes, got {len(blobs)}")
    want = struct.pack("<i4xd8s", 42, 1.5, b"get").hex().upper()
    check(blobs and blobs[0][0] == want, f"the push's payload bytes, got {blobs[:1]}")
    # Counter samples as nsys 2025.3 exports them: GENERIC_EVENT_SOURCES / _TYPES /
    # _TYPE_FIELDS, one GENERIC_EVENTS row per sample, values in GENERIC_EVENT_DATA.
    src = db.execute("SELECT s.sourceId, v.value, s.timeSourceId FROM GENERIC_EVENT_SOURCES s "
                     "JOIN StringIds v ON v.id = s.nameId").fetchall()
    check(len(src) == 1 and src[0][1:] == ("GenericCounters", 3),
          f"one source 'GenericCounters', session-ns time, got {src}")
    rows = db.execute(
        "SELECT n.value, f.type, d.intVal, d.uintVal, d.doubleVal, e.timestamp "
        "FROM GENERIC_EVENTS e JOIN GENERIC_EVENT_TYPES t USING (typeId) "
        "JOIN StringIds n ON n.id = t.nameId "
        "JOIN GENERIC_EVENT_TYPE_FIELDS f ON f.typeId = t.typeId AND f.fieldIdx = 0 "
        "JOIN GENERIC_EVENT_DATA d ON d.genericEventId = e.genericEventId AND d.fieldIdx = 0 "
        "ORDER BY e.genericEventId").fetchall()
    by = {}
    for name, ftype, i, u, dv, ts in rows:
        by.setdefault(name, []).append((ftype, i if i is not None else u if u is not None else dv))
    check(by.get("bytes in flight") == [(0, 100), (0, 300), (0, 0)],
          f"bytes in flight: intVal 100, 300, then the 'zero' no-value sample as 0: {by}")
    check(by.get("load") == [(3, 0.25)], f"load: doubleVal 0.25: {by}")
    check([v for _, v in by.get("queue", [])] == [1, 2, 3], f"the batch's values: {by}")
    rng = db.execute("SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s "
                     "ON s.id = n.textId WHERE coalesce(n.text, s.value) = 'counting'").fetchall()
    check(len(rng) == 1 and all(rng[0][0] <= r[5] <= rng[0][1] for r in rows),
          f"sample times inside the range 'counting' on the same timeline: {rng} {rows}")


def case_extensions_damaged(a, tmp):
    """Counter and schema definitions, samples and payload blobs that are damaged or disagree:
    each gets a warning, the rest is still read (the reader never trusts the file)."""
    raw = os.path.join(tmp, "raw")
    os.mkdir(raw)
    f = raw_file(300)

    def text(t):
        return struct.pack("<I", len(t)) + t

    def counter_def(cid, name, schema):
        return (struct.pack("<IQ", 0, cid) + text(name) + text(b"") + text(b"") +
                struct.pack("<QQQqQQ", schema, 0, 0, 0, 0, 0))

    def schema_def(sid, name, entries, count=None, size=4):
        body = struct.pack("<IQB", 0, sid, 0) + text(name) + struct.pack("<QQQQ", 1, 0, size, 0)
        body += struct.pack("<I", len(entries) if count is None else count)
        for etype, ename, offset in entries:
            body += struct.pack("<QQ", 0, etype) + text(ename) + text(b"") + struct.pack("<QQ", 0, offset)
        return body + struct.pack("<I", 0)

    f.records.append((32, counter_def(5, b"good", 17)))          # i64 counter
    f.records.append((32, counter_def(6, b"short", 17)[:10]))    # cut: malformed
    f.records.append((33, schema_def(1 << 32, b"one", [(15, b"x", 0), (15, b"far", 1000)])))
    f.records.append((33, schema_def(1 << 33, b"huge", [], count=5000)))  # too many entries

    last = [0]  # ticks of the stream's previous record (0: a new stream)

    def record(etype, t, ident=None, category=None, blob=None, declared_blob=None):
        flags = 64 if blob is not None else 0
        out = raw_format.encode_record(etype, T0 + t, last[0], flags=flags, category=category,
                                     ident=ident)
        last[0] = T0 + t
        if blob is not None:
            n = len(blob) if declared_blob is None else declared_blob
            out += struct.pack("<I", n) + blob
        return out

    def item(schema, data, declared=None, stored=None):
        return struct.pack("<QQI", schema, len(data) if declared is None else declared,
                           len(data) if stored is None else stored) + data

    s = b""
    s += record(17, 10, ident=5, category=3, blob=struct.pack("<q", 77))   # good sample
    s += record(17, 20, ident=5, category=3, blob=b"\x01\x02\x03")      # wrong size
    s += record(17, 30, ident=99, category=1)                             # unregistered id
    s += record(4, 40, blob=item(1 << 32, struct.pack("<i", -3)))         # decodes x; far missing
    s += record(4, 50, blob=item(1 << 32, b"\x00" * 3))                  # size disagrees
    s += record(4, 60, blob=item(1 << 32, b"\x00" * 4, stored=400))      # item cut short
    f.streams[301] = s
    # A thread whose blob claims more bytes than its block holds: the rest of the block is skipped.
    last[0] = 0
    f.streams[302] = record(4, 70, blob=b"\x00" * 8, declared_blob=1 << 20) + record(4, 80)
    f.write(raw)
    _, t = convert_json(a, raw, os.path.join(tmp, "damaged.json"))
    cs = events(t, "C")
    check([(e["name"], e["args"]) for e in cs] == [("good", {"value": 77}), ("counter 99", {"value": 0})],
          f"the good sample, and the unregistered one by id, got {[(e['name'], e['args']) for e in cs]}")
    marks = sorted(events(t, "i"), key=lambda e: e["ts"])
    check(len(marks) == 3, f"three marks of thread 301 survive, got {len(marks)}")
    if len(marks) == 3:
        check(marks[0]["args"].get("x") == -3 and marks[0]["args"].get("far") is None,
              f"x decoded, the entry beyond the bytes null: {marks[0]['args']}")
        check(marks[1]["args"].get("payload_bytes") == "000000", f"{marks[1]['args']}")
    w = "\n".join(t["otherData"]["warnings"])
    counts = t["otherData"]["warning_counts"]
    check(counts.get("malformed", 0) >= 3, f"two bad definitions and the bad blob: {counts}")
    check("sample of 3 bytes for a value of 8" in w, f"wrong-size sample warned: {w}")
    check("unregistered counter id 99" in w, f"unregistered id warned: {w}")
    check("has 3 bytes, the schema 4" in w, f"size mismatch warned: {w}")
    check("cut short" in w, f"cut payload warned: {w}")
    check("short blob" in w, f"blob overrunning its block warned: {w}")


CASES = {
    "heaps": case_heaps,
    "extensions": case_extensions,
    "extensions_damaged": case_extensions_damaged,
    "pieces": case_pieces,
    "extensions_sqlite": case_extensions_sqlite,
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
    "fork_busy": case_fork_busy,
    "tls_destructor": case_tls_destructor,
    "unwritable": case_unwritable,
    "gpu_json": case_gpu_json,
    "gpu_summary": case_gpu_summary,
    "convert": case_convert,
    "gpu_nsys_reference": case_gpu_nsys_reference,
    "sqlite_output": case_sqlite_output,
    "write_fail": case_write_fail,
    "disk_full": case_disk_full,
    "summary_names": case_summary_names,
    "not_found": case_not_found,
    "nvtxpp": case_nvtxpp,
    "memory": case_memory,
    "clock": case_clock,
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
