#!/usr/bin/env python3
"""NVTX push/pop ranges of SQLite traces (ours or nsys's export), counted by name, to tell a
tool's losses from a program's run-to-run work (docs/pytorch.md, "JAX").

usage: nvtx_counts.py A.sqlite B.sqlite [C.sqlite ...]
For each file: its ranges, kernels, and ranges by the name's first word (XLA's `XlaPass:...`);
then for each pair: how many names (every run of digits read as #, XLA's ids of the run) have
different counts. Exit status 0; 2 on an unreadable file.
"""
import collections
import itertools
import os
import re
import sqlite3
import sys


def counts(path):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
        rows = c.execute("SELECT coalesce(n.text, s.value) FROM NVTX_EVENTS n LEFT JOIN StringIds s "
                         "ON s.id = n.textId WHERE n.eventType = 59").fetchall()
        kernels = c.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    return collections.Counter(re.sub(r"\d+", "#", r[0] or "") for r in rows), kernels


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    got = {}
    for path in sys.argv[1:]:
        try:
            got[path] = counts(path)
        except sqlite3.Error as e:
            print(f"nvtx_counts: {path}: {e}", file=sys.stderr)
            return 2
    for path, (c, kernels) in got.items():
        first = collections.Counter()
        for name, n in c.items():
            first[name.split(":")[0]] += n
        print(f"{os.path.basename(path)}: {sum(c.values())} ranges, {len(c)} names, {kernels} kernels; "
              + ", ".join(f"{k} {n}" for k, n in first.most_common(8)))
    for a, b in itertools.combinations(got, 2):
        ca, cb = got[a][0], got[b][0]
        differ = sum(1 for k in set(ca) | set(cb) if ca[k] != cb[k])
        print(f"{os.path.basename(a)} / {os.path.basename(b)}: {differ} of {len(set(ca) | set(cb))} "
              f"names with different counts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
