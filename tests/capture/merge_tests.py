#!/usr/bin/env python3
"""Tests of `nvtxpp-capture merge`: captures of the test app made to look like the ranks of a job
(rank variables set by hand, the wall-clock anchor shifted as another host's would be), a
recording with GPU activity rebuilt from an nsys profile, an nsys-export-like file, damaged
inputs, and a real `mpirun -np 4`. Expected values are computed here from the inputs, with SQL
of our own, never taken from the tool.

usage: merge_tests.py CASE --capture PATH --app PATH
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sqlite_reference as ref  # noqa: E402  (nsys stats' queries, as our SQL)

failures = []
HOUR_NS = 3600 * 10**9


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def run(cmd, env=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=e, timeout=timeout)


def capture(a, out, rank=None, shift_ns=0, case="basic", size=4):
    env = {"NVTXPP_CAPTURE_TEST_CLOCK_SHIFT_NS": str(shift_ns)}
    if rank is not None:
        env.update({"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(size)})
    p = run([a.capture, "--no-summary", "-o", out, "--", a.app, case], env)
    check(p.returncode == 0, f"capture {out} exits 0: {p.stderr}")
    return per_rank_file(out, rank, size)


def per_rank_file(out, rank, size):
    """The launcher names a rank's file itself when rank variables say there are several
    (out.rankN.ext): move it to the name the test asked for."""
    if rank is not None and size > 1:
        stem, ext = os.path.splitext(out)
        made = f"{stem}.rank{rank}{ext}"
        check(os.path.exists(made), f"the launcher wrote rank {rank}'s file as {made}")
        if os.path.exists(made):
            os.replace(made, out)
    return out


def merge(a, *args, env=None):
    return run([a.capture, "merge"] + [str(x) for x in args], env)


def db(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def anchor(path):
    with db(path) as c:
        return c.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]


def ranges(path):
    """(pid, name, style, start, end) of every NVTX range, by nsys's joins."""
    with db(path) as c:
        return sorted(c.execute(
            f"SELECT (gtid >> 24) & 16777215, name, style, start, end FROM ({ref.RANGES}) "
            "WHERE end IS NOT NULL"))


def pids(path):
    return sorted({r[0] for r in ranges(path)})


def per_rank_totals(path):
    """{(range, style): total ns} of one input."""
    out = {}
    for _, name, style, start, end in ranges(path):
        out[(name, style)] = out.get((name, style), 0) + end - start
    return out


def per_rank_projection(path):
    """{range: projected total ns} of one input (nvtx_gpu_proj_sum's query)."""
    with db(path) as c:
        return {r[0]: r[1] for r in c.execute(ref.QUERIES["nvtx_gpu_proj_sum"][1])}


def csv_tables(text):
    """The tables of `merge --csv`: a list of lists of dict rows."""
    tables, cur = [], []
    for line in text.splitlines():
        if line.startswith("# ") or not line.strip():
            if cur:
                tables.append(cur)
            cur = []
            continue
        cur.append(line)
    if cur:
        tables.append(cur)
    return [list(csv.DictReader(io.StringIO("\n".join(t)))) for t in tables]


def expected_cross_rank(totals_by_rank):
    """{(range, style): (ranks, min, med, max, max_rank, mean, imbalance)} from per-rank totals."""
    keys = set()
    for t in totals_by_rank.values():
        keys |= set(t)
    out = {}
    for k in keys:
        have = {r: t[k] for r, t in totals_by_rank.items() if k in t}
        v = list(have.values())
        mx = max(v)
        mean = sum(v) / len(v)
        out[k] = (len(v), min(v), statistics.median(v), mx,
                  min(r for r, x in have.items() if x == mx), mean, mx / mean)
    return out


def check_summary_rows(rows, want, what, key=lambda r: (r["Range"], r["Style"])):
    got = {key(r): r for r in rows}
    check(set(got) == set(want), f"{what}: ranges {sorted(got)} == {sorted(want)}")
    for k, (n, mn, med, mx, mr, mean, imb) in want.items():
        r = got.get(k)
        if r is None:
            continue
        check(int(r["Ranks"]) == n, f"{what} {k}: Ranks {r['Ranks']} == {n}")
        check(int(r["Min (ns)"]) == mn, f"{what} {k}: Min {r['Min (ns)']} == {mn}")
        check(abs(float(r["Med (ns)"]) - med) <= 0.5, f"{what} {k}: Med {r['Med (ns)']} == {med}")
        check(int(r["Max (ns)"]) == mx, f"{what} {k}: Max {r['Max (ns)']} == {mx}")
        check(int(r["Max Rank"]) == mr, f"{what} {k}: Max Rank {r['Max Rank']} == {mr}")
        check(abs(float(r["Mean (ns)"]) - mean) <= 0.5, f"{what} {k}: Mean {r['Mean (ns)']}")
        check(abs(float(r["Imbalance"]) - imb) <= 1e-4, f"{what} {k}: Imbalance {r['Imbalance']}"
              f" == {imb:.4f}")


def partials(d):
    return [n for n in os.listdir(d) if ".partial-" in n]


# ------------------------------------------------------------------------------------------------

