#!/usr/bin/env python3
"""nvtxpp-capture's CUPTI source without a GPU: the launcher's --cuda modes and the defined
outcomes when CUPTI cannot be loaded, checked in the raw per-process files.

usage: cupti_tests.py CASE --capture PATH --app PATH --fake-cupti PATH
capture_app's `cuda_inject` and `fake_gpu` cases do what the CUDA driver does at cuInit: dlopen
CUDA_INJECTION64_PATH and call InitializeInjection. The fake_* cases load a test double of CUPTI
(fake_cupti.cpp) that delivers its records only when flushed, so the run-time half of the CUPTI
source (flush at exit and on SIGTERM, dropped counts, fork, thread ids, clock) is checked without
a GPU. Exit status 0 = pass.
"""
import argparse
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import raw_file  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(a, args, *, extra=(), env=None, raw=None):
    cmd = [a.capture, "--summary-only"] + list(extra)
    if raw:
        cmd += ["--keep-raw", raw]
    cmd += ["--", a.app] + list(args)
    full_env = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = v
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=120, env=full_env)


def printed_env(stdout):
    return dict(l.split("=", 1) for l in stdout.splitlines() if "=" in l and "INJECTION" in l
                or l.startswith("NVTXPP_CUDA="))


def one_file(raw):
    files = raw_file.read_dir(raw)
    check(len(files) == 1, f"one raw file, got {len(files)}")
    return files[0] if files else None


def pushes(f):
    return [e[3] for e in f.nvtx_events() if e[0] == 0]


def case_cuda_env(a, tmp):
    clean = {"CUDA_INJECTION64_PATH": None, "NVTXPP_CUDA": None}
    for extra, want_cuda, want_mode in (([], True, "auto"), (["--cuda=auto"], True, "auto"),
                                        (["--cuda=on"], True, "on"), (["--cuda", "on"], True, "on"),
                                        (["--cuda=off"], False, "off")):
        p = run(a, ["env"], extra=extra, env=clean)
        check(p.returncode == 0, f"{extra}: exit 0, got {p.returncode}: {p.stderr}")
        env = printed_env(p.stdout)
        nvtx = env.get("NVTX_INJECTION64_PATH", "-")
        check(os.path.isabs(nvtx) and os.path.exists(nvtx), f"{extra}: NVTX path {nvtx}")
        if want_cuda:
            check(env.get("CUDA_INJECTION64_PATH") == nvtx,
                  f"{extra}: CUDA_INJECTION64_PATH is the same library as NVTX's: {env}")
        else:
            check(env.get("CUDA_INJECTION64_PATH") == "-", f"{extra}: not set: {env}")
        check(env.get("NVTXPP_CUDA") == want_mode, f"{extra}: NVTXPP_CUDA={want_mode}: {env}")
    # off leaves the user's own CUDA injection alone.
    p = run(a, ["env"], extra=["--cuda=off"], env={"CUDA_INJECTION64_PATH": "/opt/other.so"})
    check(printed_env(p.stdout).get("CUDA_INJECTION64_PATH") == "/opt/other.so",
          f"--cuda=off keeps the user's CUDA_INJECTION64_PATH: {p.stdout}")
    p = run(a, ["env"], extra=["--cuda=maybe"])
    check(p.returncode == 2 and "--cuda takes auto, on or off" in p.stderr,
          f"a bad --cuda value is bad usage: {p.returncode} {p.stderr}")
    p = subprocess.run([a.capture, "--help"], stdout=subprocess.PIPE, text=True)
    check("--cuda=MODE" in p.stdout, "--help documents --cuda")


