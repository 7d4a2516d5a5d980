#!/usr/bin/env python3
"""How often `nvtxpp-capture diff` cries wolf on unchanged runs, and how often it finds a real
change (docs/diff.md, "How far to trust it").

Three experiments, each a subcommand:

fixture   Traces written here, whose runs differ as real programs' runs do: every run draws a
          run-wide factor (host ranges and GPU items apart) and a factor per item, both fixed
          within the run, and every instance its own noise. Host ranges vary a lot from run to
          run, a few of them very much (as a library call's host range did on the GPU machine),
          GPU kernels and memory operations hold steady; some items' calls per run vary; 61
          numbered steps hold one instance each a run; 12 numbered layers hold many. A pool of
          unchanged runs is compared with itself (false verdicts: any slower, faster, more or
          fewer; a 10% gate that fails), at 1, 3 and 5 runs a side; runs in which one host range
          and one kernel are +10%, +25% or +50% longer, or one kernel runs twice as often, are
          compared with unchanged runs (detection) at 3 and 5 runs a side (+25%: 2, 3, 5, 10).
          Each comparison three ways (RULES): the default, --absolute and --relative.
cases     Real changes that reach many items, on runs whose items nest (a step holds four
          layers, each holding matmul and gelu; tests/capture/diff_tests.py's synthetic runs):
          a child slower inside its parents; most kernels faster, two untouched; a machine-wide
          slowdown (every host range 1.3x); gelu called twice as often; unchanged runs. For each
          mode (default, --relative), out of N comparisons of 5 runs a side: those with a false
          verdict on an untouched item, and those that found every changed item.
traces    Unchanged runs of real programs (one folder of traces per program, such as the GPU
          machine's ten runs each of reduce v3 and v4, stream_workers, a program with numbered
          steps): every comparison of disjoint subsets at 1, 3 and 5 runs a side (sampled when
          there are many), the share with any false verdict.
timing    The time `diff` takes on 2 x 5 traces of about 25k ranges and 40k GPU operations each.

usage: bench/diff_noise.py fixture CAPTURE [--comparisons 100] [--seed 1] [--out DIR]
       bench/diff_noise.py cases CAPTURE [--comparisons 100] [--seed 1] [--out DIR]
       bench/diff_noise.py traces CAPTURE DIR... [--out DIR] [--name NAME]
       bench/diff_noise.py timing CAPTURE [--out DIR]
CAPTURE is the nvtxpp-capture binary. Writes DIR/NAME.txt (the tables) and DIR/NAME.csv (every
comparison: sizes, rule, the verdicts other than same).
"""
import argparse
import csv
import io
import itertools
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

CHANGED = {"verdicts": ("slower", "faster", "more", "fewer")}
RULES = {"default": [], "absolute": ["--absolute"], "relative": ["--relative"]}


# ------------------------------------------------------------------------------------------------
# The fixture

def fixture_items(rng):
    """The program: (kind, name, instances per run, median ns, noise class, calls vary)."""
    items = []
    host_names = ["load", "compute", "store", "optimizer", "data loader", "checkpoint",
                  "allreduce wait", "logging", "validation", "schedule"]
    for i, name in enumerate(host_names):
        items.append(("range", name, 40, 200_000 * (1 + i % 4), "host", i % 5 == 4))
    for i in range(20):
        items.append(("range", f"phase {chr(65 + i)}", 20 + 10 * (i % 5), 20_000 * (1 + i % 7),
                      "host", i % 6 == 5))
    for i in range(4):  # host ranges whose runs differ very much (a library's host call)
        items.append(("range", f"library call {chr(97 + i)}", 30, 15_000 * (1 + i),
                      "host-wild", False))
    for i in range(12):
        items.append(("range", f"Layer {i}", 24, 400_000, "host", False))
    items.append(("range", "Train step", 1, 12_000_000, "host", False))  # numbered below
    for i in range(30):
        items.append(("kernel", f"kernel_{i}(float*, int)", 24 * (1 + i % 3),
                      5_000 * (1 + (i * 7) % 40), "gpu", False))
    items.append(("kernel", "gelu_forward(float*, const float*, int)", 48, 30_000, "gpu", False))
    items.append(("memset", "[CUDA memset]", 20, 2_000, "gpu", False))
    return items


NOISE = {  # run-wide factor, per-item factor, instance noise (log-normal sd)
    "host": (0.05, 0.03, 0.10),
    "host-wild": (0.05, 0.20, 0.10),
    "gpu": (0.005, 0.005, 0.02),
}
STEPS = 61


