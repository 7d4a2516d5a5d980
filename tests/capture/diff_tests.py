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
import math
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
RUNS = 3  # runs a side: the run is the unit of noise
VERDICTS = {"slower", "faster", "more", "fewer", "same", "untested", "new", "gone"}


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


def sqlite_totals(path):
    """{name: total duration ns} of the push/pop ranges of one of our SQLite traces."""
    with sqlite3.connect(path) as c:
        q = c.execute("SELECT coalesce(n.text, s.value), sum(n.end - n.start) FROM NVTX_EVENTS n "
                      "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType = 59 "
                      "GROUP BY 1").fetchall()
    return dict(q)


def check_columns(p, what):
    header = p.stdout.splitlines()[0].split(",") if p.stdout else []
    for col in ("Kind", "Name", "Base", "New", "Change %", "Verdict"):
        check(col in header, f"{what}: CSV column {col} in {header}")


# ------------------------------------------------------------------------------------------------

def captures(a, tmp, prefix, n, *app_args, ext="json"):
    """n runs of diff_app (one trace each)."""
    return [capture(a, os.path.join(tmp, f"{prefix}{i}.{ext}"), *app_args) for i in range(n)]


def two_sides(a, tmp, n, base_args=(), new_args=(), base_ext="json", new_ext="json"):
    """n runs a side, base and new alternated (A B A B ...): a machine whose load changes while
    the test runs then moves both sides alike, as the runs of a real comparison should be made."""
    b, m = [], []
    for i in range(n):
        b.append(capture(a, os.path.join(tmp, f"a{i}.{base_ext}"), *base_args))
        m.append(capture(a, os.path.join(tmp, f"b{i}.{new_ext}"), *new_args))
    return b, m


def rows_only(p):
    """The item rows of a `diff --csv` run (the run-wide shift rows left out)."""
    return {k: r for k, r in rows_of(p).items() if k[0] != "all"}


CHANGED = ("slower", "faster", "more", "fewer")


def json_run_medians(path):
    """{domain:name: median duration ns} of one run's push/pop ranges."""
    return json_medians(path)


def geometric_mean(values):
    return math.exp(sum(math.log(max(v, 1)) for v in values) / len(values))


def run_totals(path, name):
    """The total duration (ns) of range `name` (domain:name) in one run, JSON or SQLite."""
    if path.endswith(".sqlite"):
        return sqlite_totals(path).get(name.split(":", 1)[1])
    return json_totals(path).get(name)


def time_move(base, new, name):
    """How the runs' own time per run of `name` moved from base to new (the geometric means of
    their totals), or None when a run lacks it."""
    t = [[run_totals(f, name) for f in files] for files in (base, new)]
    if any(v is None for side in t for v in side):
        return None
    return geometric_mean(t[1]) / geometric_mean(t[0]) - 1


def as_inputs_moved(r, moved):
    """Whether a verdict on an unchanged item is what its inputs measured: their own time per run
    moved by 9% or more (a loaded machine preempts instances of some runs for milliseconds: the
    tool reports what was measured), a time per run verdict the way they moved, its median
    instance alike."""
    return (moved is not None and abs(moved) >= 0.09 and
            r.get("Note", "").startswith("time per run") and
            r.get("Verdict") == ("slower" if moved > 0 else "faster") and
            abs(float(r.get("Change %") or 100)) < 10)


def check_unchanged(r, name, base, new, what):
    """An item the test did not change: `same`, or a verdict its inputs measured
    (as_inputs_moved)."""
    moved = time_move(base, new, name)
    if r.get("Verdict") == "same":
        return True
    if as_inputs_moved(r, moved):
        print(f"note: {what}: {name}: the runs' own time per run moved {moved:+.1%}",
              file=sys.stderr)
        return True
    return check(False, f"{what}: {name} same (its runs' time per run moved "
                        f"{'?' if moved is None else f'{moved:+.1%}'}): {r}")


