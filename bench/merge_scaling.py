#!/usr/bin/env python3
"""How `nvtxpp-capture merge -j N` scales: FILES per-rank SQLite traces of RANGES ranges each
(bench/merge_gen.cpp), merged to .sqlite with the cross-rank summary at each thread count, and the
two floors a merge cannot go below: the disk's read speed (the inputs read once, page cache
dropped first where this user may) and the single writer (the merged rows appended to one
database by SQLite's record copy alone, as merge's writer thread does).

usage: bench/merge_scaling.py [--build DIR] [--sets 16x1000000,64x250000] [--jobs 1,2,4,8,16]
                              [--pieces 1,4,16] [--independent] [--work DIR] [--out FILE]
                              [--cold] [--no-build]

One line per run: wall time, CPU time, peak RSS, speed-up over the first -j listed (1) and efficiency (speed-up
over the threads, and over what the floor allows: min(N, T1 / floor)). The summary printed by
each run is hashed: every -j must print the same one. -j 1 is the one-thread merge (no stage
files, the code path of earlier releases). --pieces: the same merges at the two largest -j with
other numbers of pieces a thread (NVTXPP_MERGE_PIECES_PER_THREAD; merge's default is 8), to
check that choice. --independent: the machine's own ceiling for this work at each -j: the
inputs split into N groups merged by N separate one-thread merges at once (no writer shared,
nothing in common but the machine: its cores, caches, memory and disk), timed until the last
ends. Not a test: the figures depend on the machine.
"""
import argparse
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, **kw).stdout


def drop_caches():
    """Empties the page cache (root only); False where this machine does not allow it."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def generate(gen, work, files, ranges, procs):
    """FILES inputs, by up to PROCS generators at once (each writes its share of the ranks)."""
    per = -(-files // procs)
    running = []
    for first in range(0, files, per):
        n = min(per, files - first)
        running.append(subprocess.Popen([gen, work, str(n), str(ranges), str(first)],
                                        stdout=subprocess.DEVNULL))
    if any(p.wait() != 0 for p in running):
        sys.exit("merge_scaling: the generator failed")


def read_speed(paths):
    """MB/s of reading the inputs once, and whether they came from the disk."""
    dropped = drop_caches()
    size = 0
    t0 = time.monotonic()
    for p in paths:
        with open(p, "rb") as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                size += len(b)
    return size / 1e6 / (time.monotonic() - t0), dropped, size


def writer_floor(paths, out):
    """Seconds to append every input's rows to one database with SQLite's record copy (INSERT
    INTO t SELECT * FROM in.t): the work left to merge's single writer. The generated inputs
    are in the output's layout already, so they stand for the stage files."""
    if os.path.exists(out):
        os.remove(out)
    c = sqlite3.connect(out, isolation_level=None)
    c.execute("PRAGMA journal_mode = OFF")
    c.execute("PRAGMA synchronous = OFF")
    c.execute("ATTACH ? AS src", (paths[0],))
    # The tables merge copies row by row (merge_sqlite.cpp's copied_tables).
    tables = [(n, sql) for n, sql in c.execute(
        "SELECT name, sql FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE "
        "'ENUM\\_%' ESCAPE '\\' AND name NOT IN ('StringIds', 'PROCESSES', "
        "'META_DATA_CAPTURE', 'META_DATA_EXPORT', 'TARGET_INFO_SESSION_START_TIME')")]
    for _, sql in tables:
        c.execute(sql)
    c.execute("DETACH src")
    t0 = time.monotonic()
    for p in paths:
        c.execute("ATTACH ? AS src", (p,))
        c.execute("BEGIN")
        for n, _ in tables:
            c.execute(f'INSERT INTO main."{n}" SELECT * FROM src."{n}"')
        c.execute("COMMIT")
        c.execute("DETACH src")
    secs = time.monotonic() - t0
    c.close()
    os.remove(out)
    return secs


def merge_run(capture, jobs, paths, out, work, cold, env=None):
    """Wall seconds, CPU seconds (user + system), peak RSS in MiB, and the summary's hash."""
    if os.path.exists(out):
        os.remove(out)
    if cold:
        drop_caches()
    stdout_path = os.path.join(work, "summary.txt")
    stderr_path = os.path.join(work, "stderr.txt")
    with open(stdout_path, "wb") as so, open(stderr_path, "wb") as se:
        t0 = time.monotonic()
        p = subprocess.Popen([capture, "merge", "-j", str(jobs), "-o", out] + paths,
                             stdout=so, stderr=se, env=dict(os.environ, **(env or {})))
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        with open(stderr_path) as f:
            sys.exit(f"merge -j {jobs} failed: {f.read()}")
    with open(stdout_path, "rb") as f:
        digest = hashlib.sha1(f.read()).hexdigest()
    os.remove(out)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss // 1024, digest


