#!/usr/bin/env python3
"""scripts/nsys_graph_ranges.py on an export in Nsight Systems' layout (the tables and columns
its --cuda-graph-trace=node export has): the issue's example, `layer` > `attention` (2 kernels),
`mlp` (1 kernel) captured, instantiated (clones), replayed 3 times under `replay`; plus a node
created with no range open and a range of another domain.

usage: test_nsys_graph_ranges.py --script PATH
"""
import argparse
import csv
import io
import os
import sqlite3
import subprocess
import sys
import tempfile

TID = (7 << 24) | 7  # globalTid of pid 7, tid 7


def build(path):
    con = sqlite3.connect(path)
    con.executescript("""
      CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
        rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
        endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
      CREATE TABLE CUDA_GRAPH_NODE_EVENTS (start INTEGER NOT NULL, end INTEGER, globalTid INTEGER,
        graphNodeId INTEGER NOT NULL, originalGraphNodeId INTEGER);
      CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
        correlationId INTEGER, graphNodeId INTEGER);
    """)
    con.execute("INSERT INTO StringIds VALUES (1, 'mlp')")
    ev = [(100, 900, 59, "layer", None, 0), (110, 400, 59, "attention", None, 0),
          (500, 800, 59, None, 1, 0), (0, 0, 75, "lib", None, 3), (910, 990, 59, "in lib", None, 3),
          (1000, 5000, 59, "replay", None, 0)]
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, domainId, "
                    "globalTid) VALUES (?,?,?,?,?,?,?)", [e + (TID,) for e in ev])
    nodes = [(200, 1, None), (300, 2, None), (600, 3, None), (950, 4, None), (995, 5, None)]
    # A copy is reported created (no original) and then cloned, as CUDA 13 does on an H100.
    clones = [(998, 100 + n, None) for n in range(1, 6)] + [(999, 100 + n, n) for n in range(1, 6)]
    con.executemany("INSERT INTO CUDA_GRAPH_NODE_EVENTS (start, graphNodeId, originalGraphNodeId, "
                    "globalTid) VALUES (?,?,?,?)", [x + (TID,) for x in nodes + clones])
    k = []
    for launch in range(3):
        t = 2000 + launch * 1000
        for i, node in enumerate((101, 102, 103, 104, 105)):
            k.append((t + i * 100, t + i * 100 + 50, 40 + launch, node))
    k.append((9000, 9050, 99, None))  # not graph work
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?)", k)
    con.commit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "r.sqlite")
        build(db)
        p = subprocess.run([sys.executable, a.script, db, "--csv"], stdout=subprocess.PIPE,
                           text=True, timeout=60)
        rows = {r["Range"]: (int(r["Instances"]), int(r["Kernels"]), int(r["Total GPU Time (ns)"]))
                for r in csv.DictReader(io.StringIO(p.stdout))}
        want = {":layer": (3, 9, 3 * 250), ":attention": (3, 6, 3 * 150), ":mlp": (3, 3, 3 * 50),
                "lib:in lib": (3, 3, 3 * 50)}
        bad = rows != want or p.returncode != 0
        empty = os.path.join(tmp, "e.sqlite")
        sqlite3.connect(empty).execute("CREATE TABLE NVTX_EVENTS (start INTEGER)").connection.close()
        q = subprocess.run([sys.executable, a.script, empty], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        if q.returncode != 2 or "cuda-graph-trace=node" not in q.stderr:
            print(f"FAIL: an export without graph node events: {q.returncode} {q.stderr}")
            bad = True
        if rows != want:
            print(f"FAIL: got {rows}, want {want}")
        print("ok" if not bad else "failed")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
