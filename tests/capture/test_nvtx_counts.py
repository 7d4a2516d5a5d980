#!/usr/bin/env python3
"""scripts/nvtx_counts.py on SQLite files made here: two runs whose range names carry an id of
the run (as XLA's) count alike once the digits are folded; a run with a range fewer is told
apart; an unreadable file exits 2.

  test_nvtx_counts.py --script PATH/nvtx_counts.py
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile


def trace(path, names, kernels):
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
        c.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, "
                  "text TEXT, textId INTEGER, globalTid INTEGER)")
        c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER)")
        for i, name in enumerate(names):
            if i % 2:  # half by registered string (textId), as nsys exports them
                c.execute("INSERT INTO StringIds VALUES (?, ?)", (i + 1, name))
                c.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, NULL, ?, 1)", (i, i + 1, i + 1))
            else:
                c.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, NULL, 1)", (i, i + 1, name))
        c.execute("INSERT INTO NVTX_EVENTS VALUES (0, 0, 75, 'TSL', NULL, 1)")  # a domain: not counted
        c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?)",
                      [(k, k + 1) for k in range(kernels)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        one, two, short = (os.path.join(tmp, n) for n in ("one.sqlite", "two.sqlite", "short.sqlite"))
        trace(one, ["XlaPass:#program_id=12#"] * 3 + ["Thunk:#hlo_op=gemm.1#"], 5)
        trace(two, ["XlaPass:#program_id=9071#"] * 3 + ["Thunk:#hlo_op=gemm.1#"], 5)
        trace(short, ["XlaPass:#program_id=9071#"] * 2 + ["Thunk:#hlo_op=gemm.1#"], 5)
        p = subprocess.run([sys.executable, a.script, one, two, short], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        out = p.stdout
        print(out)
        check(p.returncode == 0, f"exit 0: {p.stderr}")
        check("one.sqlite: 4 ranges, 2 names, 5 kernels; XlaPass 3, Thunk 1" in out,
              f"a file's ranges, names, kernels and first words")
        check("one.sqlite / two.sqlite: 0 of 2 names with different counts" in out,
              f"ids of the run folded: the runs alike")
        check("one.sqlite / short.sqlite: 1 of 2 names with different counts" in out,
              f"a range fewer told apart")
        with open(os.path.join(tmp, "bad.sqlite"), "w") as f:
            f.write("not a database")
        p = subprocess.run([sys.executable, a.script, one, os.path.join(tmp, "bad.sqlite")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 2 and "bad.sqlite" in p.stderr, f"unreadable: exit 2: {p.stderr}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
