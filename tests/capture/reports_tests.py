#!/usr/bin/env python3
"""GPU work that Nsight Systems' stats reports treat specially, through the test double of CUPTI
(no GPU): kernels outside every NVTX range, unified memory migrations, and CUDA graph launches
under --cuda-graph-trace=graph|node. Each case checks the SQLite rows with the joins nsys's
reports make (their documented semantics, written here as our own queries), the JSON events and
the summary.

usage: reports_tests.py CASE --capture PATH --app PATH --graph-app PATH --fake-cupti PATH
Exit status 0 = pass.
"""
import argparse
import csv
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import raw_file  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


class Run:
    """One capture of APP ARGS: raw recording kept, converted to JSON and SQLite."""

    def __init__(self, a, tmp, label, app, args, extra=(), env=None):
        self.raw = os.path.join(tmp, "raw-" + label)
        self.json = os.path.join(tmp, label + ".json")
        self.db = os.path.join(tmp, label + ".sqlite")
        full_env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti, **(env or {}))
        self.p = subprocess.run([a.capture, "--csv", "--keep-raw", self.raw, "-o", self.json] +
                                list(extra) + ["--", app] + list(args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, timeout=120, env=full_env)
        print(label, self.p.stdout, self.p.stderr)
        check(self.p.returncode == 0, f"{label}: exit 0, got {self.p.returncode}")
        q = subprocess.run([a.capture, "--convert", self.raw, "-o", self.db, "--no-summary"] +
                           list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.sqlite = q.returncode == 0
        if not self.sqlite:
            print(f"note: no SQLite output ({q.stderr.strip()})")
        with open(self.json) as fh:
            self.events = json.load(fh)["traceEvents"]

    @property
    def file(self):
        """The raw recording's one process file (raw_file.py)."""
        files = raw_file.read_dir(self.raw)
        check(len(files) == 1, f"{self.raw}: one raw file")
        return files[0] if files else None

    def cat(self, name):
        return [e for e in self.events if e.get("cat") == name]

    def section(self, title):
        """Rows (dicts) of the summary CSV section whose `# title` line starts with `title`."""
        lines = self.p.stdout.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("# " + title):
                body = []
                for l in lines[i + 1:]:
                    if not l.strip() or l.startswith("#"):
                        break
                    body.append(l)
                return list(csv.DictReader(body))
        return None

    def query(self, sql):
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            return [tuple(r) for r in con.execute(sql)]
        finally:
            con.close()

    def tables(self):
        return {r[0] for r in self.query("SELECT name FROM sqlite_master WHERE type = 'table'")}


# nvtx_kern_sum's documented semantics: a file without NVTX_EVENTS has no NVTX data (the report
# is skipped); otherwise each kernel joins its launching call (correlationId, same process), and
# that call the ranges of its thread that contain it; a kernel under no range joins none.
KERN_SUM = """
    SELECT coalesce(s.value, n.text) AS range, ks.value AS kernel, count(DISTINCT k.rowid)
    FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
    JOIN StringIds AS ks ON ks.id = k.shortName
    LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId
        AND k.globalPid = (r.globalTid & 0xFFFFFFFFFF000000)
    LEFT JOIN NVTX_EVENTS AS n ON n.eventType IN (59, 60) AND n.globalTid = r.globalTid
        AND n.start <= r.start AND n.end >= r.end
    LEFT JOIN StringIds AS s ON s.id = n.textId
    GROUP BY 1, 2 ORDER BY 1, 2
"""
MEM_OPS = """
    SELECT name, count(*), sum(bytes) FROM (
        SELECT '[CUDA memcpy ' || o.label || ']' AS name, m.bytes AS bytes
        FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind
        UNION ALL SELECT '[CUDA memset]', bytes FROM CUPTI_ACTIVITY_KIND_MEMSET)
    GROUP BY 1 ORDER BY 1
"""
# nvtx_gpu_proj_sum's relation: GPU work -> its launching call (correlationId) -> the ranges of
# the call's thread around it.
PROJECTION = """
    SELECT coalesce(s.value, n.text), count(*) FROM (
        SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
        UNION ALL SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
        UNION ALL SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET) AS w
    JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = w.correlationId
        AND w.globalPid = (r.globalTid & 0xFFFFFFFFFF000000)
    JOIN NVTX_EVENTS AS n ON n.eventType = 59 AND n.globalTid = r.globalTid
        AND n.start <= r.start AND n.end >= r.end
    LEFT JOIN StringIds AS s ON s.id = n.textId
    GROUP BY 1 ORDER BY 1
"""


# fake_cupti_launch's copy and memset come with no API record: reported as such, the kernels not.
UNLAUNCHED = ("2 GPU operation(s) with no launching CUDA API call in the recording (0 kernel(s), "
              "1 copy(ies), 1 memset(s))")


def kernel_instances(run):
    return {r["Name"]: int(r["Instances"]) for r in
            run.section("CUDA GPU Kernel Summary") or []}


def memops(run):
    return {r["Operation"]: int(r["Count"]) for r in
            run.section("CUDA GPU MemOps Summary") or []}


def case_reports_unranged(a, tmp):
    """Kernels outside every range stay in the kernel and memory reports, the JSON and the
    summary; NVTX reports list none of them."""
    r = Run(a, tmp, "unranged", a.app, ["unranged"])
    check(kernel_instances(r) == {"fake(int *)": 3}, f"summary kernels: {kernel_instances(r)}")
    check(memops(r) == {"[CUDA memcpy Host-to-Device]": 1, "[CUDA memset]": 1},
          f"summary memops: {memops(r)}")
    check(len(r.cat("cuda_kernel")) == 3, "JSON: the 3 kernels")
    check(UNLAUNCHED in r.p.stderr, "every kernel has its launching call (the fake's copy and "
          "memset have none)")
    if r.sqlite:
        # A program without NVTX: no NVTX_EVENTS table, as in Nsight Systems' export, so
        # nvtx_kern_sum (and every NVTX report) finds no NVTX data instead of listing every
        # kernel under a range with no name.
        check("NVTX_EVENTS" not in r.tables(), f"no NVTX_EVENTS table: {sorted(r.tables())}")
        check(r.query("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == [(3,)],
              "cuda_gpu_kern_sum: the 3 kernels")
        check(r.query(MEM_OPS) == [("[CUDA memcpy Host-to-Device]", 1, 4096),
                                   ("[CUDA memset]", 1, 128)], f"memory reports: {r.query(MEM_OPS)}")
    m = Run(a, tmp, "mixed", a.app, ["mixed"])
    check(kernel_instances(m) == {"fake(int *)": 3}, f"mixed: summary kernels {kernel_instances(m)}")
    proj = {x["Range"]: int(x["Total GPU Ops"]) for x in
            m.section("NVTX GPU Projection Summary") or []}
    check(proj == {":step": 2}, f"mixed: summary projection (the 2 kernels launched in it): {proj}")
    check(len(m.cat("cuda_kernel")) == 3, "mixed: JSON keeps the kernel outside the range")
    if m.sqlite:
        check("NVTX_EVENTS" in m.tables(), "mixed: NVTX_EVENTS with the program's range")
        got = m.query(KERN_SUM)
        check(got == [(None, "fake", 1), ("step", "fake", 2)],
              f"mixed: nvtx_kern_sum's join: 2 kernels under step, 1 under none: {got}")
        check(m.query(PROJECTION) == [("step", 2)], f"mixed: projection {m.query(PROJECTION)}")


MIGRATIONS = {"[CUDA memcpy Unified Host-to-Device]": (3, 3 * 65536),
              "[CUDA memcpy Unified Device-to-Host]": (1, 4096),
              "[CUDA memcpy Unified Device-to-Device]": (1, 2 * 1024 * 1024)}


def case_reports_managed(a, tmp):
    """Unified memory migrations: memcpy rows of nsys's Unified kinds (reports by time and by
    size), projected onto no range, drawn on a track of their own, listed in the summary."""
    r = Run(a, tmp, "managed", a.app, ["managed"])
    if r.file:
        check(r.file.info_values("unified_memory") == ["on"],
              f"raw: unified_memory=on: {r.file.info_values('unified_memory')}")
    want = {k: v[0] for k, v in MIGRATIONS.items()}
    want.update({"[CUDA memcpy Host-to-Device]": 1, "[CUDA memset]": 1})
    check(memops(r) == want, f"summary memops {memops(r)}, want {want}")
    proj = {x["Range"]: int(x["Total GPU Ops"]) for x in
            r.section("NVTX GPU Projection Summary") or []}
    check(proj == {":touch": 1}, f"migrations project onto no range (the kernel does): {proj}")
    check(UNLAUNCHED in r.p.stderr, "migrations are not counted as GPU work without a launching "
          "call (only the fake's copy and memset are)")
    moves = [e for e in r.cat("cuda_memcpy") if e["args"]["kind"].startswith("Unified")]
    check(len(moves) == 5, f"JSON: 5 migrations, got {len(moves)}")
    names = {e["args"]["name"] for e in r.events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tracks = {(e["pid"], e["tid"]) for e in moves}
    named = {(e["pid"], e["tid"]): e["args"]["name"] for e in r.events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    check(all(named.get(t, "").startswith("Unified memory") for t in tracks),
          f"JSON: migrations on 'Unified memory' tracks: {[named.get(t) for t in tracks]} of "
          f"{sorted(names)}")
    dtod = [e for e in moves if e["args"]["kind"] == "Unified Device-to-Device"]
    check(len(dtod) == 1 and dtod[0]["args"]["device"] == 1 and dtod[0]["args"]["bytes"] == 2097152,
          f"JSON: the device-to-device migration on device 1: {dtod}")
    if r.sqlite:
        got = {n: (c, b) for n, c, b in r.query(MEM_OPS)}
        want_rows = dict(MIGRATIONS)
        want_rows.update({"[CUDA memcpy Host-to-Device]": (1, 4096), "[CUDA memset]": (1, 128)})
        check(got == want_rows, f"cuda_gpu_mem_time_sum/size_sum rows {got}, want {want_rows}")
        check(r.query("SELECT count(*), min(correlationId IS NULL), min(migrationCause), "
                      "min(srcKind), min(dstKind) FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                      "WHERE copyKind BETWEEN 11 AND 13") == [(5, 1, 1, 4, 4)],
              "migration rows: no correlation id, CUPTI's cause (user), managed memory both ends")
        check(r.query(PROJECTION) == [("touch", 1)], f"SQLite projection {r.query(PROJECTION)}")


def case_reports_managed_unavailable(a, tmp):
    """A CUPTI that cannot record migrations is said (raw record, summary warning), the rest is
    recorded; NVTXPP_UNIFIED_MEMORY=off records none, by choice, and says so in the raw file."""
    r = Run(a, tmp, "no_um", a.app, ["managed"], env={"FAKE_CUPTI_NO_UM": "1"})
    vals = r.file.info_values("unified_memory") if r.file else []
    check(len(vals) == 1 and vals[0].startswith("unavailable:cuptiActivityConfigureUnified"),
          f"raw: unified_memory=unavailable:...: {vals}")
    check("um_unavailable=1" in r.p.stdout and "unified memory migrations not recorded" in
          r.p.stdout, "the summary's warnings say migrations are not recorded")
    check(memops(r) == {"[CUDA memcpy Host-to-Device]": 1, "[CUDA memset]": 1},
          f"other work still recorded: {memops(r)}")
    peer = Run(a, tmp, "no_dtod", a.app, ["managed"], env={"FAKE_CUPTI_NO_UM_DTOD": "1"})
    vals = peer.file.info_values("unified_memory") if peer.file else []
    check(len(vals) == 1 and vals[0].startswith("on:no device-to-device"),
          f"no peer devices: the other two counters recorded, and said: {vals}")
    got = {k: v for k, v in memops(peer).items() if "Unified" in k}
    check(got == {"[CUDA memcpy Unified Host-to-Device]": 3,
                  "[CUDA memcpy Unified Device-to-Host]": 1}, f"no peer devices: {got}")
    # A CUPTI not ready for migrations while the driver initialises (the H100's, CUDA 13.0):
    # enabled at the first context, and recorded all the same.
    late = Run(a, tmp, "um_late", a.app, ["managed"], env={"FAKE_CUPTI_UM_NOT_READY": "1"})
    vals = late.file.info_values("unified_memory") if late.file else []
    check(vals == ["on"], f"not ready at injection: enabled at the first context: {vals}")
    got = {k: v for k, v in memops(late).items() if "Unified" in k}
    check(got == {"[CUDA memcpy Unified Host-to-Device]": 3,
                  "[CUDA memcpy Unified Device-to-Host]": 1,
                  "[CUDA memcpy Unified Device-to-Device]": 1}, f"not ready at first: {got}")
    off = Run(a, tmp, "um_off", a.app, ["managed"], env={"NVTXPP_UNIFIED_MEMORY": "off"})
    check(off.file is not None and off.file.info_values("unified_memory") == ["off"],
          "NVTXPP_UNIFIED_MEMORY=off: unified_memory=off")
    check("um_unavailable" not in off.p.stdout, "off by choice: no warning")
    check("[CUDA memcpy Unified Host-to-Device]" not in memops(off), "off: no migrations")


def case_reports_graph_trace(a, tmp):
    """The issue's graph (3 kernels, replayed 3 times under `replay`) in both modes: node shows
    each node's kernel (nsys --cuda-graph-trace=node); graph one launch each in
    CUPTI_ACTIVITY_KIND_GRAPH_TRACE and its kernels in no kernel report (nsys's default). Graph
    ranges in both."""
    bad = subprocess.run([a.capture, "--cuda-graph-trace=nodes", "--", a.graph_app, "issue"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(bad.returncode == 2 and "--cuda-graph-trace takes graph or node" in bad.stderr,
          f"a bad mode: exit 2 and a message: {bad.returncode} {bad.stderr}")
    layer = {":layer": 3, ":attention": 3, ":mlp": 3}
    runs = {}
    for mode in ("node", "graph", "default"):
        extra = [] if mode == "default" else [f"--cuda-graph-trace={mode}"]
        r = runs[mode] = Run(a, tmp, mode, a.graph_app, ["issue"], extra=extra)
        ranges = {x["Range"]: int(x["Instances"]) for x in
                  r.section("NVTX Ranges in CUDA Graph Launches") or []}
        check(ranges == layer, f"{mode}: graph ranges in the summary {ranges}")
        jr = {}
        for e in r.cat("nvtx_graph"):
            jr[":" + e["name"]] = jr.get(":" + e["name"], 0) + 1
        check(jr == layer, f"{mode}: graph ranges in the JSON {jr}")
        if r.sqlite:
            got = dict(r.query("SELECT ':' || text, count(*) FROM NVTXPP_GRAPH_RANGES GROUP BY 1"))
            check(got == layer, f"{mode}: NVTXPP_GRAPH_RANGES {got}")
    for mode in ("node", "default"):
        r = runs[mode]
        check(list(kernel_instances(r).values()) == [9], f"{mode}: 9 kernels {kernel_instances(r)}")
        check(r.section("CUDA Graph Launches") is None, f"{mode}: no launch table")
        check("9 operation(s) of CUDA graph launches are listed node by node" in r.p.stdout,
              f"{mode}: the summary says why nsys's default differs")
        check(len(r.cat("cuda_kernel")) == 9 and not r.cat("cuda_graph"), f"{mode}: JSON nodes")
        if r.sqlite:
            check("CUPTI_ACTIVITY_KIND_GRAPH_TRACE" not in r.tables(), f"{mode}: no graph table")
            check(r.query("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == [(9,)],
                  f"{mode}: 9 kernel rows")
            check(r.query(PROJECTION) == [("replay", 9)], f"{mode}: {r.query(PROJECTION)}")
    g = runs["graph"]
    check(kernel_instances(g) == {}, f"graph: no kernel rows {kernel_instances(g)}")
    launches = g.section("CUDA Graph Launches") or []
    check([(x["Graph"], int(x["Launches"])) for x in launches] == [("CUDA graph 2", 3)],
          f"graph: one table row, 3 launches of graph 2: {launches}")
    check("listed node by node" not in g.p.stdout, "graph: no node note")
    js = g.cat("cuda_graph")
    check(len(js) == 3 and all(e["args"]["kernels"] == 3 for e in js) and
          not g.cat("cuda_kernel"), f"graph: JSON 3 launches of 3 kernels, no kernel: {js}")
    for e in js:  # the launch spans the graph ranges of its launch
        inside = [x for x in g.cat("nvtx_graph") if x["args"]["correlation"] ==
                  e["args"]["correlation"] and x["name"] == "layer"]
        check(len(inside) == 1 and abs(inside[0]["ts"] - e["ts"]) < 1e-3 and
              abs(inside[0]["dur"] - e["dur"]) < 1e-3, f"graph: launch {e} spans its layer")
    if g.sqlite:
        check(g.query("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == [(0,)],
              "graph: no kernel rows")
        rows = g.query("SELECT t.graphId, t.end > t.start, s.value FROM "
                       "CUPTI_ACTIVITY_KIND_GRAPH_TRACE AS t JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                       "ON r.correlationId = t.correlationId JOIN StringIds AS s ON s.id = r.nameId")
        check(rows == [(2, 1, "cudaGraphLaunch_v10000")] * 3,
              f"graph: 3 GRAPH_TRACE rows, each joined to its cudaGraphLaunch: {rows}")
        check(g.query(PROJECTION) == [], f"graph: nothing projected, as nsys: {g.query(PROJECTION)}")


CASES = {n[5:]: f for n, f in dict(globals()).items() if n.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--graph-app", required=True)
    ap.add_argument("--fake-cupti", required=True)
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