def case_cupti_unavailable(a, tmp):
    raw = os.path.join(tmp, "raw")
    missing = os.path.join(tmp, "no-such-dir", "libcupti.so.13")
    for mode in ("auto", "on"):
        p = run(a, ["cuda_inject", "3"], extra=[f"--cuda={mode}"], raw=raw + mode,
                env={"NVTXPP_CUPTI_PATH": missing})
        check(p.returncode == 3, f"{mode}: the program's exit status 3 kept, got {p.returncode}: "
              f"{p.stderr}")
        check("InitializeInjection returned 1" in p.stdout, f"{mode}: CUDA goes on: {p.stdout}")
        f = one_file(raw + mode)
        if f is None:
            continue
        cupti = f.info_values("cupti")
        check(len(cupti) == 1 and cupti[0].startswith("unavailable:") and missing in cupti[0],
              f"{mode}: one info cupti=unavailable:<reason naming the path>, got {cupti}")
        check(not f.info_values("gpu_work"), "no gpu_work record without CUPTI")
        check(all(not v for v in f.gpu.values()), "no GPU records")
        # One copy of the library: the NVTX range is in the same file (a second copy would have
        # truncated it), after the CUDA record.
        check(pushes(f) == ["after cuInit"], f"{mode}: the NVTX range recorded: {pushes(f)}")
        check(f.finished, f"{mode}: the file is finished")
        warned = "CUPTI is unavailable" in p.stderr
        check(warned == (mode == "on"), f"{mode}: warns at once only with --cuda=on: {p.stderr}")


def case_cupti_off(a, tmp):
    # --cuda=off with a CUDA_INJECTION64_PATH of the user's that names our library anyway.
    raw = os.path.join(tmp, "raw")
    lib = printed_env(run(a, ["env"]).stdout)["NVTX_INJECTION64_PATH"]
    p = run(a, ["cuda_inject"], extra=["--cuda=off"], raw=raw,
            env={"CUDA_INJECTION64_PATH": lib, "NVTXPP_CUPTI_PATH": "/nonexistent"})
    check(p.returncode == 0, f"exit 0: {p.stderr}")
    f = one_file(raw)
    if f is not None:
        check(f.info_values("cupti") == ["off"], f"info cupti=off, got {f.info}")
        check(pushes(f) == ["after cuInit"], f"the NVTX range recorded: {pushes(f)}")


def case_cupti_default(a, tmp):
    # This machine's own CUPTI, no GPU: whatever CUPTI does, one defined outcome, no crash.
    raw = os.path.join(tmp, "raw")
    p = run(a, ["cuda_inject", "5"], raw=raw, env={"NVTXPP_CUPTI_PATH": None})
    check(p.returncode == 5, f"the program's exit status 5 kept, got {p.returncode}: {p.stderr}")
    f = one_file(raw)
    if f is None:
        return
    cupti = f.info_values("cupti")
    print("cupti outcome here:", cupti, f.info)
    check(len(cupti) == 1, f"one cupti record, got {cupti}")
    if cupti == ["loaded"]:
        check(f.info_values("gpu_work") == ["none"], f"no GPU work recorded: {f.info}")
    else:
        check(cupti and cupti[0].startswith("unavailable:") and len(cupti[0]) > 12,
              f"unavailable with a reason: {cupti}")
    check(pushes(f) == ["after cuInit"], f"the NVTX range recorded: {pushes(f)}")
    check(f.finished, "the file is finished")


def run_fake(a, tmp, mode, env=None):
    raw = os.path.join(tmp, "raw")
    p = run(a, ["fake_gpu", mode], raw=raw,
            env=dict({"NVTXPP_CUPTI_PATH": a.fake_cupti}, **(env or {})))
    print(p.stdout, p.stderr)
    return p, raw_file.read_dir(raw)


def check_fake_work(f):
    """The work of fake_gpu: 3 launches inside "gpu work", a copy, a memset."""
    check(f.info_values("cupti") == ["loaded"], f"cupti=loaded: {f.info}")
    ev = f.nvtx_events()
    work = [e for e in ev if e[0] == 0 and e[3] == "gpu work"]
    check(len(work) == 1, "the range 'gpu work'")
    if not work:
        return
    push_ns, tid = work[0][1], work[0][2]
    pop_ns = min(e[1] for e in ev if e[0] == 1 and e[2] == tid and e[1] >= push_ns)
    ks = f.gpu["kernel"]
    check(len(ks) == 3 and all(f.strings.get(k["name"]) == "_Z4fakePi" for k in ks),
          f"3 kernels named by string records: {ks} {f.strings}")
    apis = f.gpu["api"]
    check(len(apis) == 3 and all(f.strings.get(x["name"]) == "cudaLaunchKernel_v7000"
                                 for x in apis),
          f"3 API records named as CUPTI names them (cudaLaunchKernel_v7000): "
          f"{[f.strings.get(x['name']) for x in apis]}")
    check(all(x["tid"] == tid for x in apis), f"API tid is the NVTX thread's gettid {tid}: "
          f"{[x['tid'] for x in apis]}")
    check(all(push_ns < x["start"] <= x["end"] < pop_ns for x in apis),
          "API calls lie inside the range: GPU times are CLOCK_MONOTONIC ns "
          f"({push_ns} .. {pop_ns}: {[(x['start'], x['end']) for x in apis]})")
    check(all(k["start"] > push_ns for k in ks), "no kernel starts before its range")
    check(sorted(k["correlation"] for k in ks) == sorted(x["correlation"] for x in apis),
          "kernels and launches correlate")
    check([c["copy_kind"] for c in f.gpu["memcpy"]] == [1], f"one HtoD copy: {f.gpu['memcpy']}")
    check(len(f.gpu["memset"]) == 1, "one memset")
    # A name's string record comes before the first record that uses it.
    kinds = [k for k, _ in f.records]
    check(kinds.index(14) < kinds.index(9), "strings before the records that use them")
    check(not f.info_values("gpu_work"), "GPU work seen: no gpu_work=none")
    check(not f.info_values("cupti_flush"), f"the flush finished: {f.info}")


