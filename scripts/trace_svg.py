#!/usr/bin/env python3
"""Draws an nvtxpp-capture trace (Chrome Trace Event JSON) as an SVG timeline.

usage: trace_svg.py trace.json out.svg [--width 1000] [--skip-cat CAT]... [--start-at NAME]

One lane per thread (named from the trace's thread_name metadata), push/pop ranges stacked by
depth, start/end ranges in an "async" lane of their process, marks as ticks. Colours come from
the range's NVTX colour, else from a hash of its name. Counter tracks ("ph":"C", NVTX counters)
are drawn as step plots, one lane each, below the threads. GPU stream tracks (kernels, copies) are
lanes like threads; on them, ranges of CUDA graph launches (cat nvtx_graph) are drawn above the
work, nested by depth. --skip-cat leaves out events of a category (e.g. cuda_api, cuda_flow);
--start-at draws from the first event named NAME on (skipping, say, a long start-up).
"""
import argparse
import hashlib
import html
import json

ROW = 18
LANE_GAP = 10
LEFT = 160


def colour(event):
    c = event.get("args", {}).get("color")
    if c:
        return c
    h = hashlib.sha1(event["name"].encode()).digest()
    return "#%02x%02x%02x" % (90 + h[0] % 140, 90 + h[1] % 140, 90 + h[2] % 140)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=1000)
    ap.add_argument("--skip-cat", action="append", default=[])
    ap.add_argument("--start-at")
    ap.add_argument("--only-during", metavar="NAME",
                    help="draw only what starts inside the first range named NAME (NAME@CAT: of "
                    "that category, e.g. layer@nvtx_graph for a graph range on the GPU)")
    a = ap.parse_args()
    with open(a.trace, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    events = [e for e in events if e.get("cat") not in a.skip_cat]
    if a.start_at:
        starts = [e["ts"] for e in events if e.get("name") == a.start_at and "ts" in e]
        if not starts:
            raise SystemExit(f"no event named {a.start_at!r}")
        events = [e for e in events if "ts" not in e or e["ts"] + e.get("dur", 0) >= min(starts)]
    if a.only_during:
        name, _, cat = a.only_during.partition("@")
        spans = [(e["ts"], e["ts"] + e["dur"]) for e in events
                 if e.get("name") == name and "dur" in e and (not cat or e.get("cat") == cat)]
        if not spans:
            raise SystemExit(f"no range named {a.only_during!r}")
        w0, w1 = min(spans)
        events = [e for e in events if "ts" not in e or w0 <= e["ts"] <= w1]

    names = {}
    procs = {}
    order = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "process_sort_index":  # merge: ranks in order
            order[e["pid"]] = e["args"]["sort_index"]
    drawn = [e for e in events if e["ph"] in ("X", "i", "b", "e")]
    counters = {}
    for e in events:
        if e["ph"] == "C":
            for k, v in e.get("args", {}).items():
                if isinstance(v, (int, float)):
                    name = e["name"] if k == "value" else f'{e["name"]}.{k}'
                    counters.setdefault((e["pid"], name), []).append((e["ts"], v))
    drawn_c = [(ts, 0) for series in counters.values() for ts, _ in series]
    if not drawn:
        raise SystemExit("no events to draw")
    t0 = min([e["ts"] for e in drawn] + [ts for ts, _ in drawn_c])
    t1 = max([e["ts"] + e.get("dur", 0) for e in drawn] + [ts for ts, _ in drawn_c])
    scale = (a.width - LEFT - 10) / max(t1 - t0, 1e-3)

    # Async ranges: pair b/e by id.
    asyncs = {}
    for e in drawn:
        if e["ph"] in ("b", "e"):
            asyncs.setdefault((e["pid"], e["id"]), {})[e["ph"]] = e

    # GPU tracks with ranges of CUDA graph launches (cat nvtx_graph): the ranges on top, nested
    # by their depth, the GPU work below them.
    graph_rows = {}
    for e in drawn:
        if e.get("cat") == "nvtx_graph":
            key = (e["pid"], e["tid"])
            graph_rows[key] = max(graph_rows.get(key, 0), e["args"].get("depth", 0) + 1)

    def row(e):
        depth = e.get("args", {}).get("depth", 0) if e["ph"] == "X" else 0
        if e.get("cat") == "nvtx_graph":
            return depth
        return graph_rows.get((e["pid"], e["tid"]), 0) + (depth if isinstance(depth, int) else 0)

    lanes = {}
    for e in drawn:
        if e["ph"] in ("X", "i"):
            key = (e["pid"], e["tid"])
            lanes[key] = max(lanes.get(key, 1), row(e) + 1)
    for (pid, _), _ in asyncs.items():
        lanes[(pid, "async")] = lanes.get((pid, "async"), 0) + 1
    for (pid, name) in counters:
        lanes[(pid, "C:" + name)] = 3

    out = []
    y = 30
    def lane_order(k):  # threads (ranges) first, then async ranges, then GPU stream tracks
        pid, tid = k
        p = (order.get(pid, pid), pid)
        if tid == "async":
            return (p, 1, 0)
        if isinstance(tid, str) and tid.startswith("C:"):
            return (p, 1.5, tid)
        return (p, 2 if isinstance(tid, int) and tid >= 1 << 30 else 0, tid)

    for key in sorted(lanes, key=lane_order):
        pid, tid = key
        label = ("async ranges" if tid == "async" else
                 tid[2:] if isinstance(tid, str) and tid.startswith("C:") else
                 names.get(key, f"thread {tid}"))
        height = lanes[key] * ROW
        out.append(f'<rect x="0" y="{y - 2}" width="{a.width}" height="{height + 4}" '
                   f'fill="#f4f4f4"/>')
        out.append(f'<text x="6" y="{y + 13}" font-size="12">{html.escape(label)}'
                   f'<title>{html.escape(procs.get(pid, str(pid)))}</title></text>')
        if isinstance(tid, str) and tid.startswith("C:"):
            series = sorted(counters[(pid, tid[2:])])
            top = max((abs(v) for _, v in series), default=0) or 1
            pts = []
            prev_y = None
            for ts, v in series:
                x = LEFT + (ts - t0) * scale
                vy = y + height - 2 - (height - 6) * v / top
                if prev_y is not None:
                    pts.append(f"{x:.1f},{prev_y:.1f}")
                pts.append(f"{x:.1f},{vy:.1f}")
                prev_y = vy
            if pts:
                pts.append(f"{LEFT + (t1 - t0) * scale:.1f},{prev_y:.1f}")
                out.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="#1f5fa8" '
                           f'stroke-width="1.2"/>')
                out.append(f'<text x="{a.width - 12}" y="{y + 11}" font-size="10" '
                           f'text-anchor="end">max {int(top):,}</text>' if top == int(top) else
                           f'text-anchor="end">max {top:g}</text>')
        elif tid == "async":
            for row, ((p, _), pair) in enumerate(x for x in asyncs.items() if x[0][0] == pid):
                b, e = pair.get("b"), pair.get("e")
                if not b:
                    continue
                x0 = LEFT + (b["ts"] - t0) * scale
                x1 = LEFT + ((e or b)["ts"] - t0) * scale
                ry = y + row * ROW
                out.append(f'<rect x="{x0:.1f}" y="{ry}" width="{max(x1 - x0, 1):.1f}" '
                           f'height="{ROW - 3}" fill="{colour(b)}" rx="3"/>')
                out.append(f'<text x="{x0 + 3:.1f}" y="{ry + 11}" font-size="10">'
                           f'{html.escape(b["name"])}</text>')
        else:
            for e in drawn:
                if (e["pid"], e["tid"]) != key:
                    continue
                x0 = LEFT + (e["ts"] - t0) * scale
                if e["ph"] == "X":
                    ry = y + row(e) * ROW
                    w = max(e["dur"] * scale, 1)
                    out.append(f'<rect x="{x0:.1f}" y="{ry}" width="{w:.1f}" height="{ROW - 3}" '
                               f'fill="{colour(e)}" stroke="#333" stroke-width="0.5"><title>'
                               f'{html.escape(e["name"])} ({e["dur"]:.3f} us)</title></rect>')
                    if w > 30:
                        out.append(f'<text x="{x0 + 3:.1f}" y="{ry + 11}" font-size="10">'
                                   f'{html.escape(e["name"][:int(w / 6)])}</text>')
                else:
                    out.append(f'<path d="M{x0:.1f},{y} l4,-7 l-8,0 z" fill="#c00"><title>'
                               f'{html.escape(e["name"])}</title></path>')
        y += height + LANE_GAP
    axis = []
    for k in range(6):
        x = LEFT + k * (a.width - LEFT - 10) / 5
        axis.append(f'<line x1="{x:.1f}" y1="18" x2="{x:.1f}" y2="{y}" stroke="#ddd"/>')
        axis.append(f'<text x="{x:.1f}" y="14" font-size="10" text-anchor="middle">'
                    f'{(t1 - t0) * k / 5:.0f} us</text>')
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{a.width}" height="{y + 10}" '
           f'font-family="sans-serif">', '<rect width="100%" height="100%" fill="white"/>']
    svg += axis + out + ["</svg>"]
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