def case_merge_ranks(a, tmp):
    """Four 'ranks', rank 2 on a 'host' whose clock is an hour ahead: .sqlite and .json."""
    files = [capture(a, os.path.join(tmp, f"r{r}.sqlite"), rank=r,
                     shift_ns=HOUR_NS if r == 2 else 0) for r in range(4)]
    files.reverse()  # order on the command line is not the rank order
    out = os.path.join(tmp, "merged.sqlite")
    p = merge(a, "-o", out, "--csv", *files)
    if not check(p.returncode == 0, f"merge exits 0: {p.stderr}"):
        return
    anchors = {f: anchor(f) for f in files}
    base = min(anchors.values())
    check(anchor(out) == base, "the merged session starts at the earliest input's anchor")
    check(anchors[files[1]] - anchors[files[3]] >= HOUR_NS,
          "the shift variable moved rank 2's anchor by an hour")
    with db(out) as c:
        procs = c.execute("SELECT globalPid, pid, name FROM PROCESSES ORDER BY name").fetchall()
    check(len(procs) == 4, f"4 processes, got {procs}")
    for r, (gpid, pid, name) in enumerate(procs):
        check(name.startswith(f"rank {r} (") and f"pid {pid}" in name,
              f"process named by rank, host and pid: {name!r}")
        check((gpid >> 24) & 0xFFFFFF == pid, "PROCESSES.globalPid holds the pid")
    # Alignment: every input's ranges, shifted by its anchor's distance, are the merged ones.
    merged = ranges(out)
    want = []
    for f in files:
        shift = anchors[f] - base
        want += [(pid, n, s, st + shift, en + shift) for pid, n, s, st, en in ranges(f)]
    check(sorted(want) == merged, "merged ranges == inputs' ranges moved onto one clock")
    pid_of_rank = {int(n.split()[1]): pid for _, pid, n in procs}
    first = {pid: min(st for p_, _, _, st, _ in merged if p_ == pid) for pid in pid_of_rank.values()}
    check(first[pid_of_rank[2]] - first[pid_of_rank[0]] >= HOUR_NS,
          "rank 2 (clock an hour ahead) starts an hour after rank 0 in the merged trace")
    # The cross-rank summary, recomputed from the inputs.
    tables = csv_tables(p.stdout)
    check(len(tables) == 1, f"one table without GPU data, got {len(tables)}")
    totals = {}
    for f in files:
        with db(f) as c:
            rank = int(c.execute("SELECT value FROM META_DATA_CAPTURE WHERE name = "
                                 "'NVTXPP_RANK'").fetchone()[0])
        totals[rank] = per_rank_totals(f)
    check(sorted(totals) == [0, 1, 2, 3], f"the captures recorded ranks 0..3: {sorted(totals)}")
    if tables:
        check_summary_rows(tables[0], expected_cross_rank(totals), "cross-rank summary")
    # The same merge as JSON: one process per input, times on the same clock (µs).
    js = os.path.join(tmp, "merged.json")
    p = merge(a, "-o", js, "--no-summary", *files)
    check(p.returncode == 0 and p.stdout == "", f"merge -o .json --no-summary: {p.stderr}")
    with open(js, encoding="utf-8") as fh:
        ev = json.load(fh)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    check(sorted(names) == sorted(pid for _, pid, _ in procs), f"JSON pids {sorted(names)}")
    check(all(names[pid].startswith(f"rank {r} (") for r, pid in pid_of_rank.items()),
          f"JSON process names by rank: {names}")
    xs = [e for e in ev if e.get("ph") == "X" and e.get("cat") != "cuda_api"]
    js_ranges = sorted((e["pid"], e["name"], round(e["ts"], 3)) for e in xs)
    sq_ranges = sorted((pid, n.split(":", 1)[1], round(st / 1000, 3))
                       for pid, n, s, st, _ in merged if s == "PushPop")
    check(js_ranges == sq_ranges, "JSON push/pop ranges at the merged .sqlite's times")
    check(partials(tmp) == [], f"no partial files left: {partials(tmp)}")


def case_merge_identity(a, tmp):
    """Ranks from the file name and from input order; the same pid twice kept apart."""
    plain = capture(a, os.path.join(tmp, "plain.sqlite"))  # no rank variable
    named = os.path.join(tmp, "trace.rank7.sqlite")
    shutil.copy(plain, named)  # same pid, same everything: a second 'host'
    third = os.path.join(tmp, "other.sqlite")
    shutil.copy(plain, third)
    with sqlite3.connect(third) as c:  # a rank that is not a number: ignored
        c.execute("INSERT INTO META_DATA_CAPTURE VALUES ('NVTXPP_RANK', 'r-1x')")
    out = os.path.join(tmp, "m.sqlite")
    p = merge(a, "-o", out, "--no-summary", third, named, plain)
    if not check(p.returncode == 0, f"merge exits 0: {p.stderr}"):
        return
    with db(out) as c:
        procs = c.execute("SELECT globalPid, pid, name FROM PROCESSES").fetchall()
        gpids = {r[0] for r in c.execute("SELECT DISTINCT globalTid & ~16777215 FROM NVTX_EVENTS")}
    ranks = sorted(int(n.split()[1]) for _, _, n in procs)
    check(ranks == [0, 2, 7], f"ranks: input order 0 and 2, file name 7; got {ranks}")
    check(len({pid for _, pid, _ in procs}) == 3, f"three distinct pids: {procs}")
    check(len(gpids) == 3, f"NVTX events of three distinct processes: {gpids}")
    orig_pid = pids(plain)[0]
    check(all(f"pid {orig_pid}" in n for _, _, n in procs), "labels keep the recorded pid")
    check(len(ranges(out)) == 3 * len(ranges(plain)), "every input's ranges are there")
    check("rank 7 (from file name)" in p.stderr and "(from input order)" in p.stderr,
          f"stderr says where each rank came from: {p.stderr}")
    # Two files recording the same rank: merged, with a warning.
    r1 = capture(a, os.path.join(tmp, "a.sqlite"), rank=1)
    r1b = capture(a, os.path.join(tmp, "b.sqlite"), rank=1)
    p = merge(a, "-o", os.path.join(tmp, "dup.json"), "--no-summary", r1, r1b)
    check(p.returncode == 0 and "both say rank 1" in p.stderr, f"duplicate rank warned: {p.stderr}")