def case_fake_exit(a, tmp):
    p, files = run_fake(a, tmp, "exit")
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    check(len(files) == 1, f"one file, got {len(files)}")
    for f in files:
        check_fake_work(f)
        check(not f.info_values("dropped"), "nothing dropped")
        check(f.finished, "finished")
        # Records arrive only when flushed: the exit path flushed before the finish record.
        kinds = [k for k, _ in f.records]
        check(max(i for i, k in enumerate(kinds) if k == 9) < kinds.index(7),
              "GPU records before the finish record")


def case_fake_none(a, tmp):
    p, files = run_fake(a, tmp, "none")
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    for f in files:
        check(f.info_values("cupti") == ["loaded"], f"cupti=loaded: {f.info}")
        check(f.info_values("gpu_work") == ["none"], f"gpu_work=none: {f.info}")
        check(all(not v for v in f.gpu.values()), "no GPU records")


def case_fake_drop(a, tmp):
    p, files = run_fake(a, tmp, "drop")
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    for f in files:
        check_fake_work(f)
        check(f.info_values("dropped") == ["5"], f"one dropped=5 record: {f.info}")


def case_fake_term(a, tmp):
    p, files = run_fake(a, tmp, "term")
    check(p.returncode == -signal.SIGTERM, f"killed by SIGTERM, got {p.returncode}")
    check(len(files) == 1, f"one file, got {len(files)}")
    for f in files:
        # The fake delivers records only on a flush: they are here because the signal path had
        # the flusher thread flush CUPTI.
        check_fake_work(f)
        killed = [e for e in f.nvtx_events() if e[0] == 0 and e[3] == "killed"]
        check(len(killed) == 1, "the range open at the signal")
        check(f.finished, "finished")
        check(struct.unpack_from("<qqi", [b for k, b in f.records if k == 7][0])[2] == 1,
              "finish reason: signal")


def case_fake_hang(a, tmp):
    # SIGTERM while CUPTI's flush cannot finish: the handler waits a bounded time (5 s), says
    # so, and the program still dies of the signal with its NVTX events written.
    p, files = run_fake(a, tmp, "term", env={"FAKE_CUPTI_FLUSH_HANGS": "1"})
    check(p.returncode == -signal.SIGTERM, f"killed by SIGTERM, got {p.returncode}")
    for f in files:
        check(f.info_values("cupti_flush") == ["timeout"], f"cupti_flush=timeout: {f.info}")
        check(not f.gpu["kernel"], "the buffered records are lost (and that is said)")
        work = [e for e in f.nvtx_events() if e[0] == 0 and e[3] in ("gpu work", "killed")]
        check(len(work) == 2, "the NVTX events are all written")
        check(f.finished, "finished")


def case_fake_fork(a, tmp):
    p, files = run_fake(a, tmp, "fork")
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    check(len(files) == 2, f"two files, got {len(files)}")
    parent = [f for f in files if any(e[3] == "gpu work" for e in f.nvtx_events())]
    child = [f for f in files if any(e[3] == "in child" for e in f.nvtx_events())]
    check(len(parent) == 1 and len(child) == 1, "one parent, one child file")
    if parent and child:
        check_fake_work(parent[0])
        c = child[0]
        check(c.info_values("cupti") == ["unavailable:forked child"], f"child: {c.info}")
        check(all(not v for v in c.gpu.values()), "the child writes none of the parent's records")
        check(c.finished, "the child's file is finished")


