#!/usr/bin/env python3
"""Tests of `nvtxpp-capture diff`: runs of diff_app (ranges of known lengths) compared as they
are, with a slowdown injected into one range, with ranges added and removed, grouped, pooled;
the GPU recording rebuilt from an nsys profile as our JSON, our SQLite and an nsys-export-like
file; the gate's exit codes; every bad input. Expected values come from the inputs (medians
computed here from the JSON), never from the tool.

usage: diff_tests.py CASE --capture PATH --app PATH --other-app PATH
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from merge_tests import nsys_like  # noqa: E402  (the nsys-export-like reshaping of our .sqlite)

failures = []
# Short ranges (compute 150 us, a step about 300 us) and many of them: on a loaded machine a
# range is preempted (for milliseconds) less often the shorter it is, and the medians stay put.
ITERS, SCALE = 60, "0.25"
VERDICTS = {"slower", "faster", "same", "new", "gone"}


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def run(cmd, env=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=e, timeout=timeout)


def capture(a, out, *app_args, app=None):
    if app is None:
        app_args = ("--iters", str(ITERS), "--scale", SCALE) + app_args
    p = run([a.capture, "--no-summary", "-o", out, "--", app or a.app, *app_args])
    check(p.returncode == 0, f"capture {out} exits 0: {p.stderr}")
    return out


def diff(a, *args):
    return run([a.capture, "diff", *args])


def rows_of(p):
    """The CSV rows of a `diff --csv` run, keyed by (Kind, Name)."""
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    return {(r["Kind"], r["Name"]): r for r in rows}


def json_medians(path):
    """{domain:name: median duration ns} of the push/pop ranges of one of our JSON traces."""
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    d = {}
    for e in ev:
        if e.get("ph") == "X" and not e.get("cat", "").startswith(("cuda_", "nvtx_graph")):
            ns = round(float(e["dur"]) * 1000)
            d.setdefault(f'{e["args"]["domain"]}:{e["name"]}', []).append(ns)
    return {k: statistics.median(v) for k, v in d.items()}


def json_totals(path):
    """{domain:name: total duration ns} of the push/pop ranges of one of our JSON traces."""
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    d = {}
    for e in ev:
        if e.get("ph") == "X" and not e.get("cat", "").startswith(("cuda_", "nvtx_graph")):
            k = f'{e["args"]["domain"]}:{e["name"]}'
            d[k] = d.get(k, 0) + round(float(e["dur"]) * 1000)
    return d


def check_columns(p, what):
    header = p.stdout.splitlines()[0].split(",") if p.stdout else []
    for col in ("Kind", "Name", "Base", "New", "Change %", "Verdict"):
        check(col in header, f"{what}: CSV column {col} in {header}")


# ------------------------------------------------------------------------------------------------

def case_diff_same(a, tmp):
    """Two runs of one program (one JSON, one SQLite): every item `same`; the medians are the
    traces' own."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.sqlite"))
    p = diff(a, "--csv", b, "--vs", n)
    if not check(p.returncode == 0, f"diff exits 0: {p.stderr}"):
        return
    check_columns(p, "same")
    rows = rows_of(p)
    check(all(r["Verdict"] == "same" for r in rows.values()),
          f"only `same`: {[(k, r['Verdict'], r['Change %']) for k, r in rows.items()]}")
    for name, med in json_medians(b).items():
        r = rows.get(("range", name))
        if check(r is not None, f"range {name} compared"):
            check(abs(float(r["Base"]) - med) <= 0.5, f"{name}: Base {r['Base']} == {med}")
    step = rows.get(("range", ":Train step 1"))
    if check(step is not None, "numbered steps are items of their own without grouping"):
        check("too few" in step["Note"], f"one instance a side: 'too few' note: {step}")
        check(step["p-value"] == "", "no test with one instance")
    check(rows[("range", ":compute")]["Base Instances"] == str(ITERS), "an instance a step")
    t = diff(a, b, "--vs", n)
    check(t.returncode == 0 and "compute" in t.stdout and "0 slower, 0 faster" in t.stdout,
          f"the table: {t.stdout[:2000]}")