def case_merge_counters(a, tmp):
    """NVTX counters (GENERIC_EVENTS) reach the merged JSON: the samples the capture's own JSON
    draws, by name and value, one time shift apart."""
    sq = os.path.join(tmp, "c.sqlite")
    capture(a, sq, rank=0, case="extensions")
    direct = os.path.join(tmp, "direct.json")
    p = run([a.capture, "--no-summary", "-o", direct, "--", a.app, "extensions"])
    check(p.returncode == 0, f"capture to JSON: {p.stderr}")
    out = os.path.join(tmp, "m.json")
    p = merge(a, "--no-summary", "-o", out, sq)
    check(p.returncode == 0, f"merge exits 0: {p.stderr}")

    def samples(path):
        with open(path, encoding="utf-8") as fh:
            return [(e["name"], json.dumps(e["args"], sort_keys=True))
                    for e in json.load(fh)["traceEvents"] if e.get("ph") == "C"]
    want, got = samples(direct), samples(out)
    check(len(want) > 0 and got == want, f"counter samples {got} == {want}")


def nsys_like(src, dst):
    """A copy of our .sqlite reshaped as `nsys export` files differ from ours: strings renumbered
    and stored in another order, extra tables and columns, no nvtxpp metadata; and no PROCESSES
    table, so merge finds the process from the rows' ids."""
    shutil.copy(src, dst)
    c = sqlite3.connect(dst)
    c.executescript("""
        DELETE FROM META_DATA_CAPTURE WHERE name LIKE 'NVTXPP%';
        DROP TABLE PROCESSES;
        CREATE TABLE OSRT_API (start INTEGER, end INTEGER, globalTid INTEGER, nameId INTEGER);
        INSERT INTO OSRT_API VALUES (1, 2, 3, 4);
        CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT,
                                             nameEnum INTEGER, value TEXT);
        INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'x', 'Hostname', 1, 'gpu-node-7');
        ALTER TABLE NVTX_EVENTS ADD COLUMN extraNsysColumn INTEGER;
        CREATE TABLE S2 AS SELECT id + 1000 AS id, value FROM StringIds ORDER BY id DESC;
        DELETE FROM StringIds;
        INSERT INTO StringIds SELECT id, value FROM S2;
        DROP TABLE S2;
    """)
    for table, cols in [("NVTX_EVENTS", ["textId", "jsonTextId"]), ("ThreadNames", ["nameId"]),
                        ("CUPTI_ACTIVITY_KIND_RUNTIME", ["nameId"]),
                        ("CUPTI_ACTIVITY_KIND_KERNEL", ["demangledName", "shortName",
                                                        "mangledName"])]:
        for col in cols:
            c.execute(f"UPDATE {table} SET {col} = {col} + 1000 WHERE {col} IS NOT NULL")
    c.commit()
    c.close()


def convert_reference(a, tmp, name, rank):
    raw = os.path.join(tmp, "raw-" + name)
    os.mkdir(raw)
    shutil.copy(os.path.join(HERE, "data", "reduce_v2.bin"), os.path.join(raw, "nvtxpp-867.bin"))
    out = os.path.join(tmp, name)
    p = run([a.capture, "--convert", raw, "-o", out, "--no-summary"],
            {"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": "3"})
    check(p.returncode == 0, f"--convert {name}: {p.stderr}")
    if not os.path.exists(out):
        per_rank_file(out, rank, 3)
    return out