CASES = {
    "fake_exit": case_fake_exit,
    "fake_none": case_fake_none,
    "fake_drop": case_fake_drop,
    "fake_term": case_fake_term,
    "fake_fork": case_fake_fork,
    "fake_hang": case_fake_hang,
    "cuda_env": case_cuda_env,
    "cupti_unavailable": case_cupti_unavailable,
    "cupti_off": case_cupti_off,
    "cupti_default": case_cupti_default,
}


def case_fake_skew(a, tmp):
    """CUPTI's clock reading 2 ms behind the NVTX events': in the raw recording the first API
    call (3 ms long) starts before the push of the range that makes it; in the written trace
    every API call lies inside that range, moved by the smallest offset that makes it so."""
    raw = os.path.join(tmp, "raw")
    out = os.path.join(tmp, "t.json")
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti, FAKE_CUPTI_SKEW_NS="-2000000",
               FAKE_CUPTI_API_NS="3000000")
    p = subprocess.run([a.capture, "--no-summary", "--keep-raw", raw, "-o", out, "--", a.app,
                        "fake_gpu", "exit"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120, env=env)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    files = raw_file.read_dir(raw)
    check(len(files) == 1, f"one raw file, got {len(files)}")
    if not files:
        return
    f = files[0]
    work = [e for e in f.nvtx_events() if e[0] == 0 and e[3] == "gpu work"]
    apis = sorted(f.gpu["api"], key=lambda x: x["start"])
    check(len(work) == 1 and len(apis) == 3, f"one range, 3 API calls: {work} {apis}")
    if len(work) != 1 or len(apis) != 3:
        return
    raw_violated = apis[0]["start"] < work[0][1] < apis[0]["end"]
    with open(out) as fh:
        events = json.load(fh)["traceEvents"]
    ns = lambda us: round(us * 1000)  # noqa: E731
    ranges = [e for e in events if e.get("ph") == "X" and e.get("name") == "gpu work"]
    calls = sorted((e for e in events if e.get("cat") == "cuda_api"), key=lambda e: e["ts"])
    check(len(ranges) == 1 and len(calls) == 3, f"the range and 3 API calls in the JSON")
    if len(ranges) != 1 or len(calls) != 3:
        return
    # The stream the program named through NVTX: CUPTI's resource callback tied its handle to
    # CUPTI's stream id, so the GPU track carries the program's name.
    check("0x5000:7" in f.info_values("stream"),
          f"stream info record: {f.info_values('stream')}")
    kernels = [e for e in events if e.get("cat") == "cuda_kernel"]
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    check(kernels and all(tracks.get((k["pid"], k["tid"])) == "fake stream" for k in kernels),
          f"kernels on the track named 'fake stream': {set(tracks.get((k['pid'], k['tid'])) for k in kernels)}")
    r0, r1 = ns(ranges[0]["ts"]), ns(ranges[0]["ts"]) + ns(ranges[0]["dur"])
    spans = [(ns(c["ts"]), ns(c["ts"]) + ns(c["dur"])) for c in calls]
    check(all(r0 <= s and e <= r1 for s, e in spans),
          f"API calls inside the range {r0}..{r1}: {spans}")
    if raw_violated:
        check(0 <= spans[0][0] - r0 <= 1000,
              f"moved by the smallest offset: first call starts {spans[0][0] - r0} ns after the push")
    else:
        print("note: the machine stalled 2 ms between the push and the call; nothing to align")


CASES["fake_skew"] = case_fake_skew


def csv_section(text, title):
    """Rows (dicts) of the summary CSV section whose `# title` line starts with `title`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# " + title):
            body = []
            for l in lines[i + 1:]:
                if not l.strip() or l.startswith("#"):
                    break
                body.append(l)
            import csv
            return list(csv.DictReader(body))
    return None


def projection(stdout):
    """Range -> Total GPU Ops of the summary's nvtx_gpu_proj_sum table (CSV)."""
    return {r["Range"]: int(r["Total GPU Ops"])
            for r in csv_section(stdout, "NVTX GPU Projection Summary") or []}


def sqlite_projection(db):
    """Range -> GPU operations launched by a CUDA API call inside it on its thread, computed on
    the SQLite file the way nsys's nvtx_gpu_proj_sum relates them (API row by globalTid and
    time, GPU work by correlationId)."""
    import sqlite3
    con = sqlite3.connect(db)
    work = " UNION ALL ".join(f"SELECT correlationId FROM {t}" for t in (
        "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"))
    rows = con.execute(
        "SELECT coalesce(n.text, s.value), count(w.correlationId) FROM NVTX_EVENTS n "
        "LEFT JOIN StringIds s ON s.id = n.textId "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = n.globalTid "
        "AND r.start >= n.start AND r.end <= n.end "
        f"JOIN ({work}) w ON w.correlationId = r.correlationId "
        "WHERE n.eventType = 59 GROUP BY 1").fetchall()
    api = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    con.close()
    return dict(rows), api


DRIVER_RANGES = {"driver work": 4, "runtime shared id": 1, "runtime own id": 1}
SUMMARY_DRIVER_RANGES = {":" + k: v for k, v in DRIVER_RANGES.items()}  # "domain:name"


def case_fake_driver(a, tmp):
    """GPU work launched through the driver API (fake_cupti_driver): attributed to the range
    around its launching call by default; the runtime's own driver calls never count twice;
    work with no launching call is reported and kept."""
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti)
    have_sqlite = None
    for label, extra, run_env in (("default", [], {}), ("all", ["--cuda-api=all"], {}),
                                  ("off", [], {"NVTXPP_DRIVER_LAUNCHES": "off"})):
        raw = os.path.join(tmp, "raw-" + label)
        out = os.path.join(tmp, label + ".json")
        p = subprocess.run([a.capture, "--csv", "--keep-raw", raw, "-o", out] + extra +
                           ["--", a.app, "fake_gpu", "driver"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120,
                           env=dict(env, **run_env))
        print(label, p.stdout, p.stderr)
        check(p.returncode == 0, f"{label}: exit 0, got {p.returncode}")
        files = raw_file.read_dir(raw)
        check(len(files) == 1, f"{label}: one raw file")
        if not files:
            continue
        f = files[0]
        kinds = [(x["kind"], f.strings.get(x["name"])) for x in f.gpu["api"]]
        drivers = [n for k, n in kinds if k == 1]
        proj = projection(p.stdout)
        flows = 0
        with open(out) as fh:
            events = json.load(fh)["traceEvents"]
        flows = len([e for e in events if e.get("cat") == "cuda_flow" and e.get("ph") == "s"])
        listed = len([e for e in events if e.get("cat") == "cuda_api"])
        if label == "default":
            # The fake knows 8 driver functions by name; 5 launch GPU work (not
            # cuLaunchHostFunc, cuModuleLoadData, cuCtxSynchronize).
            check(f.info_values("driver_api") == ["launches:5"],
                  f"driver launch functions enabled by name: {f.info_values('driver_api')}")
            check(sorted(drivers) == sorted(["cuLaunchKernel"] * 4 + ["cuMemcpyHtoDAsync_v2",
                                                                    "cuMemsetD8Async"]),
                  f"the program's 4 driver calls and the runtime's 2 recorded: {drivers}")
            check(proj == SUMMARY_DRIVER_RANGES, f"summary projection {proj}")
            check(listed == 6, f"JSON lists the 2 runtime and 4 driver calls, not the runtime's "
                  f"own: {listed}")
            check(flows == 6, f"a launch arrow per launching call: {flows}")
            check("1 GPU operation(s) with no launching CUDA API call in the recording "
                  "(1 kernel(s), 0 copy(ies), 0 memset(s))" in p.stderr,
                  f"the stray kernel reported on stderr: {p.stderr}")
            check("gpu_unattributed=1" in p.stdout, "and in the summary's warnings")
            check(len([e for e in events if e.get("cat") == "cuda_kernel"]) == 5,
                  "every kernel kept in the trace, the stray one too")
            db = os.path.join(tmp, "default.sqlite")
            q = subprocess.run([a.capture, "--convert", raw, "-o", db, "--no-summary"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            have_sqlite = q.returncode == 0
            if have_sqlite:
                got, api = sqlite_projection(db)
                check(got == DRIVER_RANGES, f"SQLite projection {got}, want {DRIVER_RANGES}")
                check(api == 6, f"SQLite API rows: 2 runtime, 4 driver, got {api}")
            else:
                print("note: no SQLite output in this build")
        elif label == "all":
            check(f.info_values("driver_api") == ["all"], f"all: {f.info_values('driver_api')}")
            check(proj == SUMMARY_DRIVER_RANGES, f"all: projection not doubled by the runtime's own "
                  f"driver calls: {proj}")
            check(listed == 8, f"all: every driver call listed, the runtime's own too: {listed}")
            check(flows == 6, f"all: still one arrow per launching call: {flows}")
            check("gpu_unattributed=1" in p.stdout, "all: the stray kernel reported")
        else:
            # Driver launches not recorded (the default before driver launches were): the
            # program's driver work and the kernel that carries its inner call's id project
            # nowhere, and the run says so.
            check(f.info_values("driver_api") == ["off"], f"off: {f.info_values('driver_api')}")
            check(proj == {":runtime shared id": 1}, f"off: only the runtime launch: {proj}")
            check("6 GPU operation(s) with no launching CUDA API call in the recording "
                  "(4 kernel(s), 1 copy(ies), 1 memset(s))" in p.stderr, f"off: {p.stderr}")


CASES["fake_driver"] = case_fake_driver


# fake_graph_app.cpp's cases: (instances, kernels, memcpys, memsets) per "domain:name".
GRAPH_WANT = {
    ":layer": (3, 9, 0, 0), ":attention": (3, 6, 0, 0), ":mlp": (3, 3, 0, 0),  # the issue's
    ":outer": (2, 2, 2, 2), "dom2:build": (2, 2, 2, 2),  # graph API, 2 execs, 2 domains
    ":child_body": (3, 3, 0, 0), ":parent": (1, 1, 0, 0),  # child graph, 3 ways
    ":parent2": (1, 1, 0, 0), ":parent3": (1, 1, 0, 0),
    ":parent13": (1, 5, 0, 0), ":body13": (1, 3, 0, 0),  # CUDA 13's order, flattened nodes
    ":v1": (1, 1, 0, 0), ":v2": (1, 1, 0, 0), ":v3": (1, 1, 0, 0),  # cudaGraphExecUpdate
    ":worker": (1, 1, 0, 0),  # captured on another thread
}


def case_fake_graphs(a, tmp):
    """CUDA graphs through the fake CUPTI: every replayed node's work under the ranges open on
    the thread that created it (fake_graph_app.cpp), in the summary, the JSON and the SQLite."""
    raw = os.path.join(tmp, "raw")
    out = os.path.join(tmp, "t.json")
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti)
    p = subprocess.run([a.capture, "--csv", "--keep-raw", raw, "-o", out, "--", a.app],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       env=env)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    # Summary: one row per range that held nodes; none for ranges that held none.
    rows = csv_section(p.stdout, "NVTX Ranges in CUDA Graph Launches") or []
    got = {r["Range"]: (int(r["Instances"]), int(r["Kernels"]), int(r["Memcpys"]),
                        int(r["Memsets"])) for r in rows}
    check(got == GRAPH_WANT, f"graph range table {got}, want {GRAPH_WANT}")
    proj = csv_section(p.stdout, "NVTX GPU Projection Summary") or []
    check([r["Range"] for r in proj] == [":replay"],
          f"nvtx_gpu_proj_sum as nsys: :replay only, got {[r['Range'] for r in proj]}")
    # JSON: GPU-side ranges on the tracks where the kernels ran, nested as captured.
    with open(out) as fh:
        events = json.load(fh)["traceEvents"]
    ops = [e for e in events if e.get("cat") in ("cuda_kernel", "cuda_memcpy", "cuda_memset")]
    graph = [e for e in events if e.get("cat") == "nvtx_graph"]
    tracks = {e["tid"] for e in ops}
    check(graph and all(g["tid"] in tracks for g in graph), "graph ranges on GPU op tracks")
    names = {}
    for g in graph:
        key = g["args"]["domain"] + ":" + g["name"]
        names.setdefault(key, []).append(g)
    got = {k: (len(v), sum(g["args"]["kernels"] for g in v), sum(g["args"]["memcpys"] for g in v),
               sum(g["args"]["memsets"] for g in v)) for k, v in names.items()}
    check(got == GRAPH_WANT, f"JSON graph ranges {got}")
    ns = lambda us: round(us * 1000)  # noqa: E731
    span = lambda e: (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))  # noqa: E731
    for inner, outer in (("attention", "layer"), ("mlp", "layer"), ("build", "outer")):
        for i in names.get((":" if inner != "build" else "dom2:") + inner, []):
            o = [x for x in names.get(":" + outer, []) if x["args"]["launch"] == i["args"]["launch"]]
            check(len(o) == 1 and span(o[0])[0] <= span(i)[0] and span(i)[1] <= span(o[0])[1]
                  and o[0]["args"]["depth"] < i["args"]["depth"] and o[0]["tid"] == i["tid"],
                  f"{inner} inside {outer} in launch {i['args']['launch']}")
    # Each child_body instance inside the instance of one of the parents, in the same launch.
    for i in names.get(":child_body", []):
        o = [x for p in ("parent", "parent2", "parent3") for x in names.get(":" + p, [])
             if x["args"]["launch"] == i["args"]["launch"]]
        check(len(o) == 1 and span(o[0])[0] <= span(i)[0] and span(i)[1] <= span(o[0])[1]
              and o[0]["args"]["depth"] < i["args"]["depth"],
              f"child_body inside its parent in launch {i['args']['launch']}")
    outer_tracks = {g["tid"] for g in names.get(":outer", [])}
    check(len(outer_tracks) == 2, f"one graph's two executable graphs on two streams: {outer_tracks}")
    # Each launch's `layer` spans its 3 kernels exactly.
    for g in names.get(":layer", []):
        ks = [k for k in ops if k["args"]["correlation"] == g["args"]["correlation"]]
        check(len(ks) == 3 and span(g) == (min(span(k)[0] for k in ks), max(span(k)[1] for k in ks)),
              f"layer spans its launch's kernels: {g}")
    kernels = [e for e in ops if e.get("cat") == "cuda_kernel"]
    check(len(kernels) == 25 and all(k["args"].get("graph_node", 0) > 0 for k in kernels),
          "graph kernels carry their graph_node in the JSON")
    # The node captured with no range open: its kernel ran (4 kernels per launch of graph 11/12)
    # but belongs to no range.
    for corr in {g["args"]["correlation"] for g in names.get(":outer", [])}:
        n = len([k for k in ops if k["args"]["correlation"] == corr])
        check(n == 4, f"graph 11/12 launch {corr}: 4 nodes ran, got {n}")
    # SQLite: our table, joinable to NVTX_EVENTS; NVTX_EVENTS as without graphs.
    if subprocess.run([a.capture, "--convert", raw, "-o", os.path.join(tmp, "x.sqlite"),
                       "--summary-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE).returncode == 2:
        print("note: no SQLite output in this build")
        return
    db = os.path.join(tmp, "t.sqlite")
    q = subprocess.run([a.capture, "--convert", raw, "-o", db, "--no-summary"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(q.returncode == 0, f"--convert to SQLite: {q.stderr}")
    import sqlite3
    con = sqlite3.connect(db)
    joined = con.execute(
        "SELECT coalesce(d.text, '') || ':' || coalesce(n.text, s.value), g.text, count(*), "
        "sum(g.kernels), sum(g.memcpys), sum(g.memsets) "
        "FROM NVTXPP_GRAPH_RANGES g JOIN NVTX_EVENTS n ON n.globalTid = g.globalTid "
        "AND n.start = g.nvtxStart AND coalesce(n.domainId, 0) = g.domainId AND n.eventType = 59 "
        "LEFT JOIN StringIds s ON s.id = n.textId "
        "LEFT JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.domainId = n.domainId "
        "AND d.globalTid / 16777216 = n.globalTid / 16777216 "
        "GROUP BY 1").fetchall()
    got = {k: (c, kk, m, s) for k, text, c, kk, m, s in joined}
    check(got == GRAPH_WANT, f"SQLite join with NVTX_EVENTS: {got}")
    n_nvtx = con.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()[0]
    check(n_nvtx == 17, f"NVTX_EVENTS push/pop rows: the program's 17, got {n_nvtx}")
    nodes = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId IS NOT NULL"
                        ).fetchone()[0]
    check(nodes == 25, f"graphNodeId on the 25 graph kernels, got {nodes}")


CASES["fake_graphs"] = case_fake_graphs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--fake-cupti", required=True, help="the test double of libcupti")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        CASES[a.case](a, tmp)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
