#!/usr/bin/env python3
"""One program of the corpus under Nsight Systems and under nvtxpp-capture, compared through
nsys's own stats reports on the six GPU reports (scripts/compare_nsys.py --reports gpu
--counts-only: the same rows with equal counts; time cells are noted, not judged).

    compare_corpus.py NAME --capture PATH --out DIR [--nsys PATH] [--nsys-arg ARG]...
                      [--capture-arg ARG]... -- PROGRAM...

Writes DIR/NAME.md (the side-by-side tables), DIR/NAME.json ({report: [rows ours, rows nsys,
mismatches]}, plus "unattributed": the capture's line about GPU work with no launching call, or
"") and both .sqlite files. Exit status 0 when all six reports agree and the capture attributed
every GPU operation; 1 otherwise; 2 when a tool could not be run.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "..", "..", "..", "scripts", "compare_nsys.py")


def find_nsys(given):
    if given:
        return given
    if os.environ.get("NVTXPP_NSYS"):
        return os.environ["NVTXPP_NSYS"]
    local = os.path.join(HERE, "..", "..", "..", ".gpu-tools", "nsys")
    return local if os.access(local, os.X_OK) else (shutil.which("nsys") or "nsys")


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--capture", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nsys")
    ap.add_argument("--nsys-arg", action="append", default=[])
    ap.add_argument("--capture-arg", action="append", default=[])
    ap.add_argument("--compare-arg", action="append", default=[],
                    help="passed to scripts/compare_nsys.py (e.g. --fold-digits)")
    ap.add_argument("--nsys-runs", type=int, default=1,
                    help="nsys runs: more than one gives compare_nsys.py --noise (counts or "
                         "times nsys itself does not reproduce)")
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("the program follows --")
    cut = argv.index("--")
    a = ap.parse_args(argv[:cut])
    prog = argv[cut + 1:]
    nsys = find_nsys(a.nsys)
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, a.name)
    warm = run(prog, timeout=600)  # fills JIT caches (Numba's, the driver's) before the two runs
    if warm.returncode != 0:
        print(warm.stdout, warm.stderr)
        print(f"{a.name}: the program fails on its own (status {warm.returncode})")
        return 2
    p = run([nsys, "profile", "-t", "cuda,nvtx", "--force-overwrite", "true", "-o",
             base + "-nsys"] + a.nsys_arg + prog, timeout=900)
    if p.returncode != 0:
        print(p.stdout[-4000:], p.stderr[-4000:])
        return 2
    p = run([nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o",
             base + "-nsys.sqlite", base + "-nsys.nsys-rep"], timeout=900)
    if p.returncode != 0:
        print(p.stdout[-4000:], p.stderr[-4000:])
        return 2
    noise = []
    for k in range(2, a.nsys_runs + 1):
        again = f"{base}-nsys{k}"
        p = run([nsys, "profile", "-t", "cuda,nvtx", "--force-overwrite", "true", "-o", again]
                + a.nsys_arg + prog, timeout=900)
        p = p if p.returncode != 0 else run(
            [nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o",
             again + ".sqlite", again + ".nsys-rep"], timeout=900)
        if p.returncode != 0:
            print(p.stdout[-4000:], p.stderr[-4000:])
            return 2
        noise += ["--noise", again + ".sqlite"]
    c = run([a.capture, "--no-summary", "-o", base + "-ours.sqlite"] + a.capture_arg + ["--"] +
            prog, timeout=900)
    print(c.stderr)
    if c.returncode != 0:
        print(c.stdout[-4000:])
        return 2
    m = re.search(r"\d+ GPU operation\(s\) with no launching CUDA API call[^\n]*", c.stderr)
    unattributed = m.group(0) if m else ""
    js = base + ".report.json"
    r = run([sys.executable, COMPARE, base + "-ours.sqlite", base + "-nsys.sqlite", "--nsys", nsys,
             "--reports", "gpu", "--counts-only", "--json", js] + noise + a.compare_arg,
            timeout=900)
    with open(base + ".md", "w") as fh:
        fh.write(r.stdout)
    print(r.stdout)
    print(r.stderr)
    result = {}
    if os.path.exists(js):
        with open(js) as fh:
            result = json.load(fh)
    result["unattributed"] = unattributed
    with open(base + ".json", "w") as fh:
        json.dump(result, fh)
    if r.returncode == 2:
        return 2
    if unattributed:
        print(f"{a.name}: {unattributed}")
    return 0 if r.returncode == 0 and not unattributed else 1


if __name__ == "__main__":
    sys.exit(main())