def case_merge_gpu(a, tmp):
    """GPU tracks: two ranks of a recording rebuilt from an nsys profile (same pid, same
    correlation ids) and an nsys-export-like file; nsys stats' queries on the merged file give
    three times nsys's own figures; the cross-rank GPU projection table matches the inputs'."""
    r0 = convert_reference(a, tmp, "gpu.rank0.sqlite", 0)
    r1 = convert_reference(a, tmp, "gpu.rank1.sqlite", 1)
    nsys = os.path.join(tmp, "report.2.sqlite")  # as nsys's -o report.%q{OMPI_COMM_WORLD_RANK}
    nsys_like(r0, nsys)
    out = os.path.join(tmp, "merged.sqlite")
    p = merge(a, "-o", out, "--csv", r0, r1, nsys)
    if not check(p.returncode == 0, f"merge exits 0: {p.stderr}"):
        return
    check("rank 2 (from file name)" in p.stderr, f"report.2.sqlite is rank 2: {p.stderr}")
    with db(out) as c:
        for report, (want, sql) in ref.QUERIES.items():
            got = [tuple(r) for r in c.execute(sql)]
            tripled = [row[:-2] + (3 * row[-2], 3 * row[-1]) if report != "nvtx_sum" else
                       (row[0], row[1], 3 * row[2], 3 * row[3]) for row in want]
            check(got == tripled, f"{report} on the merged file: {got} == 3 x {want}")
        procs = c.execute("SELECT name FROM PROCESSES ORDER BY name").fetchall()
        check(any("gpu-node-7" in n for (n,) in procs), f"nsys export's host name used: {procs}")
        check(c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'OSRT_API'").fetchone()
              == (0,), "tables the output layout does not have are left out")
    tables = csv_tables(p.stdout)
    if check(len(tables) == 2, f"range and GPU projection tables, got {len(tables)}"):
        totals = {r: per_rank_totals(f) for r, f in enumerate([r0, r1, nsys])}
        check_summary_rows(tables[0], expected_cross_rank(totals), "cross-rank ranges")
        proj = {r: {(k, "PushPop"): v for k, v in per_rank_projection(f).items()}
                for r, f in enumerate([r0, r1, nsys])}
        check_summary_rows(tables[1], expected_cross_rank(proj), "cross-rank GPU projection")
        want = {name: total for name, total, _ in ref.GPU_PROJ}
        for row in tables[1]:
            check(int(row["Max (ns)"]) == want.get(row["Range"]),
                  f"projection of {row['Range']} per rank is nsys's figure")
    # JSON output keeps the GPU tracks: kernels and copies of three processes.
    js = os.path.join(tmp, "merged.json")
    p = merge(a, "-o", js, "--no-summary", r0, r1, nsys)
    check(p.returncode == 0, f"merge -o .json: {p.stderr}")
    with open(js, encoding="utf-8") as fh:
        ev = json.load(fh)["traceEvents"]
    kern = [e for e in ev if e.get("cat") == "cuda_kernel"]
    check(len(kern) == 3 * sum(n for _, n, _ in ref.KERNELS) and len({e["pid"] for e in kern}) == 3,
          f"kernels of three processes in the JSON: {len(kern)}")


def with_idle_processes(src, dst, idle=150):
    """A copy of `src` listing, as an `nsys export` does, every process of the machine: `idle`
    processes (kthreadd, kworkers) with named threads and no event, named threads without events
    in the recorded process besides its named main thread, and one more process whose only event
    is a kernel (GPU work counts as an event)."""
    shutil.copy(src, dst)
    c = sqlite3.connect(dst)
    (gpid, ) = c.execute("SELECT globalPid FROM PROCESSES").fetchone()
    vm = gpid & ~((1 << 48) - 1)  # the bits above the pid, as the recorded process has them
    pid = (gpid >> 24) & 0xFFFFFF
    c.execute("INSERT INTO StringIds (value) VALUES ('cuda-EvtHandlr')")
    (name_id, ) = c.execute("SELECT id FROM StringIds WHERE value = 'cuda-EvtHandlr'").fetchone()
    for i in range(idle):
        p = 20000 + i
        c.execute("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)",
                  (vm | p << 24, p, "kthreadd" if i == 0 else f"kworker/{i}:0"))
        c.execute("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 0, ?)",
                  (name_id, vm | p << 24 | p))
    for tid in (pid, pid + 1, pid + 2):  # the main thread, and two that did nothing
        c.execute("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 0, ?)",
                  (name_id, vm | pid << 24 | tid))
    gpu_only = 30000
    c.execute("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, 'gpu-only')",
              (vm | gpu_only << 24, gpu_only))
    cols = [r[1] for r in c.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    sel = ", ".join("?" if x == "globalPid" else f'"{x}"' for x in cols)
    c.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT {sel} FROM "
              "CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1", (vm | gpu_only << 24,))
    c.commit()
    c.close()
    return idle


def with_events(path):
    """({pid with an event}, {(pid, tid) with an event}, {pid listed in PROCESSES}, {(pid, tid)
    named}) of an input, by our own SQL: events are NVTX ranges and marks, CUDA API calls,
    counter samples (per thread) and GPU work (per process)."""
    def split(gid):
        return (gid >> 24) & 0xFFFFFF, gid & 0xFFFFFF
    with db(path) as c:
        threads = {split(g) for (g, ) in c.execute(
            "SELECT globalTid FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60) UNION "
            "SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION "
            "SELECT globalTid FROM GENERIC_EVENTS")}
        gpu = {split(g)[0] for (g, ) in c.execute(
            "SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL UNION "
            "SELECT globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION "
            "SELECT globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET UNION "
            "SELECT globalPid FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")}
        listed = {split(g)[0] for (g, ) in c.execute("SELECT globalPid FROM PROCESSES")}
        named = {split(g) for (g, ) in c.execute("SELECT globalTid FROM ThreadNames")}
    return {p for p, _ in threads} | gpu, threads, listed, named