def case_diff_slowdown(a, tmp):
    """compute made 100% slower: found, the change near +100%, the interval around it; the
    other ranges stay `same`. The other way round: `faster`."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.json"), "--slow", "compute=100")
    p = diff(a, "--csv", b, "--vs", n)
    if not check(p.returncode == 0, f"diff exits 0: {p.stderr}"):
        return
    rows = rows_of(p)
    c = rows.get(("range", ":compute"))
    if check(c is not None, "compute compared"):
        check(c["Verdict"] == "slower", f"compute slower: {c}")
        ch = float(c["Change %"])
        check(80 <= ch <= 130, f"compute's change {ch}% near +100%")
        check(float(c["CI Low %"]) <= ch <= float(c["CI High %"]), f"interval holds it: {c}")
        check(float(c["p-value"]) < 0.01, f"p-value small: {c['p-value']}")
    for name in (":load", ":store", "app:io flush"):
        r = rows.get(("range", name))
        if check(r is not None, f"{name} compared"):
            check(r["Verdict"] == "same", f"{name} same: {r}")
    first = list(csv.DictReader(io.StringIO(p.stdout)))[0]
    check(first["Name"] == ":compute", f"the regression comes first: {first['Name']}")
    back = rows_of(diff(a, "--csv", n, "--vs", b))
    check(back.get(("range", ":compute"), {}).get("Verdict") == "faster",
          "reversed: compute faster")


def case_diff_new_gone(a, tmp):
    """A range only in the new run is `new`; one only in the base is `gone`."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.json"), "--add", "checksum", "--skip", "store")
    rows = rows_of(diff(a, "--csv", b, "--vs", n))
    check(rows.get(("range", ":checksum"), {}).get("Verdict") == "new", "checksum new")
    check(rows.get(("range", ":checksum"), {}).get("Base Instances") == "0", "no base instance")
    check(rows.get(("range", ":store"), {}).get("Verdict") == "gone", "store gone")
    check(rows.get(("range", ":load"), {}).get("Verdict") == "same", "load same")


def case_diff_group(a, tmp):
    """--group and --group-digits fold the numbered steps into one item with every instance;
    a slowdown inside the steps shows on the group."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.json"), "--slow", "compute=100")
    for opts in (["--group", "Train step *"], ["--group-digits"], ["--group=Train*"]):
        rows = rows_of(diff(a, "--csv", *opts, b, "--vs", n))
        want = ":Train*" if opts == ["--group=Train*"] else ":Train step *"
        g = rows.get(("range", want))
        if check(g is not None, f"{opts}: one row {want}: {sorted(rows)}"):
            check(g["Base Instances"] == str(ITERS) and g["New Instances"] == str(ITERS),
                  f"{opts}: {ITERS} instances a side: {g}")
            check(g["Verdict"] == "slower", f"{opts}: the steps slower: {g}")
        check(not any(k[1].startswith(":Train step 1") for k in rows), f"{opts}: no numbered row")
        check(rows.get(("range", ":load"), {}).get("Verdict") == "same", f"{opts}: load same")


def case_diff_pooled(a, tmp):
    """Several files a side are pooled: instances add up, totals are per trace."""
    base = [capture(a, os.path.join(tmp, f"a{i}.json")) for i in range(2)]
    new = [capture(a, os.path.join(tmp, "b0.sqlite")), capture(a, os.path.join(tmp, "b1.json")),
           capture(a, os.path.join(tmp, "b2.json"))]
    p = diff(a, "--csv", *base, "--vs", *new)
    rows = rows_of(p)
    c = rows.get(("range", ":compute"))
    if check(c is not None, f"compute compared: {p.stderr}"):
        check(c["Base Instances"] == str(2 * ITERS) and c["New Instances"] == str(3 * ITERS),
              f"pooled counts: {c}")
        want = sum(json_totals(f)[":compute"] for f in base) / len(base)
        check(abs(float(c["Base Total"]) - want) <= 1, f"Base Total is per trace ({want}): {c}")
        check(c["Verdict"] == "same", f"pooled runs of one program: same: {c}")
    # Merged files (one trace holding both runs, .sqlite and .json) read as the two files pooled.
    sq = [capture(a, os.path.join(tmp, f"m{i}.sqlite")) for i in range(2)]
    for ext in ("sqlite", "json"):
        m = run([a.capture, "merge", "--no-summary", "-o", os.path.join(tmp, f"merged.{ext}"),
                 *sq])
        check(m.returncode == 0, f"merge to .{ext}: {m.stderr}")
    pooled = rows_of(diff(a, "--csv", *sq, "--vs", *sq))
    for ext in ("sqlite", "json"):
        merged = os.path.join(tmp, f"merged.{ext}")
        got = rows_of(diff(a, "--csv", merged, "--vs", merged))
        check(set(got) == set(pooled), f"merged .{ext}: the items of the pooled files")
        for k, r in pooled.items():
            g = got.get(k, {})
            check(g.get("Base") == r["Base"] and g.get("Base Instances") == r["Base Instances"],
                  f"merged .{ext} {k}: {g} matches the pooled files' {r}")


def case_diff_gate(a, tmp):
    """--fail-above: exit 1 when an item is slower by more than PCT (the table still printed),
    0 otherwise; --gate narrows the items it looks at."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.json"), "--slow", "compute=100")
    p = diff(a, "--fail-above=50%", b, "--vs", n)
    check(p.returncode == 1, f"slower by ~100% > 50%: exit 1, got {p.returncode}: {p.stderr}")
    check("compute" in p.stdout and "slower" in p.stdout, "the table still prints")
    check("gate failed" in p.stderr and "compute" in p.stderr, f"stderr names it: {p.stderr}")
    # (Gated to compute alone: on a loaded machine another range may move too.)
    p = diff(a, "--fail-above", "300%", "--gate", "compute", b, "--vs", n)
    check(p.returncode == 0, f"not by more than 300%: exit 0, got {p.returncode}: {p.stderr}")
    p = diff(a, "--fail-above=10%", "--gate", "no such range", "--gate", "x*", b, "--vs", n)
    check(p.returncode == 0, f"--gate matching nothing: compute not looked at: {p.returncode}")
    p = diff(a, "--fail-above=10%", "--gate", "comp*", b, "--vs", n)
    check(p.returncode == 1, f"--gate comp*: exit 1, got {p.returncode}")
    p = diff(a, "--fail-above=10%", "--csv", b, "--vs", b)
    check(p.returncode == 0, f"a trace against itself passes: {p.returncode}")
    p = diff(a, "--fail-above=10%", n, "--vs", b)
    check(p.returncode == 0, f"faster never fails the gate: {p.returncode}")


