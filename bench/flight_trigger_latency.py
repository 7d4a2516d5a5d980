#!/usr/bin/env python3
"""How late a trigger's dump is written (docs/leave-it-on.md, "Triggers"): the time from the
slow instance's end to the dump's file written, as the dump's own line says it ("written to
FILE N ms after the instance ended"; both times are the machine's monotonic clock). The program
(`nvtxpp_flight_app busy_after`) steps 5 ms "Train step N" ranges, step 30 takes 300 ms, and goes
on stepping until the dump is there, beside SPINNERS threads that keep every core busy, idle
(no ranges) or in a hot loop of ranges that fills the window (`--spin-ranges`).

usage: bench/flight_trigger_latency.py BUILD_DIR [--runs 10] [--spinners 2] [--spin-ranges]
                                       [--limit 16MB] [--ext json]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def one_run(capture, app, tmp, a, n):
    out = os.path.join(tmp, f"r{n}.{a.ext}")
    stop = os.path.join(tmp, f"stop{n}")
    args = [app, "busy_after", stop, "30", "5000", "300000", str(a.spinners)]
    if a.spin_ranges:
        args.append("ranges")
    p = subprocess.Popen([capture, f"--flight-recorder={a.limit}", "--no-summary",
                          "--dump-on-exit=no", "--trigger=Train step *>150ms", "-o", out,
                          "--"] + args, stderr=subprocess.PIPE, text=True)
    dump = os.path.join(tmp, f"r{n}.dump1.{a.ext}")
    end = time.monotonic() + 120
    while not os.path.exists(dump) and time.monotonic() < end and p.poll() is None:
        time.sleep(0.01)
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    m = re.search(r"(\d+) KiB of window, written to \S+ (\d+) ms after the instance ended "
                  r"\(seen after (\d+) ms", err)
    for f in os.listdir(tmp):
        if f.startswith(f"r{n}."):
            os.unlink(os.path.join(tmp, f))
    if not m:
        print(f"run {n}: no trigger dump line:\n{err}", file=sys.stderr)
        return None
    missed = "no longer reaches back" in err
    return int(m.group(2)), int(m.group(1)), int(m.group(3)), missed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--spinners", type=int, default=2)
    ap.add_argument("--spin-ranges", action="store_true")
    ap.add_argument("--limit", default="16MB")
    ap.add_argument("--ext", default="json")
    a = ap.parse_args()
    capture = os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    app = os.path.join(a.build, "tests", "capture", "nvtxpp_flight_app")
    print(f"# {os.cpu_count()} CPUs; {a.spinners} spinner thread(s)"
          f"{' recording ranges' if a.spin_ranges else ' (no ranges)'}; "
          f"--flight-recorder={a.limit}, .{a.ext}")
    got = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(a.runs):
            r = one_run(capture, app, tmp, a, n)
            if r is not None:
                got.append(r)
                print(f"run {n + 1}: written {r[0]} ms after the instance ended (seen after "
                      f"{r[2]} ms), window {r[1]} KiB{'; the instance not in it' if r[3] else ''}")
    if not got:
        return 1
    ms = sorted(x[0] for x in got)
    seen = sorted(x[2] for x in got)
    print(f"written, ms after the instance ended: median {statistics.median(ms):.0f}, "
          f"min {ms[0]}, max {ms[-1]} ({len(ms)} runs); seen: median "
          f"{statistics.median(seen):.0f}, min {seen[0]}, max {seen[-1]}; window KiB median "
          f"{statistics.median(x[1] for x in got):.0f}; instance missed in "
          f"{sum(1 for x in got if x[3])} run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
