#!/usr/bin/env python3
"""The time to dump a full window (docs/leave-it-on.md, "Costs"): fills a ring of LIMIT with a
hot loop of ranges until it has wrapped, then times `nvtxpp-capture dump PID` (the launcher
reads the ring, writes the .sqlite or .json) while the program keeps running.

usage: bench/flight_dump_time.py BUILD_DIR [--limit 1GB] [--ext sqlite] [--repeat 3]
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--limit", default="1GB")
    ap.add_argument("--ext", default="sqlite")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    capture = os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    app = os.path.join(a.build, "tests", "capture", "nvtxpp_flight_app")
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw")
        p = subprocess.Popen([capture, f"--flight-recorder={a.limit}", "--keep-raw", raw,
                              "--dump-on-exit=no", "--no-summary",
                              "-o", os.path.join(tmp, "t." + a.ext), "--", app, "spin",
                              os.path.join(tmp, "ready")],
                             stderr=subprocess.PIPE, text=True)
        path = f"/proc/{p.pid}/task/{p.pid}/children"
        while not open(path).read().split():
            time.sleep(0.01)
        prog = int(open(path).read().split()[0])
        ring = os.path.join(raw, f"nvtxpp-{prog}.ring")
        size = None
        # Full: the ring's sparse file has all its pages written (allocated blocks ~ its size).
        while True:
            if os.path.exists(ring):
                st = os.stat(ring)
                size = st.st_size
                if st.st_blocks * 512 >= st.st_size * 0.99:
                    break
            time.sleep(0.2)
        print(f"ring {size / 2**20:.0f} MiB full")
        for n in range(a.repeat):
            t = time.monotonic()
            d = subprocess.run([capture, "dump", str(prog)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            dt = time.monotonic() - t
            out = os.path.join(tmp, f"t.dump{n + 1}.{a.ext}")
            mib = os.path.getsize(out) / 2**20 if os.path.exists(out) else 0
            print(f"dump {n + 1}: {dt:.1f} s, {mib:.0f} MiB written; {d.stdout.strip()}")
            if os.path.exists(out):
                os.unlink(out)
        os.kill(prog, signal.SIGKILL)
        _, err = p.communicate()
        for line in err.splitlines():  # --keep-raw keeps the rings too: ours to remove
            if "rings are in " in line:
                shutil.rmtree(line.split("rings are in ")[1].split(" (linked")[0],
                              ignore_errors=True)
        print("\n".join(l for l in err.splitlines() if "range(s)" in l))
    return 0


if __name__ == "__main__":
    sys.exit(main())