def convert_reference(a, tmp, name):
    raw = os.path.join(tmp, "raw-" + name)
    os.mkdir(raw)
    shutil.copy(os.path.join(HERE, "data", "reduce_v2.bin"), os.path.join(raw, "nvtxpp-867.bin"))
    out = os.path.join(tmp, name)
    p = run([a.capture, "--convert", raw, "-o", out, "--no-summary"])
    check(p.returncode == 0, f"--convert {name}: {p.stderr}")
    return out


def case_diff_nsys(a, tmp):
    """A GPU recording rebuilt from an nsys profile, as our JSON, our SQLite and an nsys export:
    read alike (every median equal), every item `same`; ranges, projections, kernels and memory
    operations all compared."""
    js = convert_reference(a, tmp, "r.json")
    sq = convert_reference(a, tmp, "r.sqlite")
    ns = os.path.join(tmp, "nsys.sqlite")
    nsys_like(sq, ns)
    for base, new in ((js, ns), (sq, ns), (js, sq)):
        p = diff(a, "--csv", base, "--vs", new)
        if not check(p.returncode == 0, f"{base} vs {new}: exit 0: {p.stderr}"):
            continue
        rows = rows_of(p)
        kinds = {k for k, _ in rows}
        check(kinds == {"range", "projection", "kernel", "memory"}, f"every kind: {kinds}")
        for k, r in rows.items():
            check(r["Verdict"] == "same" and r["Base"] == r["New"] and
                  r["Base Instances"] == r["New Instances"],
                  f"{os.path.basename(base)} vs {os.path.basename(new)} {k}: read alike: {r}")
    # Its kernels made 1000 times as long (an export edited), each side the file 5 times (pooled,
    # as 5 runs): every kernel `slower` by 99,900%, the projections that hold kernels slower, the
    # CPU ranges and the copies `same`. (Each kernel runs twice a run, the two launches up to
    # 500 times apart: a mere doubling leaves the two sides' instances overlapping, and the U
    # test rightly finds that not significant with 10 instances a side.)
    slow = os.path.join(tmp, "nsys-slow.sqlite")
    shutil.copy(ns, slow)
    with sqlite3.connect(slow) as c:
        c.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 1000 * (end - start)")
    p = diff(a, "--csv", *[ns] * 5, "--vs", *[slow] * 5)
    check(p.returncode == 0, f"slowed kernels: exit 0: {p.stderr}")
    rows = rows_of(p)
    kernels = [r for (k, _), r in rows.items() if k == "kernel"]
    check(len(kernels) >= 2, f"kernels compared: {len(kernels)}")
    for r in kernels:
        check(r["Verdict"] == "slower" and abs(float(r["Change %"]) - 99900) < 1,
              f"kernel {r['Name']}: slower by 99,900%: {r}")
    check(any(r["Verdict"] == "slower" for (k, _), r in rows.items() if k == "projection"),
          "a projection holding kernels is slower")
    for (k, name), r in rows.items():
        if k in ("range", "memory"):
            check(r["Verdict"] == "same", f"{k} {name}: same: {r}")