def make_run(items, rng, path, change=None):
    """One run's JSON trace. change: {name: (duration factor, calls factor)}."""
    change = change or {}
    host_f = math.exp(rng.gauss(0, NOISE["host"][0]))
    gpu_f = math.exp(rng.gauss(0, NOISE["gpu"][0]))
    ev = []
    t = 1000.0  # us
    corr = 1
    for kind, name, n, med, cls, vary in items:
        run_f, item_sd, inst_sd = NOISE[cls]
        f = (gpu_f if cls == "gpu" else host_f) * math.exp(rng.gauss(0, item_sd))
        dur_f, calls_f = change.get(name, (1.0, 1.0))
        count = n * calls_f
        if vary:
            count *= math.exp(rng.gauss(0, 0.1))
        count = max(1, round(count))
        names = [f"{name} {i}" for i in range(STEPS)] if name == "Train step" else [name]
        for nm in names:
            for _ in range(count):
                d = med * f * dur_f * math.exp(rng.gauss(0, inst_sd)) / 1000.0
                e = {"ph": "X", "name": nm, "pid": 1, "ts": round(t, 3), "dur": round(d, 3)}
                if kind == "range":
                    e.update(cat="", tid=1, args={"domain": ""})
                elif kind == "kernel":
                    e.update(cat="cuda_kernel", tid=1 << 40, args={"correlation": corr})
                    corr += 1
                else:
                    e.update(cat="cuda_memset", tid=1 << 40, args={"correlation": corr})
                    corr += 1
                ev.append(e)
                t += d + 1.0
    with open(path, "w") as f:
        # base_utc_ns: the wall-clock time of ts 0, as the tool's own JSON records it (merge
        # needs it to turn the trace into SQLite)
        json.dump({"traceEvents": ev,
                   "otherData": {"tool": "nvtxpp-capture", "base_utc_ns": 1_764_000_000 * 10**9}},
                  f)
    return path


def diff_rows(capture, base, new, extra=()):
    p = subprocess.run([capture, "diff", "--csv", *extra, *base, "--vs", *new],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"diff failed: {p.stderr}")
    return list(csv.DictReader(io.StringIO(p.stdout))), p.returncode


def flagged(rows, skip=()):
    return [f'{r["Kind"]} {r["Name"]} {r["Verdict"]} {r["Change %"]}' for r in rows
            if r["Verdict"] in CHANGED["verdicts"] and r["Name"] not in skip]


def fixture(a, w, out_rows):
    rng = random.Random(a.seed)
    items = fixture_items(rng)
    tmp = tempfile.mkdtemp(prefix="diff-noise-")
    pool = [make_run(items, rng, os.path.join(tmp, f"same{i}.json")) for i in range(a.pool)]
    changed = {}
    for pct in (10, 25, 50):
        ch = {"compute": (1 + pct / 100, 1.0), "kernel_7(float*, int)": (1 + pct / 100, 1.0)}
        changed[f"+{pct}%"] = [make_run(items, rng, os.path.join(tmp, f"c{pct}-{i}.json"), ch)
                               for i in range(10)]
    ch = {"gelu_forward(float*, const float*, int)": (1.0, 2.0)}
    changed["calls x2"] = [make_run(items, rng, os.path.join(tmp, f"calls-{i}.json"), ch)
                           for i in range(10)]

    w("## Fixture: unchanged runs (false verdicts)\n")
    w(f"{a.pool} unchanged runs; {a.comparisons} comparisons at each size, runs drawn at random, "
      f"no run on both sides. A false verdict: any item slower, faster, more or fewer.\n")
    w("| runs a side | rule | comparisons with a false verdict | false items (all) | "
      "10% gate failed |")
    w("|---|---|---|---|---|")
    for k in (1, 3, 5):
        for rule, opts in RULES.items():
            bad = items_bad = gate_bad = 0
            for c in range(a.comparisons):
                pick = rng.sample(pool, 2 * k)
                rows, rc = diff_rows(a.capture, pick[:k], pick[k:], [*opts, "--fail-above=10%"])
                fl = flagged(rows)
                bad += bool(fl)
                items_bad += len(fl)
                gate_bad += rc == 1
                out_rows.append(["fixture-same", k, rule, c, len(rows), rc, ";".join(fl)])
            w(f"| {k} | {rule} | {bad}/{a.comparisons} ({100 * bad / a.comparisons:.1f}%) | "
              f"{items_bad} | {gate_bad} |")
    w("")
    w("## Fixture: detection\n")
    w("`compute` (a host range, 40 a run) and `kernel_7` (a kernel) made longer together; "
      "`gelu_forward` (a kernel, 48 a run) run twice as often. New side: changed runs; base: "
      "unchanged runs.\n")
    w("| change | runs a side | rule | compute slower | kernel_7 slower | gelu_forward more | "
      "other items flagged |")
    w("|---|---|---|---|---|---|---|")
    targets = {"compute": ":compute", "kernel": "kernel_7(float*, int)",
               "gelu": "gelu_forward(float*, const float*, int)"}
    for label, runs in changed.items():
        for k in ((2, 3, 5, 10) if label == "+25%" else (3, 5)):
            for rule, opts in RULES.items():
                found = {t: 0 for t in targets}
                others = 0
                for c in range(a.comparisons):
                    base = rng.sample(pool, k)
                    new = rng.sample(runs, k)
                    rows, _ = diff_rows(a.capture, base, new, opts)
                    by = {r["Name"]: r for r in rows
                          if r["Kind"] in ("range", "kernel") or r["Name"] == targets["gelu"]}
                    found["compute"] += by.get(targets["compute"], {}).get("Verdict") == "slower"
                    found["kernel"] += by.get(targets["kernel"], {}).get("Verdict") == "slower"
                    found["gelu"] += by.get(targets["gelu"], {}).get("Verdict") == "more"
                    fl = flagged(rows, skip=set(targets.values()))
                    others += len(fl)
                    out_rows.append([f"fixture-{label}", k, rule, c, len(rows), 0, ";".join(fl)])
                n = a.comparisons
                cells = [f"{found[t]}/{n}" if (label == "calls x2") == (t == "gelu") else "-"
                         for t in ("compute", "kernel", "gelu")]
                w(f"| {label} | {k} | {rule} | {' | '.join(cells)} | {others} |")
    w("")


