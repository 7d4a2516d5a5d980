#!/usr/bin/env python3
"""CUDA graph work under its capture-time NVTX ranges, from an Nsight Systems export.

usage: nsys_graph_ranges.py REPORT.sqlite [--csv]

Nsight Systems projects NVTX ranges onto the GPU through the CUDA API call that launched the
work; every node of a graph launch comes from one cudaGraphLaunch, so the ranges a graph was
captured in get no GPU time there (docs/graphs.md). With `nsys profile --cuda-graph-trace=node`
its export has what is needed to do better, offline: each kernel, copy and memset carries its
graphNodeId, and CUDA_GRAPH_NODE_EVENTS records, for every node, when and on which thread it
was created (originalGraphNodeId empty) or which node it was cloned from. This script applies
nvtxpp-capture's rule (docs/graphs.md) to those tables: a node belongs to the push/pop ranges
open on its creating thread at its creation, a clone to its original's; each graph launch (one
correlation id) gives each such range one GPU-side instance spanning its nodes' work.

Prints one row per range ("domain:name"): instances, total GPU time of the instances, kernels,
memcpys, memsets. Not covered: child graphs (the export does not say which child node embeds a
graph) and cudaGraphExecUpdate (not in CUDA_GRAPH_NODE_EVENTS): their nodes count under the
ranges of the nodes they were cloned from. Exit status 2 when the export lacks the tables (a
profile taken without --cuda-graph-trace=node has no graph node ids).
"""
import argparse
import bisect
import sqlite3
import sys


def columns(con, table):
    return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--csv", action="store_true")
    a = ap.parse_args()
    con = sqlite3.connect(a.report)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    need = {"CUDA_GRAPH_NODE_EVENTS", "NVTX_EVENTS"}
    if not need <= tables:
        print(f"nsys_graph_ranges: {a.report} lacks {sorted(need - tables)} (profile with "
              "--cuda-graph-trace=node and -t cuda,nvtx)", file=sys.stderr)
        return 2
    have = set(columns(con, "CUDA_GRAPH_NODE_EVENTS"))
    want = {"graphNodeId", "originalGraphNodeId", "start", "globalTid"}
    if not want <= have:
        print(f"nsys_graph_ranges: CUDA_GRAPH_NODE_EVENTS lacks {sorted(want - have)} "
              f"(it has {sorted(have)}): an Nsight Systems version this script does not know",
              file=sys.stderr)
        return 2
    strings = dict(con.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
    # Nodes: created (no original) with thread and time, or cloned from an original.
    created, original = {}, {}
    for node, orig, start, tid in con.execute(
            "SELECT graphNodeId, originalGraphNodeId, start, globalTid FROM CUDA_GRAPH_NODE_EVENTS"):
        if orig:
            original.setdefault(node, orig)
        else:
            created.setdefault(node, (tid, start))
    # Push/pop ranges by thread, and domain names by (process, domain id).
    has_text_id = "textId" in columns(con, "NVTX_EVENTS")
    text_col = "text, textId" if has_text_id else "text, NULL"
    domains = {}
    for pid_tid, dom, text, text_id in con.execute(
            f"SELECT globalTid, domainId, {text_col} FROM NVTX_EVENTS WHERE eventType = 75"):
        domains[(pid_tid >> 24, dom)] = text if text is not None else strings.get(text_id, "")
    by_tid = {}
    for tid, start, end, dom, text, text_id in con.execute(
            f"SELECT globalTid, start, end, domainId, {text_col} FROM NVTX_EVENTS "
            "WHERE eventType = 59"):
        name = text if text is not None else strings.get(text_id, "")
        key = domains.get((tid >> 24, dom or 0), "") + ":" + name
        by_tid.setdefault(tid, []).append((start, end if end is not None else 1 << 62, key))
    for v in by_tid.values():
        v.sort()

    def ranges_of(node):
        seen = 0
        # A clone's ranges are its original's: CUDA reports a copied node as created too (at
        # the copy, as on an H100 with CUDA 13), so the cloned-from link decides.
        while node in original and seen < 64:
            node, seen = original[node], seen + 1
        if node not in created:
            return []
        tid, t = created[node]
        v = by_tid.get(tid, [])
        hits = [r for r in v[:bisect.bisect_right(v, (t, 1 << 63, ""))] if r[0] <= t <= r[1]]
        return [(r[0], r[2]) for r in hits]  # (range start, name): outer first

    work = []
    for table, kind in (("CUPTI_ACTIVITY_KIND_KERNEL", 0), ("CUPTI_ACTIVITY_KIND_MEMCPY", 1),
                        ("CUPTI_ACTIVITY_KIND_MEMSET", 2)):
        if table in tables and "graphNodeId" in columns(con, table):
            work += [(c, s, e, n, kind) for c, s, e, n in con.execute(
                f"SELECT correlationId, start, end, graphNodeId FROM {table} "
                "WHERE graphNodeId IS NOT NULL AND graphNodeId != 0")]
    instances = {}  # (correlation, range) -> [start, end, kernels, memcpys, memsets]
    for corr, start, end, node, kind in work:
        for r in ranges_of(node):
            i = instances.setdefault((corr, r), [start, end, 0, 0, 0])
            i[0], i[1] = min(i[0], start), max(i[1], end)
            i[2 + kind] += 1
    rows = {}
    for (corr, (rstart, name)), (s, e, k, m, z) in instances.items():
        row = rows.setdefault(name, [0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += e - s
        row[2] += k
        row[3] += m
        row[4] += z
    header = ["Range", "Instances", "Total GPU Time (ns)", "Kernels", "Memcpys", "Memsets"]
    out = [[name] + v for name, v in sorted(rows.items(), key=lambda x: (-x[1][1], x[0]))]
    if a.csv:
        print(",".join(header))
        for r in out:
            print(",".join(str(x) for x in r))
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *out)]
        for r in [header] + out:
            print("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)
                            for i, (x, w) in enumerate(zip(r, widths))))
        if not out:
            print(f"(no graph work under capture-time ranges: {len(work)} graph node executions, "
                  f"{len(created)} nodes created)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
