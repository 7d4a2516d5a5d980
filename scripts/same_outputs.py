#!/usr/bin/env python3
"""Are two builds' offline outputs the same, byte for byte? (A refactoring of tools/capture must
change no output: issue 39.)

Records once, with NEW's injection library and test programs (the fake CUPTI for GPU work), raw
recordings of: the capture test app (basic, threads, extensions, warnings), the diff test app
(numbered steps, layers, domains), the fake GPU reports app (mixed, unranged, managed memory),
the fake graph app (node and graph trace), and a flight-recorder run of the flight test app
with a trigger. Then each build turns the same inputs into every offline output, at the same
paths, one build after the other:

- `--convert` of each raw recording: JSON, SQLite, the summary (table and CSV);
- `merge` of the converted files: SQLite and JSON, the cross-rank summary;
- `diff` of runs of the diff app (table, CSV, SVG) and of the converted GPU recordings;
- the flight recorder's dump and its summary (recorded once; converted by each build).

Every file and every stdout/stderr is compared byte for byte, with one exception: the wall-clock
time a conversion anchors its trace to (TARGET_INFO_SESSION_START_TIME in SQLite, otherData's
base_utc_ns in JSON) is read from the clocks at conversion time, so it may differ by a few
microseconds between the two builds' conversions; those two values are compared to 1 ms, and
the rest of those files row by row (SQLite) or value by value (JSON). So that merge and diff see
the same inputs, they read files converted once (by NEW).

usage: scripts/same_outputs.py OLD_BUILD NEW_BUILD [--keep DIR]
Exit 0 when everything is the same; 1 with the differences listed.
"""
import argparse
import filecmp
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def tool(build):
    return os.path.join(build, "tools", "capture", "nvtxpp-capture")


def app(build, name):
    return os.path.join(build, "tests", "capture", name)


def sh(cmd, env=None, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=e, cwd=cwd, timeout=600)
    return p


def record(new, work):
    """Raw recordings made once (with NEW's injection library); {label: raw dir}."""
    fake = os.path.join(new, "tests", "capture", "libnvtxpp_fake_cupti.so")
    env = {"NVTXPP_CUPTI_PATH": fake}
    cases = {
        "basic": [app(new, "nvtxpp_capture_app"), "basic"],
        "threads": [app(new, "nvtxpp_capture_app"), "threads"],
        "extensions": [app(new, "nvtxpp_capture_app"), "extensions"],
        "warnings": [app(new, "nvtxpp_capture_app"), "warnings"],
        "steps": [app(new, "nvtxpp_diff_app"), "--iters", "30", "--layers", "3", "--phases", "4"],
        "steps2": [app(new, "nvtxpp_diff_app"), "--iters", "30", "--layers", "3", "--phases", "4",
                   "--slow", "compute=30"],
        "mixed": [app(new, "nvtxpp_capture_reports_app"), "mixed"],
        "unranged": [app(new, "nvtxpp_capture_reports_app"), "unranged"],
        "managed": [app(new, "nvtxpp_capture_reports_app"), "managed"],
        "graph": [app(new, "nvtxpp_capture_graph_app"), "issue"],
    }
    raws = {}
    for label, cmd in cases.items():
        if not os.path.exists(cmd[0]):
            print(f"note: {cmd[0]} not built; {label} left out")
            continue
        raw = os.path.join(work, "raw-" + label)
        p = sh([tool(new), "--no-summary", "--keep-raw", raw, "-o",
                os.path.join(work, "x.json"), "--", *cmd], env=env)
        if p.returncode != 0:
            sys.exit(f"recording {label} failed: {p.stderr}")
        raws[label] = raw
    return raws


def shared_inputs(new, raws, work):
    """The converted files merge and diff read, made once (by NEW) in work/in."""
    d = os.path.join(work, "in")
    os.makedirs(d, exist_ok=True)
    for label, raw in raws.items():
        for ext in ("json", "sqlite"):
            p = sh([tool(new), "--convert", raw, "--no-summary", "-o",
                    os.path.join(d, f"{label}.{ext}")])
            if p.returncode != 0:
                sys.exit(f"converting {label}.{ext} failed: {p.stderr}")
    return d