def case_diff_same(a, tmp):
    """Three runs a side of one program (JSON against SQLite): no item changed; Base is the
    geometric mean of the runs' medians; the numbered steps are one row by default, each a
    row of its own with --keep-numbers (their median instance untested: 3 a side)."""
    b, n = two_sides(a, tmp, RUNS, new_ext="sqlite")
    p = diff(a, "--csv", *b, "--vs", *n)
    if not check(p.returncode == 0, f"diff exits 0: {p.stderr}"):
        return
    check_columns(p, "same")
    rows = rows_only(p)
    # No change, unless the inputs themselves hold one: a loaded machine can stretch every
    # instance of some runs, and the time per run moves by the threshold or more (the tool
    # reports what was measured). Only that, then: a time per run verdict, the way the inputs
    # moved, its median instance alike.
    unexplained = []
    for k, r in rows.items():
        if r["Verdict"] not in CHANGED:
            continue
        moved = time_move(b, n, k[1])
        if as_inputs_moved(r, moved):
            print(f"note: {k[1]}: the runs' own time per run moved {moved:+.1%}", file=sys.stderr)
        else:
            unexplained.append((k, r["Verdict"], r["Change %"], r["Note"]))
    check(not unexplained, f"no change: {unexplained}")
    meds = [json_run_medians(f) for f in b]
    for name in meds[0]:
        if name.startswith(":Train step"):
            continue
        r = rows.get(("range", name))
        if check(r is not None, f"range {name} compared"):
            want = geometric_mean([m[name] for m in meds])
            check(abs(float(r["Base"]) - want) <= 0.5 + 1e-6 * want,
                  f"{name}: Base {r['Base']} is the geometric mean of the runs' medians {want}")
    steps = rows.get(("range", ":Train step *"))
    if check(steps is not None, f"the steps folded by default: {sorted(rows)[:8]}"):
        check(steps["Members"] == str(ITERS) and steps["Base Instances"] == str(RUNS * ITERS),
              f"one row of {ITERS} names: {steps}")
    check(not any(k[1].startswith(":Train step 1") for k in rows), "no numbered row")
    check("folded" in p.stderr and "Train step *" in p.stderr, f"said so: {p.stderr}")
    check(rows[("range", ":compute")]["Base Instances"] == str(RUNS * ITERS), "all runs' instances")
    kept = rows_only(diff(a, "--csv", "--keep-numbers", *b, "--vs", *n))
    step = kept.get(("range", ":Train step 1"))
    if check(step is not None, "--keep-numbers: every step a row"):
        check(step["p-value"] == "" and "untested" in step["Note"],
              f"one instance a run: the median instance untested: {step}")
        check(step["Verdict"] in ("same", "untested"), f"not a change: {step}")
    t = diff(a, *b, "--vs", *n)
    counts = "" if unexplained else \
        f"{sum(r['Verdict'] == 'slower' for r in rows.values())} slower, " \
        f"{sum(r['Verdict'] == 'faster' for r in rows.values())} faster, 0 more, 0 fewer"
    check(t.returncode == 0 and "compute" in t.stdout and counts in t.stdout,
          f"the table ({counts}): {t.stdout[:2000]}")
    check("3 runs against 3" in t.stdout and "false discovery rate" in t.stdout,
          f"the table says how it tested: {t.stdout[-1500:]}")


def case_diff_one_run(a, tmp):
    """One run a side: no verdict of change, however large the change (run-to-run noise is
    unknown); the change is still shown; a gate passes; the output says what it would take."""
    b = capture(a, os.path.join(tmp, "a.json"))
    n = capture(a, os.path.join(tmp, "b.json"), "--slow", "compute=100", "--calls", "store=2")
    p = diff(a, "--csv", "--fail-above=10%", b, "--vs", n)
    check(p.returncode == 0, f"the gate passes with one run a side: {p.returncode} {p.stderr}")
    rows = rows_of(p)
    check(all(r["Verdict"] == "untested" for r in rows.values()),
          f"every item untested: {[(k, r['Verdict']) for k, r in rows.items()]}")
    c = rows.get(("range", ":compute"), {})
    check(80 <= float(c.get("Change %", 0)) <= 130 and c.get("CI Low %") == "",
          f"compute's change shown, no interval: {c}")
    check("one run on a side" in c.get("Note", ""), f"the note says why: {c}")
    t = diff(a, b, "--vs", n)
    check("2 or more runs a side" in t.stdout and "0 slower" in t.stdout,
          f"the table says what it takes: {t.stdout[-800:]}")