def independent_run(capture, jobs, paths, work, cold):
    """Wall seconds for `jobs` one-thread merges of 1/jobs of the inputs each, run at once."""
    groups = [paths[k::jobs] for k in range(jobs)]
    if cold:
        drop_caches()
    t0 = time.monotonic()
    procs = [subprocess.Popen([capture, "merge", "-j", "1", "-o",
                               os.path.join(work, f"ind{k}.sqlite")] + g,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for k, g in enumerate(groups) if g]
    codes = [p.wait() for p in procs]
    wall = time.monotonic() - t0
    for k in range(jobs):
        if os.path.exists(os.path.join(work, f"ind{k}.sqlite")):
            os.remove(os.path.join(work, f"ind{k}.sqlite"))
    if any(codes):
        sys.exit(f"independent merges at {jobs} failed: {codes}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "dev"))
    ap.add_argument("--sets", default="16x1000000,64x250000",
                    help="FILESxRANGES, comma-separated")
    ap.add_argument("--jobs", default="1,2,4,8,16")
    ap.add_argument("--pieces", default="", help="pieces a thread to compare, comma-separated")
    ap.add_argument("--independent", action="store_true",
                    help="also time N separate one-thread merges of 1/N of the inputs at once")
    ap.add_argument("--work", default=None, help="where inputs go (default: a new /tmp dir)")
    ap.add_argument("--out", default=None, help="also write the results to this file")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--cold", action="store_true",
                    help="drop the page cache before each merge (root only): inputs from disk")
    a = ap.parse_args()
    sets = [tuple(int(x) for x in s.split("x")) for s in a.sets.split(",")]
    jobs = [int(j) for j in a.jobs.split(",")]
    if not a.no_build:
        sh(["cmake", "--build", a.build, "-j", str(os.cpu_count()), "--target", "nvtxpp-capture",
            "nvtxpp_merge_gen"])
    capture = os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    gen = os.path.join(a.build, "bench", "nvtxpp_merge_gen")
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    cpu = sh(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p' | head -1"]).strip()
    say(f"# nvtxpp-capture merge -j scaling ({time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())})")
    say(f"# machine: {cpu}, {os.cpu_count()} CPU(s); load average at start "
        f"{os.getloadavg()[0]:.1f}")
    try:
        commit = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                    stderr=subprocess.DEVNULL).strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown (no git checkout)"
    say(f"# commit: {commit}")
    if a.cold:
        say(f"# page cache dropped before each merge: "
            f"{'yes' if drop_caches() else 'no (not allowed here)'}")
    else:
        say("# inputs in the page cache (read once before the runs); --cold reads them from disk")
    work = a.work or tempfile.mkdtemp(prefix="nvtxpp-merge-scaling-")
    os.makedirs(work, exist_ok=True)
    try:
        for files, ranges in sets:
            d = os.path.join(work, f"{files}x{ranges}")
            os.makedirs(d, exist_ok=True)
            t0 = time.monotonic()
            generate(gen, d, files, ranges, os.cpu_count() or 1)
            paths = [os.path.join(d, f"trace.rank{i}.sqlite") for i in range(files)]
            mbs, cold, size = read_speed(paths)
            say(f"\n## {files} file(s) x {ranges} range(s): {size / 1e6:.0f} MB, generated in "
                f"{time.monotonic() - t0:.1f} s")
            say(f"read once: {mbs:.0f} MB/s ({'from disk' if cold else 'page cache'}) -> "
                f"{size / 1e6 / mbs:.2f} s")
            floor_w = writer_floor(paths, os.path.join(work, "floor.sqlite"))
            say(f"single writer (record copy of every row into one file): {floor_w:.2f} s")
            floor = max(floor_w, size / 1e6 / mbs)
            t1 = None
            sums = set()
            say("jobs  wall(s)  cpu(s)  rss(MiB)  speed-up  per-thread  vs-floor")
            for j in jobs:
                wall, cpu_s, rss, digest = merge_run(capture, j, paths,
                                                     os.path.join(work, "out.sqlite"),
                                                     work, a.cold)
                sums.add(digest)
                t1 = t1 or wall
                up = t1 / wall
                allowed = min(j, t1 / floor)
                say(f"{j:4d}  {wall:7.2f}  {cpu_s:6.1f}  {rss:8d}  {up:8.2f}  {up / j:10.2f}  "
                    f"{up / allowed:8.2f}")
            if a.pieces:
                say("pieces/thread  jobs  wall(s)  cpu(s)  speed-up  vs-floor")
                for pp in [int(x) for x in a.pieces.split(",")]:
                    for j in sorted(j for j in jobs if j > 1)[-2:]:
                        wall, cpu_s, _, digest = merge_run(
                            capture, j, paths, os.path.join(work, "out.sqlite"), work, a.cold,
                            {"NVTXPP_MERGE_PIECES_PER_THREAD": str(pp)})
                        sums.add(digest)
                        up = t1 / wall
                        say(f"{pp:13d}  {j:4d}  {wall:7.2f}  {cpu_s:6.1f}  {up:8.2f}  "
                            f"{up / min(j, t1 / floor):8.2f}")
            if a.independent:
                say("independent one-thread merges at once (the machine's ceiling):")
                say("merges  wall(s)  speed-up  per-thread")
                for j in jobs:
                    # one merge of everything is the -j 1 run above
                    wall = t1 if j == 1 else independent_run(capture, j, paths, work, a.cold)
                    up = t1 / wall
                    say(f"{j:6d}  {wall:7.2f}  {up:8.2f}  {up / j:10.2f}")
            say(f"summary identical at every -j: {'yes' if len(sums) == 1 else 'NO'}")
            shutil.rmtree(d)
    finally:
        if a.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
