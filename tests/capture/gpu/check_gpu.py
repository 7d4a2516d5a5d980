#!/usr/bin/env python3
"""GPU tests of nvtxpp-capture's CUPTI source (need a CUDA device; ctest label `gpu`).

usage: check_gpu.py CASE --capture PATH --app PATH   (CASE: range many sigterm nodevice)
Runs gpu_app under nvtxpp-capture, keeps the raw files and checks the GPU records in them.
Exit status 0 = pass; each failed check prints a FAIL line.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import raw_file  # noqa: E402

failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what, file=sys.stderr if not cond else sys.stdout)
    if not cond:
        failures.append(what)


def run(a, tmp, args, env=None):
    raw = os.path.join(tmp, "raw")
    cmd = [a.capture, "--summary-only", "--keep-raw", raw, "--", a.app] + list(args)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=240, env=dict(os.environ, **(env or {})))
    print("$", " ".join(cmd), "->", p.returncode)
    print(p.stdout[-2000:], p.stderr[-2000:], sep="\n")
    files = raw_file.read_dir(raw)
    check(len(files) == 1, f"one raw file, got {len(files)}")
    return p, (files[0] if files else None)


def common(f, work=True):
    check(f.info_values("cupti") == ["loaded"], f"info cupti=loaded: {f.info}")
    check(not f.info_values("dropped"), f"no records dropped: {f.info_values('dropped')}")
    check(not f.info_values("cupti_flush"), f"the final flush finished: {f.info}")
    check(bool(f.info_values("gpu_work")) != work, f"gpu_work=none only without GPU work: {f.info}")
    um = f.info_values("unified_memory")
    check(len(um) == 1 and um[0].startswith("on"),
          f"unified memory migrations recorded on this GPU: {um}")
    # Device names are a nice-to-have (CUPTI's DEVICE records): reported, not required.
    print("note: device info records:", f.info_values("device"))


def kernels_named(f, part):
    return [k for k in f.gpu["kernel"] if part in f.strings.get(k["name"], "")]


def case_range(a, tmp, n=1000):
    p, f = run(a, tmp, ["range", str(n)])
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    if f is None:
        return
    common(f)
    ks = sorted(kernels_named(f, "tiny"), key=lambda k: k["start"])
    check(len(ks) == n, f"exactly {n} kernels, got {len(ks)}")
    copies = f.gpu["memcpy"]
    check(sum(c["copy_kind"] == 1 for c in copies) == 4, "exactly 4 HtoD copies: "
          f"{[c['copy_kind'] for c in copies]}")
    check(sum(c["copy_kind"] == 2 for c in copies) == 3, "exactly 3 DtoH copies")
    check(len(copies) == 7, f"no other copies: {len(copies)}")
    check(len(f.gpu["memset"]) == 2, f"exactly 2 memsets, got {len(f.gpu['memset'])}")
    check(all(0 < k["start"] <= k["end"] for k in ks + copies), "kernels and copies have times")

    ev = f.nvtx_events()
    pushes = sorted((e for e in ev if e[0] == 0 and (e[3] or "").startswith("launch ")),
                    key=lambda e: int(e[3].split()[1]))
    pops = [e for e in ev if e[0] == 1]
    check(len(pushes) == n, f"{n} ranges pushed, got {len(pushes)}")
    nvtx_tid = pushes[0][2] if pushes else None
    # Launch i (kernels run in order on the default stream) starts after range i starts.
    early = [(i, pushes[i][1] - k["start"]) for i, k in enumerate(ks[:len(pushes)])
             if k["start"] < pushes[i][1]]
    margin = min((k["start"] - pushes[i][1] for i, k in enumerate(ks[:len(pushes)])),
                 default=None)
    check(not early, f"no kernel starts before its range starts (smallest margin {margin} ns; "
          f"early: {early[:5]})")
    # The launch calls: on the NVTX thread (gettid), inside their ranges.
    names = {}  # correlation -> API names (runtime and driver records may share one)
    for a_ in f.gpu["api"]:
        names.setdefault(a_["correlation"], set()).add(f.strings.get(a_["name"]))
    launches = sorted((a_ for a_ in f.gpu["api"]
                       if (f.strings.get(a_["name"]) or "").startswith("cudaLaunchKernel")),
                      key=lambda a_: a_["start"])
    check(len(launches) == n, f"{n} cudaLaunchKernel API records (names without version "
          f"suffix), got {len(launches)}; names seen: "
          f"{sorted(set().union(*names.values()) - {None})[:20]}")
    check(all(x["tid"] == nvtx_tid for x in launches), f"API tid == NVTX tid {nvtx_tid}")
    check(all(any((x or "").startswith("cudaLaunchKernel") for x in names.get(k["correlation"], ()))
              for k in ks),
          "each kernel correlates with a cudaLaunchKernel record")
    pop_times = sorted(e[1] for e in pops if e[2] == nvtx_tid)
    # NVTX times are TSC ticks mapped to ns by interpolation (tens of ns of error); the launch
    # call starts a few hundred ns after the push: 1 us of slack for the mapping.
    slack = 1000
    outside = [(i, round(pushes[i][1] - x["start"]), round(x["end"] - pop_times[i]))
               for i, x in enumerate(launches[:min(len(pushes), len(pop_times))])
               if not pushes[i][1] - slack <= x["start"] <= x["end"] <= pop_times[i] + slack]
    check(not outside, f"each launch call lies inside its range (1 us slack): outside "
          f"(index, ns before push, ns after pop) {outside[:5]}")
    print(f"note: clock tsc={f.tsc} ns_per_tick={f.ns_per_tick:.6f}")
    syncs = f.gpu["sync"]
    check(len(syncs) >= 1, f"the cudaDeviceSynchronize is recorded ({len(syncs)} sync records)")


def case_many(a, tmp, n=100000):
    p, f = run(a, tmp, ["many", str(n)])
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    if f is None:
        return
    common(f)
    check(len(kernels_named(f, "tiny")) == n, f"exactly {n} kernels, got "
          f"{len(kernels_named(f, 'tiny'))}")
    corr = [k["correlation"] for k in f.gpu["kernel"]]
    check(len(set(corr)) == len(corr), "no kernel record twice")


def case_sigterm(a, tmp, n=20):
    p, f = run(a, tmp, ["sigterm", str(n)])
    check(p.returncode == -signal.SIGTERM, f"killed by SIGTERM like the program, got {p.returncode}")
    check(f"launched={n} still_running=1" in p.stdout,
          f"kernels were still running at the signal: {p.stdout.strip()}")
    if f is None:
        return
    common(f)
    ks = kernels_named(f, "spin")
    check(len(ks) == n, f"all {n} kernels recorded, got {len(ks)}")
    check(all(0 < k["start"] < k["end"] for k in ks), "every kernel has its start and end times: "
          f"{[(k['start'], k['end']) for k in ks if not 0 < k['start'] < k['end']][:5]}")
    killed = [e for e in f.nvtx_events() if e[0] == 0 and e[3] == "killed here"]
    check(len(killed) == 1, "the NVTX range open at the signal is recorded")
    check(f.finished, "the file has its finish record")


def case_nodevice(a, tmp):
    p, f = run(a, tmp, ["nodevice"], env={"CUDA_VISIBLE_DEVICES": ""})
    check(p.returncode == 7, f"the program's exit status 7 kept (no device), got {p.returncode}")
    if f is None:
        return
    cupti = f.info_values("cupti")
    check(len(cupti) <= 1, f"at most one cupti record: {cupti}")
    if cupti == ["loaded"]:
        check(f.info_values("gpu_work") == ["none"], f"gpu_work=none: {f.info}")
    check(all(not v for k, v in f.gpu.items() if k != "api"), "no GPU work records")
    pushes = [e[3] for e in f.nvtx_events() if e[0] == 0]
    check(pushes == ["before CUDA"], f"the NVTX range recorded: {pushes}")


CASES = {"range": case_range, "many": case_many, "sigterm": case_sigterm,
         "nodevice": case_nodevice}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        CASES[a.case](a, tmp)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