def case_diff_slowdown(a, tmp):
    """compute made 100% slower, three runs a side: found, its change near +100% inside its
    interval; the other ranges `same`. The other way round: `faster`."""
    b, n = two_sides(a, tmp, RUNS, new_args=("--slow", "compute=100"))
    p = diff(a, "--csv", *b, "--vs", *n)
    if not check(p.returncode == 0, f"diff exits 0: {p.stderr}"):
        return
    rows = rows_only(p)
    c = rows.get(("range", ":compute"))
    if check(c is not None, "compute compared"):
        check(c["Verdict"] == "slower", f"compute slower: {c}")
        ch = float(c["Change %"])
        check(80 <= ch <= 130, f"compute's change {ch}% near +100%")
        check(float(c["CI Low %"]) <= ch <= float(c["CI High %"]), f"interval holds it: {c}")
        check(float(c["q-value"]) < 0.01, f"q-value small: {c['q-value']}")
    for name in (":load", ":store", "app:io flush"):
        r = rows.get(("range", name))
        if check(r is not None, f"{name} compared"):
            check_unchanged(r, name, b, n, "slowdown")
    first = [r["Name"] for r in csv.DictReader(io.StringIO(p.stdout)) if r["Kind"] != "all"][:2]
    check(set(first) == {":compute", ":Train step *"},
          f"the regression and the steps that hold it come first: {first}")
    back = rows_of(diff(a, "--csv", *n, "--vs", *b))
    check(back.get(("range", ":compute"), {}).get("Verdict") == "faster",
          "reversed: compute faster")


def case_diff_calls(a, tmp):
    """compute run twice a step, each instance as long as before: `more`, its calls per run
    60 -> 120 and its time per run about doubled; a gate on time per run fails on it."""
    b, n = two_sides(a, tmp, RUNS, new_args=("--calls", "compute=2"))
    p = diff(a, "--csv", "--fail-above=50%", *b, "--vs", *n)
    check(p.returncode == 1, f"time per run doubled fails a 50% gate: {p.returncode} {p.stderr}")
    check("compute" in p.stderr and "gate failed" in p.stderr, f"named: {p.stderr}")
    rows = rows_only(p)
    c = rows.get(("range", ":compute"), {})
    check(c.get("Verdict") == "more", f"compute: more: {c}")
    check(c.get("Base Calls/Run") == str(ITERS) and c.get("New Calls/Run") == str(2 * ITERS),
          f"calls per run {ITERS} -> {2 * ITERS}: {c}")
    # Time per run as the traces give it (--absolute: nothing taken out): the geometric means
    # of the runs' totals. (Its size moves with preemption on a loaded machine; not its value.)
    ab = rows_only(diff(a, "--csv", "--absolute", *b, "--vs", *n)).get(("range", ":compute"), {})
    tb = [math.log(json_totals(f)[":compute"]) for f in b]
    tn = [math.log(json_totals(f)[":compute"]) for f in n]
    want = 100 * math.expm1(sum(tn) / len(tn) - sum(tb) / len(tb))
    check(abs(float(ab.get("Time/Run Change %", 1e9)) - want) < 0.01 + 1e-4 * abs(want),
          f"time per run {want:.3f}% from the traces: {ab}")
    check(abs(float(c.get("Change %", 100))) < 10, f"the median instance held: {c}")
    for name in (":load", ":store"):
        check_unchanged(rows.get(("range", name), {}), name, b, n, "calls")
    back = rows_of(diff(a, "--csv", "--fail-above=50%", *n, "--vs", *b))
    check(back.get(("range", ":compute"), {}).get("Verdict") == "fewer", "reversed: fewer")


def case_diff_new_gone(a, tmp):
    """A range only in the new runs is `new`; one only in the base is `gone`."""
    b, n = two_sides(a, tmp, 2, new_args=("--add", "checksum", "--skip", "store"))
    rows = rows_of(diff(a, "--csv", *b, "--vs", *n))
    check(rows.get(("range", ":checksum"), {}).get("Verdict") == "new", "checksum new")
    check(rows.get(("range", ":checksum"), {}).get("Base Instances") == "0", "no base instance")
    check(rows.get(("range", ":store"), {}).get("Verdict") == "gone", "store gone")
    check(rows.get(("range", ":load"), {}).get("Verdict") != "new", "load compared")


