#!/usr/bin/env python3
"""An instrumented program calling an instrumented shared library, under nvtxpp-capture: each
side's ranges in its own domain, named from its own symbol table, nested across the boundary.
usage: check_shared.py NVTXPP_CAPTURE INSTRUMENT_SHARED_APP"""
import collections
import json
import os
import subprocess
import sys
import tempfile

capture, app = sys.argv[1:3]
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "t.json")
    p = subprocess.run([capture, "--no-summary", "-o", out, "--", app], capture_output=True,
                       text=True, timeout=60)
    print(p.stdout, p.stderr)
    if p.returncode != 0:
        sys.exit(f"run failed: {p.returncode}")
    with open(out) as f:
        rs = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
got = collections.Counter((r["args"]["domain"], r["name"], r["args"]["depth"]) for r in rs)
want = {("instrument_shared_app", "app::step", 0): 3,
        ("libinstrument_shared_subject.so", "ns2::shared_fn", 0): 3,
        # not exported: named from the library's .symtab
        ("libinstrument_shared_subject.so", "ns2::(anonymous namespace)::hidden_helper", 1): 3}
print(dict(got))
sys.exit(0 if dict(got) == want else "unexpected ranges")