def case_merge_empty_processes(a, tmp):
    """An nsys-export-like input listing every process of the machine: the merged trace (SQLite
    and JSON) holds the processes and threads with events only, stderr counts those kept and
    those left out, track names carry one pid each, and every summary ends with a newline."""
    src = convert_reference(a, tmp, "gpu.rank0.sqlite", 0)
    inp = os.path.join(tmp, "report.0.sqlite")
    idle = with_idle_processes(src, inp)
    pids_ev, threads_ev, listed, named = with_events(inp)
    check(len(pids_ev) == 2 and len(listed) == idle + 2, f"the input: {pids_ev}, {len(listed)}")
    out = os.path.join(tmp, "m.sqlite")
    p = merge(a, "-o", out, "--no-summary", inp)
    if not check(p.returncode == 0, f"merge exits 0: {p.stderr}"):
        return
    with db(out) as c:
        procs = sorted(pid for (pid, ) in c.execute("SELECT pid FROM PROCESSES"))
        tnames = {((g >> 24) & 0xFFFFFF, g & 0xFFFFFF)
                  for (g, ) in c.execute("SELECT globalTid FROM ThreadNames")}
        stream_pids = {pid for (pid, ) in c.execute(
            "SELECT processId FROM TARGET_INFO_NVTX_CUDA_STREAM")}
    check(procs == sorted(pids_ev), f".sqlite PROCESSES: the {len(pids_ev)} processes with events,"
          f" got {len(procs)}: {procs[:5]}...")
    check(tnames and tnames == named & threads_ev, f".sqlite ThreadNames: named threads with events only, "
          f"got {sorted(tnames)[:5]}...")
    check(stream_pids <= pids_ev, f"stream names of kept processes only: {stream_pids}")
    with db(out) as c:
        got = [tuple(r) for r in c.execute(ref.QUERIES["nvtx_sum"][1])]
    check(got == ref.NVTX_SUM, f"the ranges are all there: {got}")
    check("from 2 process(es) with events" in p.stderr,
          f"stderr counts the processes with events: {p.stderr}")
    check(f"({idle} process(es) and " in p.stderr,
          f"stderr counts the empty processes left out: {p.stderr}")
    check(f"{len(named - threads_ev)} named thread(s) without events left out" in p.stderr,
          f"stderr counts the named threads left out: {p.stderr}")
    # JSON: process and thread tracks of processes and threads with events; one pid per name.
    js = os.path.join(tmp, "m.json")
    other = convert_reference(a, tmp, "gpu.rank1.sqlite", 1)  # the same pid, another rank
    p = merge(a, "-o", js, "--no-summary", inp, other)
    check(p.returncode == 0 and "from 3 process(es) with events" in p.stderr,
          f"merge -o .json: {p.stderr}")
    with open(js, encoding="utf-8") as fh:
        ev = json.load(fh)["traceEvents"]
    meta = [e for e in ev if e.get("ph") == "M"]
    names = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    sorts = {e["pid"] for e in meta if e["name"] == "process_sort_index"}
    check(len(names) == 3 and sorts == set(names),
          f"JSON: 3 processes with events (2 ranks), got {len(names)} named, {len(sorts)} sorted")
    twice = [n for n in names.values() if len(re.findall(r"\bpid\b", n)) != 1]
    check(not twice, f"one pid in each process track name, got {twice}")
    # Thread tracks (not the GPU tracks, which sit above 2^30): named threads with events only.
    tids = {e["tid"] for e in meta if e["name"] == "thread_name" and e["tid"] < 0x40000000}
    want = {t for _, t in named & threads_ev}
    check(want and tids == want, f"JSON thread names: {sorted(want)}, got {sorted(tids)[:5]}...")
    # Every summary ends with a newline: text and CSV, with and without a trace.
    for args in (["--summary-only"], ["--summary-only", "--csv"],
                 ["-o", os.path.join(tmp, "s.json")], ["-o", os.path.join(tmp, "s.sqlite"),
                                                       "--csv"]):
        for files in ([inp], [inp, other]):
            p = merge(a, *args, *files)
            check(p.returncode == 0 and p.stdout.endswith("\n"),
                  f"merge {args}: the summary ends with a newline: {p.stdout[-80:]!r}")
            check(p.stderr.endswith("\n"), f"merge {args}: stderr ends with a newline")