# ------------------------------------------------------------------------------------------------
# Real changes that reach many items

def cases(a, w, out_rows):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                    "capture"))
    import diff_tests as dt  # the synthetic runs the tests judge too
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="diff-cases-")
    host = [":" + x for x in list(dt.HOST_LEAVES) + dt.LAYERS + ["step"]]
    parents = {":" + x for x in dt.LAYERS} | {":step"}
    pool = [dt.synthetic_run(os.path.join(tmp, f"u{i}.json"), rng) for i in range(20)]
    defs = [  # label, run arguments, {mode: {item: verdict}} (untouched: every other item)
        ("unchanged runs", {}, {"default": {}, "relative": {}}),
        ("nested: matmul 1.4x inside its layers and step", {"matmul": 1.4},
         {m: {n: "slower" for n in {":matmul"} | parents} for m in ("default", "relative")}),
        ("most GPU items: 9 of 11 kernels 0.75x", {"gpu_changed": 0.75},
         {m: {k: "faster" for k in dt.KERNELS[:9]} for m in ("default", "relative")}),
        ("machine-wide: every host range 1.3x", {"host": 1.3},
         {"default": {n: "slower" for n in host}, "relative": {}}),
        ("calls doubled: gelu twice a layer", {"gelu_calls": 2},
         {m: dict({":gelu": "more"}, **{n: "slower" for n in parents})
          for m in ("default", "relative")}),
    ]
    w("## Real changes that reach many items\n")
    w(f"5 runs a side; {a.comparisons} comparisons each, runs drawn at random from 20 unchanged "
      "and 10 changed runs. False: an untouched item with a verdict other than `same`. Found: "
      "every changed item with its verdict (as measured; --relative: beyond a shift taken as "
      "the machine's).\n")
    w("| case | mode | comparisons with a false verdict on an untouched item | "
      "comparisons that found every changed item |")
    w("|---|---|---|---|")
    for label, kw, want in defs:
        changed = [dt.synthetic_run(os.path.join(tmp, f"c{len(out_rows)}-{i}.json"), rng, **kw)
                   for i in range(10)] if kw else pool
        for mode, opts in (("default", []), ("relative", ["--relative"])):
            false = found = 0
            for c in range(a.comparisons):
                if kw:
                    base, new = rng.sample(pool, 5), rng.sample(changed, 5)
                else:
                    pick = rng.sample(pool, 10)
                    base, new = pick[:5], pick[5:]
                rows, _ = diff_rows(a.capture, base, new, opts)
                items = {r["Name"]: r["Verdict"] for r in rows if r["Kind"] != "all"}
                bad = [f"{n} {v}" for n, v in items.items()
                       if n not in want[mode] and v != "same"]
                false += bool(bad)
                found += all(items.get(n) == v for n, v in want[mode].items())
                out_rows.append([f"cases-{label}", 5, mode, c, len(rows), 0, ";".join(bad)])
            n = a.comparisons
            w(f"| {label} | {mode} | {false}/{n} | "
              f"{f'{found}/{n}' if want[mode] else '- (nothing changed)'} |")
    w("")


# ------------------------------------------------------------------------------------------------
# Real programs' unchanged runs

