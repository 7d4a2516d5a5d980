#!/usr/bin/env python3
"""Memory and disk of a long run under the flight recorder (docs/leave-it-on.md, "Limits").

Runs `nvtxpp_flight_app spin` (a hot loop of ranges, forever) under
`nvtxpp-capture --flight-recorder=LIMIT`, and every second samples the program's resident memory
(VmRSS, which counts the ring's mapped pages) and the raw directory's disk use (allocated blocks,
the ring's sparse file included), for DURATION seconds; then kills the program (SIGKILL: the
last window is dumped, its time printed). Writes CSV (seconds, rss_kib, disk_kib) to stdout and,
with --svg, a plot.

usage: bench/flight_memory.py BUILD_DIR [--limit 256MB] [--duration 600] [--svg FILE]
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def disk_kib(path):
    total = 0
    for name in os.listdir(path):
        st = os.stat(os.path.join(path, name))
        total += st.st_blocks * 512
    return total // 1024


def svg(rows, limit, path):
    w, h, pad = 640, 320, 50
    tmax = max(r[0] for r in rows) or 1
    ymax = max(max(r[1], r[2]) for r in rows) or 1
    def pts(i):
        return " ".join(f"{pad + r[0] / tmax * (w - 2 * pad):.1f},"
                        f"{h - pad - r[i] / ymax * (h - 2 * pad):.1f}" for r in rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{pad}" y="20">--flight-recorder={limit}: a hot loop of ranges for '
           f'{tmax:.0f} s</text>',
           f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
           f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
           f'<text x="{w / 2 - 20}" y="{h - 15}">seconds</text>',
           f'<text x="5" y="{pad - 8}">{ymax / 1024:.0f} MiB</text>',
           f'<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{pts(1)}"/>',
           f'<polyline fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="6,3" '
           f'points="{pts(2)}"/>',
           f'<text x="{w - 230}" y="{pad + 15}" fill="#1f77b4">resident memory (program)</text>',
           f'<text x="{w - 230}" y="{pad + 32}" fill="#d62728">disk (raw directory)</text>',
           "</svg>"]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--limit", default="256MB")
    ap.add_argument("--duration", type=int, default=600)
    ap.add_argument("--svg", default="")
    a = ap.parse_args()
    capture = os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    app = os.path.join(a.build, "tests", "capture", "nvtxpp_flight_app")
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw")
        p = subprocess.Popen([capture, f"--flight-recorder={a.limit}", "--keep-raw", raw,
                              "--no-summary", "-o", os.path.join(tmp, "t.sqlite"), "--", app,
                              "spin", os.path.join(tmp, "ready")],
                             stderr=subprocess.PIPE, text=True)
        path = f"/proc/{p.pid}/task/{p.pid}/children"
        while not open(path).read().split():
            time.sleep(0.01)
        prog = int(open(path).read().split()[0])
        rows = []
        t0 = time.monotonic()
        print("seconds,rss_kib,disk_kib")
        while time.monotonic() - t0 < a.duration:
            t = time.monotonic() - t0
            rows.append((t, rss_kib(prog), disk_kib(raw)))
            print(f"{t:.1f},{rows[-1][1]},{rows[-1][2]}", flush=True)
            time.sleep(1.0)
        t_kill = time.monotonic()
        os.kill(prog, signal.SIGKILL)
        _, err = p.communicate()
        for line in err.splitlines():  # --keep-raw keeps the rings too: ours to remove
            if "rings are in " in line:
                shutil.rmtree(line.split("rings are in ")[1].split(" (linked")[0],
                              ignore_errors=True)
        print(f"# dump after SIGKILL: {time.monotonic() - t_kill:.1f} s", file=sys.stderr)
        print("\n".join("# " + l for l in err.splitlines() if "dump" in l or "range" in l),
              file=sys.stderr)
    if a.svg:
        svg(rows, a.limit, a.svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