def case_merge_damaged(a, tmp):
    """Foreign, truncated and damaged inputs: exit 2 naming the file, nothing written, an
    existing output left as it was."""
    good = capture(a, os.path.join(tmp, "good.sqlite"), rank=0)
    text = os.path.join(tmp, "notes.sqlite")
    with open(text, "w") as f:
        f.write("not a database\n" * 20)
    empty = os.path.join(tmp, "empty.sqlite")
    open(empty, "w").close()
    foreign = os.path.join(tmp, "foreign.sqlite")
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE t (x)")
    truncated = os.path.join(tmp, "cut.sqlite")
    with open(good, "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[:len(data) // 2])
    damaged = os.path.join(tmp, "damaged.sqlite")
    page = int.from_bytes(data[16:18], "big")
    with open(damaged, "wb") as f:  # every page after the first two overwritten
        f.write(data[:2 * page] + b"\xa5" * (len(data) - 2 * page))
    out = os.path.join(tmp, "out.json")
    with open(out, "w") as f:
        f.write("previous")
    for bad, why in [(text, "not an SQLite database"), (empty, "not an SQLite database"),
                     (foreign, "not in Nsight Systems' export layout"), (truncated, "truncated"),
                     (damaged, ""), (os.path.join(tmp, "missing.sqlite"), "No such file")]:
        for target in (out, os.path.join(tmp, "out.sqlite")):
            p = merge(a, "-o", target, good, bad)
            check(p.returncode == 2, f"{os.path.basename(bad)} -> {target}: exit 2, got "
                  f"{p.returncode}: {p.stderr}")
            check(bad in p.stderr and why in p.stderr, f"error names {bad} ({why}): {p.stderr}")
            check("Traceback" not in p.stderr and p.stdout == "", "no summary, no crash")
    with open(out) as f:
        check(f.read() == "previous", "an existing output is left as it was")
    check(not os.path.exists(os.path.join(tmp, "out.sqlite")), "no output created")
    check(partials(tmp) == [], f"no partial files left: {partials(tmp)}")
    # An unwritable output directory: exit 3 after the inputs were read, nothing left.
    p = merge(a, "-o", os.path.join(tmp, "no", "such", "dir.json"), good)
    check(p.returncode == 3 and "cannot create" in p.stderr, f"unwritable output: {p.stderr}")
    # Disk full while writing (the test hook of the writers): exit 3, no output, no partial.
    for target in ("full.json", "full.sqlite"):
        p = merge(a, "-o", os.path.join(tmp, target), good,
                  env={"NVTXPP_CAPTURE_FAIL_WRITE_AFTER": "100"})
        check(p.returncode == 3, f"disk full writing {target}: exit 3, got {p.returncode}"
              f" {p.stderr}")
        check(not os.path.exists(os.path.join(tmp, target)), f"no {target} left")
    check(partials(tmp) == [], f"no partial files left: {partials(tmp)}")


def case_merge_signal(a, tmp):
    """SIGTERM while the output is being written: the partial file is removed, the process dies
    of the signal. (150 inputs make the merge last about a second here; the kill waits for the
    partial file to exist.)"""
    good = capture(a, os.path.join(tmp, "good.sqlite"), rank=0)
    inputs = []
    for i in range(150):
        inputs.append(os.path.join(tmp, f"in{i}.sqlite"))
        shutil.copy(good, inputs[-1])
    out = os.path.join(tmp, "out.sqlite")
    p = subprocess.Popen([a.capture, "merge", "--no-summary", "-o", out] + inputs,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not partials(tmp) and p.poll() is None:
        time.sleep(0.002)  # polls until the merge has created its partial output
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=120)
    if rc == 0:
        print("note: the merge finished before SIGTERM reached it; nothing to check")
        return
    check(rc == -signal.SIGTERM, f"merge dies of SIGTERM, got {rc}")
    check(partials(tmp) == [] and not os.path.exists(out), f"nothing left: {partials(tmp)}")


def case_merge_usage(a, tmp):
    good = capture(a, os.path.join(tmp, "good.sqlite"), rank=0)
    for args, what in [([], "usage"), (["--bogus", good], "unknown option"),
                       (["--summary-only", "--no-summary", good], "nothing to do"),
                       (["-o"], "needs a value"), (["-o", good, good], "also the output")]:
        p = merge(a, *args)
        check(p.returncode == 2 and what in p.stderr, f"merge {args}: exit 2 '{what}': {p.stderr}")
    p = merge(a, "--help")
    check(p.returncode == 0 and "Max Rank" not in p.stderr and "usage:" in p.stdout, "--help")
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        p = merge(a, "--summary-only", good)
        check(p.returncode == 0 and "Max Rank" in p.stdout, f"--summary-only prints: {p.stderr}")
        check(sorted(os.listdir(tmp)) == ["good.sqlite"], "--summary-only writes no file")
    finally:
        os.chdir(cwd)


def case_merge_mpirun(a, tmp):
    """A real Open MPI launch: `mpirun -np 4 nvtxpp-capture -o trace.sqlite`, each rank to its
    own file (trace.rankN.sqlite, named by the launcher), then merged."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("SKIP: no mpirun")
        return
    cmd = [mpirun, "--oversubscribe", "-np", "4"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    # One -o for every rank: each launcher writes its own trace.rankN.sqlite.
    p = run(cmd + [a.capture, "--no-summary", "-o", os.path.join(tmp, "trace.sqlite"), "--",
                   a.app, "basic"], {"OMPI_MCA_plm_rsh_agent": ""})
    if not check(p.returncode == 0, f"mpirun exits 0: {p.stdout} {p.stderr}"):
        return
    files = [os.path.join(tmp, f"trace.rank{r}.sqlite") for r in range(4)]
    check(all(os.path.exists(f) for f in files), f"one file per rank: {os.listdir(tmp)}")
    out = os.path.join(tmp, "job.sqlite")
    p = merge(a, "-o", out, "--csv", *files)
    if not check(p.returncode == 0, f"merge exits 0: {p.stderr}"):
        return
    check(p.stderr.count("(from OMPI_COMM_WORLD_RANK)") == 4, f"ranks recorded by Open MPI's "
          f"variable: {p.stderr}")
    with db(out) as c:
        names = [n for (n,) in c.execute("SELECT name FROM PROCESSES ORDER BY name")]
    check([n.split(" (")[0] for n in names] == [f"rank {r}" for r in range(4)], f"{names}")
    tables = csv_tables(p.stdout)
    totals = {r: per_rank_totals(f) for r, f in enumerate(files)}
    if tables:
        check_summary_rows(tables[0], expected_cross_rank(totals), "mpirun cross-rank summary")
    check(all(r["Ranks"] == "4" for r in tables[0]), "every range on all 4 ranks")


def table_rows(path):
    """Every table's rows in rowid order (the file's own name, which differs between the
    outputs compared, left out)."""
    out = {}
    with db(path) as c:
        names = [n for (n,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                         "ORDER BY name")]
        for n in names:
            rows = c.execute(f'SELECT * FROM "{n}"').fetchall()
            if n == "META_DATA_EXPORT":
                rows = [r for r in rows if r[0] != "EXPORT_PARAM_OUTPUT_PATH"]
            out[n] = rows
    return out


def parallel_inputs(a, tmp):
    """Seven inputs of every kind merge reads: plain captures, one with counters, a recording
    rebuilt from an nsys profile (GPU work, correlation ids) twice, and an nsys-export-like file."""
    files = [capture(a, os.path.join(tmp, f"p{r}.sqlite"), rank=r, size=7,
                     shift_ns=r * 1000) for r in range(3)]
    files.append(capture(a, os.path.join(tmp, "p3.sqlite"), rank=3, size=7, case="extensions"))
    files.append(convert_reference(a, tmp, "gpu.rank4.sqlite", 4))
    files.append(convert_reference(a, tmp, "gpu.rank5.sqlite", 5))
    nsys = os.path.join(tmp, "report.6.sqlite")
    nsys_like(files[-1], nsys)
    files.append(nsys)
    # A table without rowids (another writer's choice): merge cannot cut it into pieces by
    # rowid, and takes it whole.
    odd = capture(a, os.path.join(tmp, "p7.sqlite"), rank=7, size=8)
    with sqlite3.connect(odd) as c:
        check(c.execute("SELECT count(*) FROM ThreadNames").fetchone()[0] > 0,
              "the capture names its threads")
        c.executescript(
            "CREATE TABLE tn (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER NOT "
            "NULL, PRIMARY KEY (globalTid, nameId)) WITHOUT ROWID; "
            "INSERT INTO tn SELECT * FROM ThreadNames; DROP TABLE ThreadNames; "
            "ALTER TABLE tn RENAME TO ThreadNames;")
    files.append(odd)
    return files


def case_merge_parallel(a, tmp):
    """-j N merges what -j 1 merges: the same rows of every table in the same order, the same
    summary byte for byte, the same JSON; with fewer threads than inputs (stage files reused)
    and more."""
    files = parallel_inputs(a, tmp)
    results = {}
    # (jobs, fewest rows a piece takes): the default cuts none of these small inputs; with 5 and
    # 1, and 16 pieces a thread, each is cut into many pieces (stages), appended in order.
    for jobs, piece in ((1, None), (2, None), (4, None), (16, None), (2, 5), (4, 1)):
        out = os.path.join(tmp, f"j{jobs}-{piece}.sqlite")
        env = {"NVTXPP_MERGE_PIECE_ROWS": str(piece),
               "NVTXPP_MERGE_PIECES_PER_THREAD": "16"} if piece else None
        p = merge(a, "-j", jobs, "-o", out, "--csv", *files, env=env)
        if not check(p.returncode == 0, f"merge -j {jobs} exits 0: {p.stderr}"):
            return
        results[(jobs, piece)] = (table_rows(out), p.stdout, p.stderr.replace(out, "OUT"))
        with db(out) as c:
            named = c.execute("SELECT value FROM META_DATA_EXPORT "
                              "WHERE name = 'EXPORT_PARAM_OUTPUT_PATH'").fetchall()
        check(named == [(out,)], f"-j {jobs}: the file records its own name, not the partial "
              f"one it was written as: {named}")
    one = results[(1, None)]
    counts = {t: len(r) for t, r in one[0].items() if r}
    check(all(counts.get(t, 0) > 0 for t in ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL",
                                             "CUPTI_ACTIVITY_KIND_RUNTIME", "GENERIC_EVENTS",
                                             "StringIds", "PROCESSES")),
          f"the merged file has rows of every kind to compare: {counts}")
    check(len(csv_tables(one[1])) == 2, "the summary has the range and GPU projection tables")
    for (jobs, piece), (rows, out, err) in results.items():
        for t in sorted(set(one[0]) | set(rows)):
            check(rows.get(t) == one[0].get(t),
                  f"-j {jobs} pieces {piece}: table {t} as with -j 1")
        check(out == one[1], f"-j {jobs} pieces {piece}: the summary byte for byte as with -j 1")
        check(err == one[2],
              f"-j {jobs} pieces {piece}: stderr as with -j 1:\n{err}\n---\n{one[2]}")
    for args in (["--summary-only"], ["--summary-only", "--csv"]):
        p1 = merge(a, "-j", 1, *args, *files)
        p3 = merge(a, "-j", 3, *args, *files)
        check(p1.returncode == 0 and p1.stdout == p3.stdout and p1.stderr == p3.stderr,
              f"merge {args}: -j 3 prints what -j 1 prints")
    # One input on 4 threads: its summary on one, its rows cut into pieces on the others.
    single = {}
    for jobs in (1, 4):
        out = os.path.join(tmp, f"single{jobs}.sqlite")
        p = merge(a, "-j", jobs, "-o", out, "--csv", files[4],
                  env={"NVTXPP_MERGE_PIECE_ROWS": "3"})
        check(p.returncode == 0, f"one input, -j {jobs}: {p.stderr}")
        single[jobs] = (table_rows(out), p.stdout, p.stderr.replace(out, "OUT"))
    check(single[1] == single[4], "one input: -j 4 as -j 1")
    js = {}
    for jobs in (1, 4):
        out = os.path.join(tmp, "m.json")
        p = merge(a, f"-j{jobs}", "-o", out, *files)
        check(p.returncode == 0, f"merge -j{jobs} -o .json: {p.stderr}")
        with open(out, "rb") as fh:
            js[jobs] = (fh.read(), p.stdout)
        os.remove(out)
    check(js[1] == js[4], "JSON output and summary: -j4 as -j1")
    check(partials(tmp) == [], f"no partial or stage files left: {partials(tmp)}")


def case_merge_parallel_errors(a, tmp):
    """-j values: 0, negative, not a number, too large: exit 2, one line, nothing written. Bad
    inputs among good ones: the error -j 1 gives (the first bad input in order), nothing left."""
    good = capture(a, os.path.join(tmp, "good.sqlite"), rank=0)
    out = os.path.join(tmp, "out.sqlite")
    for value in ["0", "-1", "abc", "1025", "99999999999999999999", "", "2x", "+3", " 4"]:
        for args in (["-j", value], [f"--jobs={value}"]):
            p = merge(a, *args, "-o", out, good)
            check(p.returncode == 2 and p.stderr.count("\n") == 1 and "-j" in p.stderr,
                  f"merge {args}: exit 2, one line: {p.returncode} {p.stderr!r}")
    p = merge(a, "-o", out, good, "-j")
    check(p.returncode == 2 and "needs a value" in p.stderr, f"-j without a value: {p.stderr}")
    check(not os.path.exists(out) and partials(tmp) == [], "nothing written for bad -j")
    for args in (["-j1024"], ["--jobs", "3"], ["-j", "1"]):
        p = merge(a, *args, "--summary-only", good)
        check(p.returncode == 0 and "Max Rank" in p.stdout, f"merge {args}: {p.stderr}")
    goods = []
    for i in range(6):
        goods.append(os.path.join(tmp, f"g{i}.sqlite"))
        shutil.copy(good, goods[-1])
    with open(good, "rb") as f:
        data = f.read()
    page = int.from_bytes(data[16:18], "big")
    damaged = os.path.join(tmp, "damaged.sqlite")
    with open(damaged, "wb") as f:
        f.write(data[:2 * page] + b"\xa5" * (len(data) - 2 * page))
    text = os.path.join(tmp, "notes.sqlite")
    with open(text, "w") as f:
        f.write("not a database\n" * 20)
    for inputs in (goods[:3] + [damaged] + goods[3:] + [text],
                   goods[:4] + [text, damaged] + goods[4:]):
        for target in ("out.sqlite", "out.json", None):
            args = ["-o", os.path.join(tmp, target)] if target else ["--summary-only"]
            p1 = merge(a, "-j", 1, *args, *inputs)
            # -j 4 as it is, and with the good inputs cut into pieces of 2 rows
            for env in (None, {"NVTXPP_MERGE_PIECE_ROWS": "2",
                               "NVTXPP_MERGE_PIECES_PER_THREAD": "16"}):
                p4 = merge(a, "-j", 4, *args, *inputs, env=env)
                check(p1.returncode == 2 and p4.returncode == 2, f"bad input {target} {env}: "
                      f"exit 2: {p1.returncode} {p4.returncode} {p4.stderr}")
                check(p4.stderr == p1.stderr and p4.stdout == "", f"{target} {env}: -j 4 names "
                      f"what -j 1 names: {p4.stderr!r} vs {p1.stderr!r}")
                check(not os.path.exists(os.path.join(tmp, "out.sqlite")) and partials(tmp) == [],
                      f"nothing left: {partials(tmp)}")
    # Disk full while writing: exit 3 with threads too, no partial or stage file left.
    p = merge(a, "-j", 4, "-o", out, *goods, env={"NVTXPP_CAPTURE_FAIL_WRITE_AFTER": "100"})
    check(p.returncode == 3 and not os.path.exists(out) and partials(tmp) == [],
          f"disk full with -j 4: exit 3, nothing left: {p.returncode} {partials(tmp)}")


CASES = {
    "merge_ranks": case_merge_ranks,
    "merge_identity": case_merge_identity,
    "merge_gpu": case_merge_gpu,
    "merge_damaged": case_merge_damaged,
    "merge_usage": case_merge_usage,
    "merge_counters": case_merge_counters,
    "merge_signal": case_merge_signal,
    "merge_mpirun": case_merge_mpirun,
    "merge_empty_processes": case_merge_empty_processes,
    "merge_parallel": case_merge_parallel,
    "merge_parallel_errors": case_merge_parallel_errors,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    a = ap.parse_args()
    a.capture, a.app = os.path.abspath(a.capture), os.path.abspath(a.app)
    tmp = tempfile.mkdtemp(prefix="nvtxpp-merge-")
    try:
        CASES[a.case](a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