def outputs(build, raws, inputs, work, out):
    """Every offline output of `build`, written under work/o (the same paths for both builds)
    and moved to `out`."""
    o = os.path.join(work, "o")
    shutil.rmtree(o, ignore_errors=True)
    os.makedirs(o)
    capture = tool(build)
    log = []

    def step(name, cmd):
        p = sh(cmd, cwd=o)
        log.append((name, p.returncode, p.stdout, p.stderr))

    def inp(name):
        return os.path.join(inputs, name)

    for label, raw in raws.items():
        for ext in ("json", "sqlite"):
            step(f"convert {label}.{ext}", [capture, "--convert", raw, "-o", f"{label}.{ext}"])
        step(f"convert {label} csv", [capture, "--convert", raw, "--summary-only", "--csv"])
        step(f"convert {label} group", [capture, "--convert", raw, "--summary-only",
                                        "--group-digits"])
        if label == "graph":
            step("convert graph graph-trace", [capture, "--convert", raw, "--cuda-graph-trace=graph",
                                               "-o", "graph-graph.sqlite"])
    sq = [inp(f"{label}.sqlite") for label in raws if label in ("mixed", "unranged", "managed")]
    if sq:
        step("merge sqlite", [capture, "merge", "-o", "merged.sqlite", *sq])
        step("merge json", [capture, "merge", "-o", "merged.json", *sq])
        step("merge csv", [capture, "merge", "--summary-only", "--csv", *sq])
        step("merge -j 2", [capture, "merge", "-j", "2", "-o", "merged-j2.sqlite", *sq])
    if "steps" in raws and "steps2" in raws:
        for opts in ([], ["--csv"], ["--keep-numbers", "--csv"], ["--relative"], ["--absolute"],
                     ["--group-digits", "--svg", "d.svg"], ["--fail-above=10%"]):
            step(f"diff steps {' '.join(opts)}", [capture, "diff", *opts, inp("steps.json"),
                                                   inp("steps.sqlite"), "--vs",
                                                   inp("steps2.json"), inp("steps2.sqlite")])
    if "mixed" in raws:
        step("diff gpu", [capture, "diff", "--csv", inp("mixed.sqlite"), inp("mixed.json"), "--vs",
                          inp("mixed.json"), inp("mixed.sqlite")])
    with open(os.path.join(o, "log.txt"), "w") as f:
        for name, rc, so, se in log:
            f.write(f"=== {name}: exit {rc}\n--- stdout\n{so}--- stderr\n{se}")
    shutil.move(o, out)


CLOCK_TABLE = "TARGET_INFO_SESSION_START_TIME"


def sqlite_rows(path):
    with sqlite3.connect(path) as c:
        tables = [r[0] for r in c.execute(
            "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return {t: list(c.execute(f'SELECT * FROM "{t}"')) for t in tables}


def clock_close(ra, rb):
    """The session start times of two conversions, within 1 ms."""
    a, b = ra.pop(CLOCK_TABLE, []), rb.pop(CLOCK_TABLE, [])
    return len(a) == len(b) and all(abs(x[0] - y[0]) < 1_000_000 for x, y in zip(a, b))


def json_close(pa, pb):
    """Two JSON traces alike but for base_utc_ns (within 1 ms)."""
    import json
    with open(pa) as f:
        a = json.load(f)
    with open(pb) as f:
        b = json.load(f)
    ua = a.get("otherData", {}).pop("base_utc_ns", 0)
    ub = b.get("otherData", {}).pop("base_utc_ns", 0)
    return a == b and abs(int(ua) - int(ub)) < 1_000_000


def compare(a, b):
    diffs = []
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    for n in names:
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            diffs.append(f"{n}: only in {'old' if os.path.exists(pa) else 'new'}")
            continue
        if filecmp.cmp(pa, pb, shallow=False):
            continue
        if n.endswith(".sqlite"):
            ra, rb = sqlite_rows(pa), sqlite_rows(pb)
            close = clock_close(ra, rb)
            if ra != rb or not close:
                bad = [t for t in set(ra) | set(rb) if ra.get(t) != rb.get(t)]
                diffs.append(f"{n}: tables differ: {sorted(bad) or [CLOCK_TABLE]}")
            else:
                print(f"note: {n}: the same rows; the conversion's clock read differs by < 1 ms")
        elif n.endswith(".json") and json_close(pa, pb):
            print(f"note: {n}: the same events; the conversion's clock read differs by < 1 ms")
        else:
            diffs.append(f"{n}: bytes differ")
    return diffs, len(names)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--keep", default=None)
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="same-outputs-")
    os.makedirs(work, exist_ok=True)
    raws = record(os.path.abspath(a.new), work)
    inputs = shared_inputs(os.path.abspath(a.new), raws, work)
    outputs(os.path.abspath(a.old), raws, inputs, work, os.path.join(work, "old"))
    outputs(os.path.abspath(a.new), raws, inputs, work, os.path.join(work, "new"))
    diffs, n = compare(os.path.join(work, "old"), os.path.join(work, "new"))
    print(f"{len(raws)} recordings, {n} outputs compared (files, and every command's stdout, "
          f"stderr and exit status in log.txt)")
    if diffs:
        print("DIFFERENT:\n  " + "\n  ".join(diffs))
        return 1
    print("SAME: every output byte for byte (where a conversion reads the clock: every row)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
