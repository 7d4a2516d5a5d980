#!/usr/bin/env python3
"""How often `nvtxpp-capture diff` cries wolf, and how often it finds a real slowdown
(docs/diff.md, "How far to trust it").

The program: tests/capture/diff_app.cpp, numbered steps holding load (300 us), compute (600 us),
store (200 us), io flush (100 us) and --phases short ranges (20 us, 35 us, ...), in one of two
kinds of work: `wait` (each range waits for the clock: only preemption moves it) or `fixed` (a
fixed amount of arithmetic: moves with the load, the caches, the clock frequency, as real code
does).

False positives: PAIRS pairs of runs of the same program, each pair diffed by every rule of
--thresholds (the rank test alone: --threshold=0% --floor=0ns; a threshold; a threshold with
--relative, against the run-wide shift); the share of tested items
whose verdict is not `same`. Detection: for each slowdown of --slowdowns injected into compute
(--slow compute=PCT), the same plain runs against a slowed run made right after them; how often
compute is `slower`, and how many other items (the steps that hold compute aside) get another
verdict than `same`.

usage: bench/diff_noise.py BUILD_DIR [--pairs 30] [--iters 30] [--phases 12]
           [--work wait,fixed] [--slowdowns 5,10,25] [--thresholds 0,2,5,10,20,5r,10r]
           [--out DIR]
           [--name NAME]
Writes DIR/NAME.csv (every pair and rule: items tested, not `same`, the median change over the
items, compute's verdict and change, the flagged items) and DIR/NAME.txt (the figures); NAME:
--name, default diff-noise.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile

STEPS = ":Train step *"


def run(cmd):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, check=False)


def capture(a, out, work, *args):
    p = run([a.capture, "--no-summary", "-o", out, "--", a.app, "--iters", a.iters, "--phases",
             a.phases, "--work", work, *args])
    if p.returncode != 0:
        sys.exit(f"capture failed: {p.stderr}")
    return out


def rule_opts(t):
    """A rule: "0" the rank test alone, "N" threshold N%, "Nr" threshold N% and --relative."""
    if t == "0":
        return ["--threshold=0%", "--floor=0ns"]
    if t.endswith("r"):
        return [f"--threshold={t[:-1]}%", "--relative"]
    return [f"--threshold={t}%"]


def rule_name(t):
    if t == "0":
        return "rank test alone"
    return f"threshold {t[:-1]}%, relative" if t.endswith("r") else f"threshold {t}%"


def verdicts(a, base, new, threshold):
    """{item: (verdict, tested, change %)} of one diff."""
    p = run([a.capture, "diff", "--csv", "--group", "Train step *", *rule_opts(threshold), base,
             "--vs", new])
    if p.returncode != 0:
        sys.exit(f"diff failed: {p.stderr}")
    return {r["Name"]: (r["Verdict"], r["p-value"] != "", r["Change %"])
            for r in csv.DictReader(io.StringIO(p.stdout))}


def measure(a, tmp, work, thresholds, slowdowns):
    """Pair i: a plain run x, then (back to back, so that both sides of every pair see the same
    machine) a second plain run y and one run per slowdown."""
    out = {"same_program": [], "slowdown": {str(p): [] for p in slowdowns}}
    for i in range(a.pairs):
        x = capture(a, os.path.join(tmp, f"{work}-x{i}.json"), work)
        y = capture(a, os.path.join(tmp, f"{work}-y{i}.json"), work)
        slowed = {p: capture(a, os.path.join(tmp, f"{work}-s{p}-{i}.json"), work, "--slow",
                             f"compute={p}") for p in slowdowns}
        for t in thresholds:
            out["same_program"].append({"pair": i, "threshold": t, "items": verdicts(a, x, y, t)})
            for p, s in slowed.items():
                out["slowdown"][str(p)].append({"pair": i, "threshold": t,
                                                "items": verdicts(a, x, s, t)})
    return out


def report(work, res, thresholds, slowdowns):
    lines = [f"work={work}"]
    for t in thresholds:
        rs = [r for r in res["same_program"] if r["threshold"] == t]
        tested = sum(1 for r in rs for v in r["items"].values() if v[1])
        flagged = sum(1 for r in rs for v in r["items"].values() if v[1] and v[0] != "same")
        pairs_hit = sum(1 for r in rs if any(v[1] and v[0] != "same" for v in r["items"].values()))
        line = (f"  same program, {rule_name(t):25}: {flagged:3} of {tested} tested items not `same` "
                f"({100 * flagged / max(tested, 1):5.2f}%), in {pairs_hit} of {len(rs)} pairs")
        for pct in slowdowns:
            rows = [r for r in res["slowdown"][str(pct)] if r["threshold"] == t]
            found = sum(1 for r in rows if r["items"].get(":compute", ("",))[0] == "slower")
            others = sum(1 for r in rows for n, v in r["items"].items()
                         if v[1] and n not in (":compute", STEPS) and v[0] != "same")
            line += f"; +{pct}%: found {found}/{len(rows)}, others flagged {others}"
        lines.append(line)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--phases", type=int, default=12)
    ap.add_argument("--work", default="wait,fixed")
    ap.add_argument("--slowdowns", default="5,10,25")
    ap.add_argument("--thresholds", default="0,2,5,10,20,5r,10r",
                    help="rules: 0 the rank test alone, N threshold N%%, Nr with --relative")
    ap.add_argument("--out", default=None)
    ap.add_argument("--name", default="diff-noise", help="the output files' stem")
    a = ap.parse_args()
    a.capture = os.path.join(a.build, "tools", "capture", "nvtxpp-capture")
    a.app = os.path.join(a.build, "tests", "capture", "nvtxpp_diff_app")
    thresholds = a.thresholds.split(",")
    slowdowns = [int(x) for x in a.slowdowns.split(",")]
    load = os.getloadavg()[0]
    result = {"cores": os.cpu_count(), "load_at_start": load, "pairs": a.pairs, "iters": a.iters,
              "phases": a.phases, "work": {}}
    lines = [f"nvtxpp-capture diff: false positives and detection; {os.cpu_count()} cores, "
             f"load average {load:.1f} at the start",
             f"{a.pairs} pairs of runs per line, {a.iters} steps a run, {4 + a.phases} ranges a "
             f"step plus the steps; alpha 0.01, floor 100 ns (none for the rank test alone)",
             "same program: items with a verdict other than `same`; +N%: pairs (of "
             f"{a.pairs}) where compute, N% slower, is `slower`, and other items flagged", ""]
    with tempfile.TemporaryDirectory() as tmp:
        for work in a.work.split(","):
            result["work"][work] = measure(a, tmp, work, thresholds, slowdowns)
            lines += report(work, result["work"][work], thresholds, slowdowns)
    result["load_at_end"] = os.getloadavg()[0]
    lines.append(f"\nload average {result['load_at_end']:.1f} at the end")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        write_csv(os.path.join(a.out, a.name + ".csv"), result)
        with open(os.path.join(a.out, a.name + ".txt"), "w") as f:
            f.write(text)


def write_csv(path, result):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["work", "experiment", "pair", "rule", "tested", "not_same",
                    "median_change_pct", "compute_verdict", "compute_change_pct", "flagged"])
        for work, res in result["work"].items():
            exps = [("same", res["same_program"])] + [(f"+{p}", rows)
                                                      for p, rows in res["slowdown"].items()]
            for exp, rows in exps:
                for x in rows:
                    tested = [(n, v) for n, v in x["items"].items() if v[1]]
                    flagged = [f"{n}={v[0]}:{v[2]}" for n, v in tested if v[0] != "same"]
                    ch = [float(v[2]) for _, v in tested]
                    c = x["items"].get(":compute", ["", False, ""])
                    w.writerow([work, exp, x["pair"], x["threshold"], len(tested), len(flagged),
                                f"{statistics.median(ch):.3f}" if ch else "", c[0], c[2],
                                ";".join(flagged)])


if __name__ == "__main__":
    main()
