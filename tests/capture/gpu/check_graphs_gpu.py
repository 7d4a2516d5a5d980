#!/usr/bin/env python3
"""CUDA graphs on a real GPU: examples/graphs/graph_replay --all run under nvtxpp-capture; each
replayed node's work must come back under the NVTX ranges it was captured or added in, as the
fake-CUPTI test (tests/capture/cupti_tests.py fake_graphs) expects of the same cases.

usage: check_graphs_gpu.py --capture PATH --app PATH [--out DIR]
Exit status 0 = pass; the summary (CSV) and the JSON are kept in --out when given.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cupti_tests import csv_section  # noqa: E402

# (instances, GPU nodes) per "domain:name": graph_replay --all (see its cases).
WANT = {
    ":layer": (3, 9), ":attention": (3, 6), ":mlp": (3, 3),
    ":outer": (2, 6), "model:build": (2, 6),
    ":child_body": (1, 1), ":parent": (1, 1),
    ":v1": (1, 1), ":v2": (1, 1),
    ":worker": (1, 1),
}
# The node kinds where CUDA reports them as such (a copy node runs as a copy, a memset as a
# memset): kernels, memcpys, memsets.
KINDS = {":outer": (2, 2, 2), "model:build": (2, 2, 2), ":layer": (9, 0, 0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what, file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "graphs.json")
        p = subprocess.run([a.capture, "--csv", "-o", trace, "--", a.app, "--all"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
        print(p.stdout)
        print(p.stderr, file=sys.stderr)
        check(p.returncode == 0, f"exit 0, got {p.returncode}")
        rows = csv_section(p.stdout, "NVTX Ranges in CUDA Graph Launches") or []
        got = {r["Range"]: (int(r["Instances"]),
                            int(r["Kernels"]) + int(r["Memcpys"]) + int(r["Memsets"]))
               for r in rows}
        check(got == WANT, f"graph range table {got}, want {WANT}")
        kinds = {r["Range"]: (int(r["Kernels"]), int(r["Memcpys"]), int(r["Memsets"]))
                 for r in rows}
        for k, v in KINDS.items():
            check(kinds.get(k) == v, f"{k}: kernels, memcpys, memsets {kinds.get(k)}, want {v}")
        if os.path.exists(trace):
            with open(trace) as fh:
                events = json.load(fh)["traceEvents"]
            ops = {e["tid"] for e in events
                   if e.get("cat") in ("cuda_kernel", "cuda_memcpy", "cuda_memset")}
            graph = [e for e in events if e.get("cat") == "nvtx_graph"]
            check(graph and all(g["tid"] in ops for g in graph),
                  "graph ranges on the GPU tracks where work ran")
            outer = {g["tid"] for g in graph if g["name"] == "outer"}
            check(len(outer) == 2, f"two executable graphs on two streams: tracks {outer}")
        if a.out:
            os.makedirs(a.out, exist_ok=True)
            with open(os.path.join(a.out, "graphs_all_summary.csv"), "w") as fh:
                fh.write(p.stdout)
            if os.path.exists(trace):
                shutil.copy(trace, os.path.join(a.out, "graphs_all.json"))
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