def case_diff_group(a, tmp):
    """--group and --group-digits fold the numbered steps into one item with every instance;
    a slowdown inside the steps shows on the group. Numbered names with many instances each
    (`Layer 0` ... `Layer 3`) stay rows of their own unless asked."""
    b, n = two_sides(a, tmp, RUNS, base_args=("--layers", "4"),
                     new_args=("--layers", "4", "--slow", "compute=100"))
    for opts in ([], ["--group", "Train step *"], ["--group-digits"], ["--group=Train*"]):
        rows = rows_only(diff(a, "--csv", *opts, *b, "--vs", *n))
        want = ":Train*" if opts == ["--group=Train*"] else ":Train step *"
        g = rows.get(("range", want))
        if check(g is not None, f"{opts}: one row {want}: {sorted(rows)}"):
            check(g["Base Instances"] == str(RUNS * ITERS) and
                  g["New Instances"] == str(RUNS * ITERS), f"{opts}: every instance: {g}")
            check(g["Verdict"] == "slower", f"{opts}: the steps slower: {g}")
        check(not any(k[1].startswith(":Train step 1") for k in rows), f"{opts}: no numbered row")
        check_unchanged(rows.get(("range", ":load"), {}), ":load", b, n, f"{opts}")
        layers = [k for k in rows if k[1].startswith(":Layer")]
        if opts == ["--group-digits"]:
            check(layers == [("range", ":Layer *")], f"--group-digits folds the layers: {layers}")
        elif opts != ["--group=Train*"]:
            check(len(layers) == 4, f"{opts}: the layers stay apart: {layers}")


def case_diff_pooled(a, tmp):
    """Several files a side are its runs: instances add up, totals and calls are per run. A
    merged file is one trace (one run): as JSON and as SQLite, the same rows."""
    # The sides alternated (a0 b0 a1 b1 b2), as two_sides does: a load that comes and goes while
    # the test runs then reaches both sides.
    base, new = [], []
    for name in ("a0.json", "b0.sqlite", "a1.json", "b1.json", "b2.json"):
        (base if name[0] == "a" else new).append(capture(a, os.path.join(tmp, name)))
    p = diff(a, "--csv", *base, "--vs", *new)
    rows = rows_of(p)
    c = rows.get(("range", ":compute"))
    if check(c is not None, f"compute compared: {p.stderr}"):
        check(c["Base Instances"] == str(2 * ITERS) and c["New Instances"] == str(3 * ITERS),
              f"instances of all runs: {c}")
        check(c["Base Calls/Run"] == str(ITERS) and c["New Calls/Run"] == str(ITERS),
              f"calls per run: {c}")
        want = sum(json_totals(f)[":compute"] for f in base) / len(base)
        check(abs(float(c["Base Total"]) - want) <= 1, f"Base Total is per run ({want}): {c}")
        # Runs of one program: `same`, unless the inputs themselves hold a time per run that
        # moved by the threshold (10%) or more (a loaded machine stretches every instance of some
        # runs: the tool reports what was measured). Then only that, as measured: its medians
        # alike, the time per run the verdict's reason.
        totals = {"a": [json_totals(f)[":compute"] for f in base],
                  "b": [sqlite_totals(new[0])["compute"]] +
                       [json_totals(f)[":compute"] for f in new[1:]]}
        moved = geometric_mean(totals["b"]) / geometric_mean(totals["a"]) - 1
        if abs(moved) < 0.09:
            check(c["Verdict"] == "same", f"runs of one program: same: {c} (totals {totals})")
        else:
            print(f"note: the runs' own totals moved {moved:+.1%}: {totals}", file=sys.stderr)
            check(c["Verdict"] == "same" or
                  (c["Verdict"] == ("slower" if moved > 0 else "faster") and
                   c["Note"].startswith("time per run")),
                  f"runs of one program: the time per run as measured ({totals}): {c}")
            check(abs(float(c["Change %"])) < 10, f"the median instance alike: {c}")
    sq = [capture(a, os.path.join(tmp, f"m{i}.sqlite")) for i in range(2)]
    for ext in ("sqlite", "json"):
        m = run([a.capture, "merge", "--no-summary", "-o", os.path.join(tmp, f"merged.{ext}"),
                 *sq])
        check(m.returncode == 0, f"merge to .{ext}: {m.stderr}")
    got = {ext: rows_of(diff(a, "--csv", os.path.join(tmp, f"merged.{ext}"), "--vs",
                             os.path.join(tmp, f"merged.{ext}"))) for ext in ("sqlite", "json")}
    pooled = rows_of(diff(a, "--csv", *sq, "--vs", *sq))
    check(set(got["sqlite"]) == set(got["json"]) == set(pooled), "the same items")
    for k, r in got["sqlite"].items():
        g = got["json"].get(k, {})
        check(g.get("Base") == r["Base"] and g.get("Base Instances") == r["Base Instances"],
              f"merged .json {k}: {g} matches merged .sqlite's {r}")
        check(r["Base Instances"] == pooled[k]["Base Instances"],
              f"{k}: the merged file holds both runs' instances")


