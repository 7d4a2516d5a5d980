#!/usr/bin/env python3
"""Turns an Nsight Systems SQLite export into the Chrome-trace JSON that trace_svg.py draws.

    nsys_to_trace.py REPORT.sqlite OUT.json [--from-range PREFIX]

One lane per CPU thread with its NVTX push/pop ranges (nested by depth, in their NVTX colours),
one lane per CUDA stream with its copies and kernels. With --from-range (default "H2D Memory"),
only the window from the first range whose name starts with PREFIX to the end of the last GPU
operation is kept (the critical section, without the warm-up). Standard library only.
Then: trace_svg.py OUT.json OUT.svg
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys

COPY_COLOURS = {1: "#e8d44d", 2: "#f0a030", 8: "#9ab"}  # HtoD, DtoH, DtoD (CUPTI copyKind)
COPY_NAMES = {1: "H2D", 2: "D2H", 8: "D2D"}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sqlite")
    ap.add_argument("out")
    ap.add_argument("--from-range", default="H2D Memory")
    a = ap.parse_args(argv)
    db = sqlite3.connect(f"file:{a.sqlite}?mode=ro", uri=True)
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    cols = {r[1] for r in db.execute("PRAGMA table_info(NVTX_EVENTS)")}
    text_id = "textId" if "textId" in cols else "NULL"
    ranges = []
    for text, tid_text, start, end, color, tid in db.execute(
        f"SELECT text, {text_id}, start, end, color, globalTid FROM NVTX_EVENTS "
        "WHERE end IS NOT NULL AND eventType = 59 ORDER BY start, end DESC"
    ):
        name = text if text is not None else strings.get(tid_text, "")
        ranges.append((name, start, end, color, tid))
    gpu = []
    for kind, start, end, stream, nbytes in db.execute(
        "SELECT copyKind, start, end, streamId, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"
    ):
        gpu.append((f"{COPY_NAMES.get(kind, 'copy')} {nbytes / 1e6:.1f} MB", start, end, stream,
                    COPY_COLOURS.get(kind, "#999")))
    for name_id, start, end, stream in db.execute(
        "SELECT shortName, start, end, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL"
    ):
        gpu.append((strings.get(name_id, str(name_id)), start, end, stream, "#5aa05a"))
    firsts = [r[1] for r in ranges if r[0].startswith(a.from_range)]
    if not firsts or not gpu:
        print(f"nsys_to_trace.py: no range starting with '{a.from_range}' or no GPU work",
              file=sys.stderr)
        return 1
    t0 = min(firsts)
    t1 = max(g[2] for g in gpu)

    events: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "CPU"}},
                          {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "GPU"}}]
    threads = sorted({r[4] for r in ranges})
    for i, tid in enumerate(threads):
        events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": i,
                       "args": {"name": f"CPU thread {i} (NVTX)"}})
    open_ends: dict[int, list[int]] = {}
    for name, start, end, color, tid in ranges:
        stack = open_ends.setdefault(tid, [])
        while stack and stack[-1] <= start:
            stack.pop()
        depth = len(stack)
        stack.append(end)
        if end < t0 or start > t1:
            continue
        s, e = max(start, t0), min(end, t1)
        args = {"depth": depth}
        if color is not None:
            args["color"] = "#%06x" % (color & 0xFFFFFF)
        events.append({"ph": "X", "name": name, "pid": 1, "tid": threads.index(tid),
                       "ts": (s - t0) / 1e3, "dur": (e - s) / 1e3, "args": args})
    streams = sorted({g[3] for g in gpu if g[2] >= t0})
    for sid in streams:
        events.append({"ph": "M", "name": "thread_name", "pid": 2, "tid": sid,
                       "args": {"name": f"CUDA stream {sid}"}})
    for name, start, end, stream, colour in gpu:
        if end < t0:
            continue
        events.append({"ph": "X", "name": name, "pid": 2, "tid": stream, "ts": (start - t0) / 1e3,
                       "dur": (end - start) / 1e3, "args": {"color": colour}})
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": events}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