def splits(n, k, most, rng):
    """Up to `most` comparisons of k runs against k other runs, of n."""
    out = []
    if math.comb(n, k) * math.comb(n - k, k) <= 4 * most:
        for b in itertools.combinations(range(n), k):
            rest = [i for i in range(n) if i not in b]
            for c in itertools.combinations(rest, k):
                if b < c:
                    out.append((b, c))
        rng.shuffle(out)
        return out[:most]
    seen = set()
    while len(out) < most:
        pick = rng.sample(range(n), 2 * k)
        key = (tuple(sorted(pick[:k])), tuple(sorted(pick[k:])))
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def traces(a, w, out_rows):
    rng = random.Random(a.seed)
    w("## Unchanged runs of real programs\n")
    w("| program | runs | runs a side | rule | comparisons with a false verdict | "
      "false items (all) | 10% gate failed | items a comparison |")
    w("|---|---|---|---|---|---|---|---|")
    for d in a.dirs:
        files = sorted(os.path.join(d, f) for f in os.listdir(d)
                       if f.endswith((".json", ".sqlite")))
        name = os.path.basename(os.path.normpath(d))
        for k in (1, 3, 5):
            if 2 * k > len(files):
                continue
            for rule, opts in RULES.items():
                bad = items_bad = gate_bad = 0
                sizes = []
                cmp = splits(len(files), k, a.comparisons, rng)
                for c, (b, n) in enumerate(cmp):
                    rows, rc = diff_rows(a.capture, [files[i] for i in b],
                                         [files[i] for i in n], [*opts, "--fail-above=10%"])
                    fl = flagged(rows)
                    bad += bool(fl)
                    items_bad += len(fl)
                    gate_bad += rc == 1
                    sizes.append(len(rows))
                    out_rows.append([name, k, rule, c, len(rows), rc, ";".join(fl)])
                w(f"| {name} | {len(files)} | {k} | {rule} | {bad}/{len(cmp)} "
                  f"({100 * bad / max(len(cmp), 1):.1f}%) | {items_bad} | {gate_bad} | "
                  f"{min(sizes)}-{max(sizes)} |")
    w("")


# ------------------------------------------------------------------------------------------------
# Timing

def timing(a, w, out_rows):
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="diff-time-")
    items = []
    for i in range(100):
        items.append(("range", f"range {i}", 250, 50_000, "host", False))
    for i in range(200):
        items.append(("kernel", f"kernel_{i}(float*)", 190, 5_000, "gpu", False))
    items.append(("memset", "[CUDA memset]", 2000, 2_000, "gpu", False))
    files = [make_run(items, rng, os.path.join(tmp, f"t{i}.json")) for i in range(10)]
    sqlite = []
    for f in files:  # the same traces as SQLite, through the tool's own writer
        s = f[:-5] + ".sqlite"
        p = subprocess.run([a.capture, "merge", "-o", s, f], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode == 0:
            sqlite.append(s)
    w("## Time of diff, 2 x 5 traces\n")
    w(f"Each trace: 25,000 ranges (100 names), 40,000 GPU operations (200 kernels, a memset); "
      f"JSON {os.path.getsize(files[0]) / 1e6:.1f} MB a file. Best of 3, wall clock.\n")
    w("| input | seconds |")
    w("|---|---|")
    for label, fs in (("JSON", files), ("SQLite", sqlite)):
        if len(fs) != 10:
            w(f"| {label} | (not made: merge does not take this input) |")
            continue
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            rows, _ = diff_rows(a.capture, fs[:5], fs[5:])
            best = min(best, time.perf_counter() - t0)
        out_rows.append(["timing-" + label, 5, "default", 0, len(rows), 0, f"{best:.3f}"])
        w(f"| {label} | {best:.2f} |")
    w("")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("fixture", "cases", "traces", "timing"))
    ap.add_argument("capture")
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--comparisons", type=int, default=100)
    ap.add_argument("--pool", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=".")
    ap.add_argument("--name", default=None)
    a = ap.parse_args()
    name = a.name or f"diff-noise-{a.what}"
    # A copy of the tool: a rebuild while the experiment runs must not change it halfway.
    keep = tempfile.mkdtemp(prefix="diff-noise-tool-")
    shutil.copy(a.capture, os.path.join(keep, "nvtxpp-capture"))
    a.capture = os.path.join(keep, "nvtxpp-capture")
    os.makedirs(a.out, exist_ok=True)
    lines = []

    def w(s):
        print(s, flush=True)
        lines.append(s)

    out_rows = []
    {"fixture": fixture, "cases": cases, "traces": traces, "timing": timing}[a.what](a, w,
                                                                                  out_rows)
    with open(os.path.join(a.out, name + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, name + ".csv"), "w", newline="") as f:
        cw = csv.writer(f)
        cw.writerow(["set", "runs a side", "rule", "comparison", "items", "exit", "flagged"])
        cw.writerows(out_rows)


if __name__ == "__main__":
    main()