def case_diff_gate(a, tmp):
    """--fail-above: exit 1 when an item grew by more than PCT (the table still printed), 0
    otherwise; --gate narrows the items it looks at."""
    b, n = two_sides(a, tmp, RUNS, new_args=("--slow", "compute=100"))
    p = diff(a, "--fail-above=50%", *b, "--vs", *n)
    check(p.returncode == 1, f"slower by ~100% > 50%: exit 1, got {p.returncode}: {p.stderr}")
    check("compute" in p.stdout and "slower" in p.stdout, "the table still prints")
    check("gate failed" in p.stderr and "compute" in p.stderr, f"stderr names it: {p.stderr}")
    p = diff(a, "--fail-above", "300%", "--gate", "compute", *b, "--vs", *n)
    # (The gate looks at the time per run too: where a loaded machine stretched the new runs'
    # compute by more than 300% in all, as the inputs measure it, the gate fails, rightly.)
    moved = time_move(b, n, ":compute")
    if moved < 2.8:
        check(p.returncode == 0, f"not by more than 300%: exit 0, got {p.returncode}: {p.stderr}")
    else:
        print(f"note: compute's own time per run moved {moved:+.1%}", file=sys.stderr)
        check(p.returncode == 0 or ":compute" in p.stderr,
              f"compute's time per run +{moved:.1%} as measured: {p.returncode} {p.stderr}")
    p = diff(a, "--fail-above=10%", "--gate", "no such range", "--gate", "x*", *b, "--vs", *n)
    check(p.returncode == 0, f"--gate matching nothing: compute not looked at: {p.returncode}")
    p = diff(a, "--fail-above=10%", "--gate", "comp*", *b, "--vs", *n)
    check(p.returncode == 1, f"--gate comp*: exit 1, got {p.returncode}")
    p = diff(a, "--fail-above=10%", "--csv", *b, "--vs", *b)
    check(p.returncode == 0, f"runs against themselves pass: {p.returncode}")
    p = diff(a, "--fail-above=10%", *n, "--vs", *b)
    # (Unless an item that is not faster grew, as its inputs measure it: the preempted
    # instances of a loaded machine.)
    grown = [m.group(1) for m in re.finditer(r"range (\S[^,(]*?) \(\+", p.stderr)]
    explained = [g for g in grown if g != ":compute" and (time_move(n, b, g) or 0) > 0.09]
    check(p.returncode == 0 or (grown and explained == grown),
          f"faster never fails the gate: {p.returncode} {p.stderr}")
    if p.returncode != 0 and grown and explained == grown:
        print(f"note: {grown}: their runs' own time per run grew", file=sys.stderr)


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
        rows = rows_only(p)
        kinds = {k for k, _ in rows}
        check(kinds == {"range", "projection", "kernel", "memory"}, f"every kind: {kinds}")
        for k, r in rows.items():
            check(r["Verdict"] == "untested" and r["Base"] == r["New"] and
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
    # (--absolute: most of the GPU items changed, so their run-wide shift is itself the change;
    # the default's row for it is checked below.)
    p = diff(a, "--csv", "--absolute", *[ns] * 5, "--vs", *[slow] * 5)
    check(p.returncode == 0, f"slowed kernels: exit 0: {p.stderr}")
    rows = rows_only(p)
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
    gpu = rows_of(diff(a, "--csv", *[ns] * 5, "--vs", *[slow] * 5)).get(("all", "GPU items"), {})
    check(gpu.get("Verdict") == "slower", f"by default, the GPU items' shift is slower: {gpu}")


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
    bad(a, tmp, "relative and absolute", "--relative", "--absolute", good, "--vs", good)
    # A file cut inside a literal (`tr` of `true`) is truncated, and says so.
    cut_word = os.path.join(tmp, "cut_word.json")
    with open(cut_word, "w") as f:
        f.write('{"traceEvents":[{"ph":"X","args":{"x":tr')
    p = bad(a, tmp, "cut inside a literal", good, "--vs", cut_word)
    check("truncated" in p.stderr, f"a file cut inside a literal is truncated: {p.stderr}")
    p = diff(a, "--svg", os.path.join(tmp, "no-such-dir", "x.svg"), good, "--vs", good)
    check(p.returncode == 3, f"unwritable --svg: exit 3, got {p.returncode}: {p.stderr}")
    p = diff(a, "--help")
    check(p.returncode == 0 and "--fail-above" in p.stdout, "--help")


def case_diff_relative(a, tmp):
    """Every range 30% longer in the new runs (as on a busier machine) and compute 100% more
    on top. By default every item is judged as measured: load, store and io flush `slower` by
    about 30%, compute by about 160%; the host ranges' run-wide shift is a row of its own
    (slower, about +30%), taken out of nothing; a gate on load fails (it grew 30%). --relative
    takes the shift as the machine's (it moved every item alike but compute): its row gets no
    verdict, compute is slower by about 100% beyond it (its own column, Change still as
    measured), the others `same`, and the gate on load passes. --absolute is the default."""
    # (--phases: enough host ranges for a run-wide factor)
    b, n = two_sides(a, tmp, RUNS, base_args=("--phases", "6"),
                     new_args=("--phases", "6", "--scale", str(float(SCALE) * 1.3), "--slow",
                               "compute=100"))
    p = diff(a, "--csv", "--group-digits", *b, "--vs", *n)
    rows = rows_of(p)
    host = rows.get(("all", "host ranges"), {})
    check(host.get("Verdict") == "slower" and 25 <= float(host.get("Change %", 0)) <= 35,
          f"the host ranges' shift, about +30%: {host}")
    c = rows.get(("range", ":compute"), {})
    check(c.get("Verdict") == "slower" and 140 <= float(c.get("Change %", 0)) <= 180 and
          float(c.get("Shift %", 1)) == 0 and c.get("Beyond Shift %") == "",
          f"compute slower by about 160% as measured, nothing taken out: {c}")
    for name in (":load", ":store", "app:io flush"):
        r = rows.get(("range", name), {})
        check(r.get("Verdict") == "slower" and 25 <= float(r.get("Change %", 0)) <= 35,
              f"default: {name} slower by about 30%, as measured: {r}")
    check("as measured" in p.stderr, f"stderr says so: {p.stderr}")
    g = diff(a, "--fail-above=20%", "--gate", "load", *b, "--vs", *n)
    check(g.returncode == 1, f"load grew 30% as measured: the gate fails: {g.stderr}")
    ab = rows_of(diff(a, "--csv", "--absolute", "--group-digits", *b, "--vs", *n))
    check({k: r["Verdict"] for k, r in ab.items()} == {k: r["Verdict"] for k, r in rows.items()},
          "--absolute is the default")
    rel = diff(a, "--csv", "--relative", "--group-digits", *b, "--vs", *n)
    rr = rows_of(rel)
    check(rr.get(("all", "host ranges"), {}).get("Verdict") == "untested",
          f"--relative: the shift is the machine's: {rr.get(('all', 'host ranges'))}")
    c = rr.get(("range", ":compute"), {})
    check(c.get("Verdict") == "slower" and 140 <= float(c.get("Change %", 0)) <= 180 and
          70 <= float(c.get("Beyond Shift %") or 0) <= 130 and
          25 <= float(c.get("Shift %", 0)) <= 35 and
          float(c["CI Low %"]) <= float(c["Beyond Shift %"]) <= float(c["CI High %"]),
          f"--relative: compute +160% as measured, about +100% beyond the shift (its interval's): {c}")
    # Each of them moved with the shift, as the inputs measure it: `same`. (A range's own NVTX
    # cost does not scale with --scale; under a sanitizer on a loaded machine it can reach a
    # short range's ratio: then the verdict the inputs hold, never a verdict they do not.)
    for name in (":load", ":store", "app:io flush"):
        r = rr.get(("range", name), {})
        side = [geometric_mean([json_run_medians(f)[name] for f in files]) for files in (b, n)]
        beyond = side[1] / side[0] / (1 + float(r.get("Shift %") or 0) / 100) - 1
        shift = 1 + float(r.get("Shift %") or 0) / 100
        moved = time_move(b, n, name)
        total_beyond = None if moved is None else (1 + moved) / shift - 1
        if abs(beyond) < 0.05 and total_beyond is not None and abs(total_beyond) >= 0.09:
            # The median moved with the shift; the time per run did not (preempted instances).
            print(f"note: {name}'s time per run moved {total_beyond:+.1%} beyond the shift in "
                  f"the inputs", file=sys.stderr)
            check(r.get("Verdict") in ("same", "slower" if total_beyond > 0 else "faster") and
                  (r.get("Verdict") == "same" or r.get("Note", "").startswith("time per run")),
                  f"--relative: {name} as its inputs hold (time per run {total_beyond:+.1%} "
                  f"beyond the shift): {r}")
        elif abs(beyond) < 0.05:
            check(r.get("Verdict") == "same", f"--relative: {name} same ({beyond:+.1%} beyond "
                  f"the shift in the inputs): {r}")
        else:
            print(f"note: {name} moved {beyond:+.1%} beyond the shift in the inputs", file=sys.stderr)
            check(r.get("Verdict") in ("same", "slower" if beyond > 0 else "faster"),
                  f"--relative: {name} as its inputs hold ({beyond:+.1%} beyond the shift): {r}")
    svg = os.path.join(tmp, "rel.svg")
    t = diff(a, "--relative", "--group-digits", "--svg", svg, *b, "--vs", *n)
    check("Beyond Shift" in t.stdout and "taken as the machine's" in t.stdout,
          f"the table's own column for the relative figure: {t.stdout[:600]}")
    text = open(svg).read() if os.path.exists(svg) else ""
    check(re.search(r"\+1[4-8]\d\.\d% \(beyond shift \+(7\d|8\d|9\d|1[0-2]\d)\.\d%\)", text) is not None,
          f"the picture: compute as measured, and beyond the shift beside it: {text[-800:]}")
    g = diff(a, "--relative", "--fail-above=20%", "--gate", "load", *b, "--vs", *n)
    # (Beyond the shift, load's time per run moved as little, unless a loaded machine stretched
    # some runs: then the gate fails where the inputs grew by more than 20% beyond the shift.)
    host_shift = 1 + float(rr.get(("range", ":load"), {}).get("Shift %") or 0) / 100
    beyond = (1 + time_move(b, n, ":load")) / host_shift - 1
    if beyond < 0.15:
        check(g.returncode == 0, f"--relative: load passes the gate: {g.stderr}")
    else:
        print(f"note: load's own time per run moved {beyond:+.1%} beyond the shift",
              file=sys.stderr)
        # (Failed or not as the test over the runs finds that growth significant.)
        check(g.returncode == 0 or ":load" in g.stderr,
              f"--relative: load's gate as its inputs hold ({beyond:+.1%}): {g.stderr}")


# Synthetic runs (our JSON): nested host ranges (a step holds four layers, each holding matmul
# and gelu), other host ranges, and GPU items; each run a run-wide factor (host, GPU), each item
# a factor of its own per run, each instance its own noise. (The fixture of bench/diff_noise.py,
# its cases "nested", "most GPU items", "machine-wide".)
HOST_LEAVES = {"matmul": 300, "gelu": 100, "load": 200, "io": 150, "save": 80, "log": 40}
LAYERS = ["layer A", "layer B", "layer C", "layer D"]
KERNELS = [f"kernel_{i}(float*)" for i in range(9)] + ["kernel_9(float*)", "adamw(float*)"]


def synthetic_run(path, rng, host=1.0, matmul=1.0, gpu_changed=1.0, iters=10, gelu_calls=1,
                  host_sd=0.03, load=1.0):
    """One run. host: every host range's factor (a machine-wide slowdown); matmul: matmul's (and
    so its layers' and the step's, which hold it); gpu_changed: kernel_0 .. kernel_8's (kernel_9
    and adamw untouched); gelu_calls: gelu's instances a layer (its layers and step hold them);
    host_sd: the spread of the run's host factor (a machine whose runs differ); load: load's."""
    hf = host * math.exp(rng.gauss(0, host_sd))
    gf = math.exp(rng.gauss(0, 0.005))
    item_f = {n: math.exp(rng.gauss(0, 0.02)) for n in list(HOST_LEAVES) + LAYERS + ["step"]}
    kern_f = {k: math.exp(rng.gauss(0, 0.005)) for k in KERNELS}
    ev, t, corr = [], 1000.0, 1

    def rng_ev(name, ts, dur):
        ev.append({"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": round(ts, 3),
                   "dur": round(dur, 3), "cat": "", "args": {"domain": ""}})

    def leaf(name, factor=1.0):
        return HOST_LEAVES[name] * hf * item_f[name] * factor * math.exp(rng.gauss(0, 0.05))

    for _ in range(iters):
        step_start = t
        t += 5
        for layer in LAYERS:
            ls = t
            t += 3
            d = leaf("matmul", matmul)
            rng_ev("matmul", t, d)
            t += d + 2
            for _ in range(gelu_calls):
                d = leaf("gelu")
                rng_ev("gelu", t, d)
                t += d + 2
            t += 20 * hf * item_f[layer]
            rng_ev(layer, ls, t - ls)
        t += 30 * hf * item_f["step"]
        rng_ev("step", step_start, t - step_start)
        for name in ("load", "io", "save", "log"):
            d = leaf(name, load if name == "load" else 1.0)
            rng_ev(name, t, d)
            t += d + 2
        for i, k in enumerate(KERNELS):
            f = gpu_changed if i < 9 else 1.0
            d = (10 + 3 * i) * gf * kern_f[k] * f * math.exp(rng.gauss(0, 0.02))
            ev.append({"ph": "X", "name": k, "pid": 1, "tid": 1 << 40, "ts": round(t, 3),
                       "dur": round(d, 3), "cat": "cuda_kernel", "args": {"correlation": corr}})
            corr += 1
            t += d + 1
    with open(path, "w") as f:
        json.dump({"traceEvents": ev, "otherData": {"tool": "nvtxpp-capture",
                                                    "base_utc_ns": 1_764_000_000 * 10**9}}, f)
    return path


def case_diff_as_measured(a, tmp):
    """A real change that reaches many items leaves the others `same`, and each row's Change is
    its own as measured (its Base and New): a child 40% slower inside its parents (the parents
    slower as measured, their siblings untouched); most kernels 25% faster, two untouched; and a
    machine-wide slowdown (every host range 1.3x), which --relative takes as the machine's.
    5 synthetic runs a side (the run-wide factor of the old default misjudged the first two)."""
    import random
    rng = random.Random(7)
    base = [synthetic_run(os.path.join(tmp, f"b{i}.json"), rng) for i in range(5)]
    cases = {
        "nested": ([synthetic_run(os.path.join(tmp, f"n{i}.json"), rng, matmul=1.4)
                    for i in range(5)],
                   {":matmul", ":step"} | {":" + x for x in LAYERS}, "slower"),
        "most GPU items": ([synthetic_run(os.path.join(tmp, f"g{i}.json"), rng, gpu_changed=0.75)
                            for i in range(5)], set(KERNELS[:9]), "faster"),
        "machine-wide": ([synthetic_run(os.path.join(tmp, f"m{i}.json"), rng, host=1.3)
                          for i in range(5)],
                         {":" + x for x in list(HOST_LEAVES) + LAYERS + ["step"]}, "slower"),
        "unchanged": ([synthetic_run(os.path.join(tmp, f"u{i}.json"), rng) for i in range(5)],
                      set(), ""),
    }
    # A machine whose runs differ by 8% as a whole, and one range (load, held by nothing) 30%
    # slower: the shift between the sides is no change (its row `same`), so the default tests
    # each item beyond it and finds load, as measured; the others `same`.
    noisy = [synthetic_run(os.path.join(tmp, f"nb{i}.json"), rng, host_sd=0.08) for i in range(5)]
    cases["noisy machine"] = ([synthetic_run(os.path.join(tmp, f"nn{i}.json"), rng, host_sd=0.08,
                                             load=1.3) for i in range(5)], {":load"}, "slower")
    sides = {label: base for label in cases}
    sides["noisy machine"] = noisy
    for label, (new, changed, word) in cases.items():
        for mode in ("default", "relative"):
            opts = ["--relative"] if mode == "relative" else []
            rows = rows_only(diff(a, "--csv", *opts, *sides[label], "--vs", *new))
            want_changed = set() if (label == "machine-wide" and mode == "relative") else changed
            for (kind, name), r in rows.items():
                measured = 100 * (float(r["New"]) / float(r["Base"]) - 1)
                check(abs(float(r["Change %"]) - measured) < 0.05,
                      f"{label} {mode} {name}: Change is as measured (Base and New): {r}")
                want = word if name in want_changed else "same"
                check(r["Verdict"] == want,
                      f"{label} {mode}: {name} {want}, got {r['Verdict']} "
                      f"({r['Change %']}%, beyond shift {r['Beyond Shift %']}): {r['Note']}")
                if r["Beyond Shift %"] == "":
                    check(float(r["CI Low %"]) <= float(r["Change %"]) <= float(r["CI High %"]),
                          f"{label} {mode} {name}: Change inside its interval: {r}")


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
    b, n = two_sides(a, tmp, RUNS, new_args=("--slow", "compute=100"))
    out = os.path.join(tmp, "d.svg")
    p = diff(a, "--svg", out, "--group-digits", *b, "--vs", *n)
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