def bad(a, tmp, what, *args, svg=True):
    out = os.path.join(tmp, "never.svg")
    p = diff(a, *(["--svg", out] if svg else []), *args)
    check(p.returncode == 2, f"{what}: exit 2, got {p.returncode}: {p.stderr}")
    lines = p.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith("nvtxpp-capture diff: "),
          f"{what}: one line of reason: {p.stderr!r}")
    check(not os.path.exists(out), f"{what}: nothing written")
    check(p.stdout == "", f"{what}: no table: {p.stdout[:200]}")
    check(not [f for f in os.listdir(tmp) if ".partial-" in f], f"{what}: no partial file")
    return p


def case_diff_bad(a, tmp):
    good = capture(a, os.path.join(tmp, "good.json"))
    good_sq = capture(a, os.path.join(tmp, "good.sqlite"))
    data = open(good, "rb").read()
    trunc = os.path.join(tmp, "trunc.json")
    open(trunc, "wb").write(data[: len(data) // 2])
    sqd = open(good_sq, "rb").read()
    trunc_sq = os.path.join(tmp, "trunc.sqlite")
    open(trunc_sq, "wb").write(sqd[: len(sqd) // 2])
    foreign_json = os.path.join(tmp, "chrome.json")
    json.dump({"traceEvents": [{"name": "x", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]},
              open(foreign_json, "w"))
    text = os.path.join(tmp, "notes.txt")
    open(text, "w").write("hello\n")
    empty = os.path.join(tmp, "empty.json")
    open(empty, "w").close()
    other_sq = os.path.join(tmp, "other.sqlite")
    with sqlite3.connect(other_sq) as c:
        c.execute("CREATE TABLE t (x INTEGER)")
    bad(a, tmp, "missing file", good, "--vs", os.path.join(tmp, "nope.json"))
    bad(a, tmp, "a directory", tmp, "--vs", good)
    bad(a, tmp, "truncated JSON", good, "--vs", trunc)
    bad(a, tmp, "truncated SQLite", trunc_sq, "--vs", good)
    bad(a, tmp, "foreign JSON", good, "--vs", foreign_json)
    bad(a, tmp, "foreign file", good, "--vs", text)
    bad(a, tmp, "empty file", good, "--vs", empty)
    bad(a, tmp, "foreign SQLite", good, "--vs", other_sq)
    bad(a, tmp, "no --vs", good, good)
    bad(a, tmp, "empty base side", "--vs", good)
    bad(a, tmp, "empty new side", good, "--vs")
    bad(a, tmp, "malformed group pattern", "--group", "[a", good, "--vs", good)
    bad(a, tmp, "malformed gate pattern", "--fail-above=5%", "--gate", "x\\", good, "--vs", good)
    bad(a, tmp, "bad threshold", "--threshold=abc%", good, "--vs", good)
    bad(a, tmp, "negative threshold", "--threshold=-1%", good, "--vs", good)
    bad(a, tmp, "bad fail-above", "--fail-above=ten", good, "--vs", good)
    bad(a, tmp, "bad alpha", "--alpha=2", good, "--vs", good)
    bad(a, tmp, "bad floor", "--floor=3parsecs", good, "--vs", good)
    bad(a, tmp, "bad min-instances", "--min-instances=1", good, "--vs", good)
    bad(a, tmp, "unknown option", "--frobnicate", good, "--vs", good)
    bad(a, tmp, "gate without fail-above", "--gate", "x", good, "--vs", good)
    p = diff(a, "--svg", os.path.join(tmp, "no-such-dir", "x.svg"), good, "--vs", good)
    check(p.returncode == 3, f"unwritable --svg: exit 3, got {p.returncode}: {p.stderr}")
    p = diff(a, "--help")
    check(p.returncode == 0 and "--fail-above" in p.stdout, "--help")


def case_diff_relative(a, tmp):
    """Every range 30% longer (as on a busier machine) and compute 100% more on top: flagged
    all, with a note on the run-wide shift; with --relative only compute (and the steps that
    hold it) are slower, by about 100% against the shift."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.json"), "--scale", str(float(SCALE) * 1.3), "--slow",
                "compute=100")
    p = diff(a, "--group-digits", b, "--vs", n)
    m = re.search(r"moved together by \+([0-9.]+)%", p.stdout)
    check(m is not None and 25 <= float(m.group(1)) <= 35 and "--relative" in p.stdout,
          f"the table notes a shift of about +30%: {p.stdout[-600:]}")
    plain = rows_of(diff(a, "--csv", "--group-digits", b, "--vs", n))
    check(plain.get(("range", ":load"), {}).get("Verdict") == "slower", "plain: load slower")
    p = diff(a, "--csv", "--relative", "--group-digits", b, "--vs", n)
    m = re.search(r"relative to the run-wide shift, \+([0-9.]+)%", p.stderr)
    check(m is not None and 25 <= float(m.group(1)) <= 35, f"CSV: the shift on stderr: {p.stderr}")
    rel = rows_of(p)
    c = rel.get(("range", ":compute"), {})
    check(c.get("Verdict") == "slower" and 80 <= float(c.get("Change %", 0)) <= 130,
          f"relative: compute slower by about 100%: {c}")
    for name in (":load", ":store", "app:io flush"):
        check(rel.get(("range", name), {}).get("Verdict") == "same", f"relative: {name} same")


def case_diff_nothing_common(a, tmp):
    """Two traces with nothing in common: said so, exit 0 (even with a gate)."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.json"), "basic", app=a.other_app)
    p = diff(a, "--fail-above=5%", b, "--vs", n)
    check(p.returncode == 0, f"exit 0: {p.returncode} {p.stderr}")
    check("no item in common" in p.stdout, f"said so: {p.stdout[-500:]}")
    rows = rows_of(diff(a, "--csv", b, "--vs", n))
    check({r["Verdict"] for r in rows.values()} == {"new", "gone"}, "only new and gone")


def case_diff_svg(a, tmp):
    """--svg: a well-formed SVG with the regression, its change and its verdict."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.json"), "--slow", "compute=100")
    out = os.path.join(tmp, "d.svg")
    p = diff(a, "--svg", out, "--group-digits", b, "--vs", n)
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    if not check(os.path.exists(out), "the SVG is written"):
        return
    root = ET.parse(out).getroot()
    check(root.tag.endswith("svg"), f"an svg root: {root.tag}")
    text = " ".join("".join(t.itertext()) for t in root.iter() if t.tag.endswith("text"))
    check("compute" in text and "slower" in text, f"names the regression: {text[:500]}")
    check(len([r for r in root.iter() if r.tag.endswith("rect")]) >= 3, "bars drawn")


def case_diff_summary_group(a, tmp):
    """The capture's summary and merge's cross-rank summary take --group / --group-digits."""
    out = os.path.join(tmp, "s.sqlite")
    p = run([a.capture, "--csv", "--group", "Train step *", "-o", out, "--", a.app, "--iters",
             str(ITERS), "--scale", SCALE])
    check(p.returncode == 0, f"capture --group: {p.stderr}")
    rows = list(csv.DictReader(io.StringIO(p.stdout.split("\n\n")[0])))
    names = {r["Range"]: r for r in rows}
    g = names.get(":Train step *")
    check(g is not None and g["Instances"] == str(ITERS),
          f"summary: one row of {ITERS} steps: {sorted(names)}")
    check(":Train step 7" not in names, "no numbered row in the summary")
    p = run([a.capture, "--csv", "--group-digits", "--summary-only", "--", a.app])
    rows = list(csv.DictReader(io.StringIO(p.stdout.split("\n\n")[0])))
    check(any(r["Range"] == ":Train step *" for r in rows), f"--group-digits: {p.stdout[:500]}")
    p = run([a.capture, "--group", "[x", "--", a.app])
    check(p.returncode == 2 and "[x" in p.stderr, f"malformed --group: exit 2: {p.stderr}")
    p = run([a.capture, "merge", "--summary-only", "--csv", "--group-digits", out])
    check(p.returncode == 0, f"merge --group-digits: {p.stderr}")
    check(":Train step *" in p.stdout and ":Train step 3," not in p.stdout,
          f"merge's summary grouped: {p.stdout[:800]}")
    p = run([a.capture, "merge", "--summary-only", "--group", "[x", out])
    check(p.returncode == 2, f"merge: malformed --group: exit 2: {p.stderr}")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--other-app", required=True)
    a = ap.parse_args()
    a.capture, a.app = os.path.abspath(a.capture), os.path.abspath(a.app)
    a.other_app = os.path.abspath(a.other_app)
    tmp = tempfile.mkdtemp(prefix="nvtxpp-diff-")
    try:
        CASES[a.case](a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
