#!/usr/bin/env python3
"""CUPTI detached between periods and outside capture windows (inprocess/cuda/cupti_session.hpp;
docs/leave-it-on-gpu.md), without a GPU: the fake CUPTI (fake_cupti.cpp) forgets everything at
cuptiFinalize, as CUPTI does, counts the records a finalize would lose and a finalize made
outside a CUDA call's exit, and says so at exit (FAKE_CUPTI_STATS=1).

usage: detach_tests.py CASE --capture PATH --app PATH(capture_app) --fake-cupti PATH
The program (capture_app fake_gpu detach) runs with the capture window closed at its start:
CUPTI detaches there; it waits for that as a condition (making CUDA calls, whose exit the detach
needs), launches outside any window, then in three windows "window" of two launches each (the
first names the stream the fake created while detached), each followed by the detach and one
more launch outside. Exit status 0 = pass.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flight_tests as ft  # noqa: E402  (check, load, main)
import raw_file  # noqa: E402

check = ft.check
WINDOWS = ["--capture-range=nvtx", "--nvtx-capture=window", "--capture-range-end=repeat"]


def run(a, tmp, mode, env_extra=None, extra=()):
    out = os.path.join(tmp, "d.json")
    raw = os.path.join(tmp, "raw")
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti, FAKE_CUPTI_STATS="1")
    env.update(env_extra or {})
    cmd = [a.capture, "--no-summary", "--keep-raw", raw] + WINDOWS + list(extra) + \
        ["-o", out, "--", a.app, "fake_gpu", mode]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=120)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"exit 0, got {p.returncode}")
    stats = {}
    m = re.search(r"fake_cupti: (.*)", p.stderr)
    if check(m is not None, "the fake CUPTI's counts at exit"):
        stats = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
    files = raw_file.read_dir(raw) if os.path.isdir(raw) else []
    return p, stats, ft.load(out)["traceEvents"] if os.path.exists(out) else [], files


def of(events, cat):
    return [e for e in events if e.get("cat") == cat and e.get("ph") == "X"]


def check_windows(events, what):
    """Each window holds its two launches: a call and a kernel each, once; nothing outside."""
    windows = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                     if e.get("ph") == "X" and e.get("name") == "window")
    calls = of(events, "cuda_api")
    kernels = of(events, "cuda_kernel")
    check(len(windows) == 3, f"{what}: three windows: {windows}")
    per = [sum(1 for c in calls if s <= c["ts"] <= e) for s, e in windows]
    check(per == [2, 2, 2] and len(calls) == 6,
          f"{what}: two calls in each window, none outside (none recorded while detached, the "
          f"clock registered again at each attach): {per}, {len(calls)} in all")
    corr = [k["args"]["correlation"] for k in kernels]
    check(len(kernels) == 6 and len(set(corr)) == 6 and
          set(corr) == {c["args"]["correlation"] for c in calls},
          f"{what}: one kernel per call, none lost or doubled across the switches: {sorted(corr)}")
    return kernels


def case_detach_windows(a, tmp):
    """Four detaches (the start, each window's end) at a CUDA call's exit, none losing a record;
    CUPTI attached again for each window; the stream created while detached keeps its name; the
    program ends detached and CUPTI is not attached again to be flushed."""
    # (A CUPTI whose correlation ids start again at each attach: no kernel tied to an older
    # call of the same id.)
    p, stats, events, files = run(a, tmp, "detach", {"FAKE_CUPTI_RESET_IDS": "1"})
    check("detached 4" in p.stdout, f"the program saw four detaches: {p.stdout}")
    check(stats.get("finalizes") == 4 and stats.get("lost") == 0 and
          stats.get("outside_exit") == 0,
          f"four finalizes, each at a call's exit, with every record flushed first: {stats}")
    check(stats.get("flushes_detached") == 0,
          f"no flush while detached (the end did not attach CUPTI again): {stats}")
    kernels = check_windows(events, "windows")
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    names = {tracks.get((k["pid"], k["tid"])) for k in kernels}
    check(names == {"fake stream"},
          f"the stream created while detached keeps its NVTX name in every window: {names}")
    if check(len(files) == 1, f"one raw file: {len(files)}"):
        f = files[0]
        check(f.info_values("cupti_detach")[:1] and
              f.info_values("cupti_detach")[0].startswith("4:3:"),
              f"the recording says: 4 detaches, 3 attaches: {f.info_values('cupti_detach')}")
        check(len(f.info_values("stream")) >= 4,
              f"stream creation followed while detached: {f.info_values('stream')}")
        check(f.finished, "the file is finished")


def case_detach_stale(a, tmp):
    """A CUPTI whose first subscriber after a detach is stale (the buffers then refused as not
    initialised, as the H100 once refused an attach in PyTorch's CUDA graphs mode): the attach
    subscribes anew and every window still records, with nothing said."""
    p, stats, events, files = run(a, tmp, "detach", {"FAKE_CUPTI_STALE_SUBSCRIBER": "1"})
    check("could not be attached" not in p.stderr, "no failed attach said")
    check_windows(events, "stale subscriber")


def case_detach_fork(a, tmp):
    """A fork while detached: the child says CUPTI is its parent's and records none of it; the
    parent's later windows still record."""
    p, stats, events, files = run(a, tmp, "detach_fork")
    check_windows(events, "parent")
    child = [f for f in files if f.info_values("cupti") == ["unavailable:forked child"]]
    if check(len(files) == 2 and len(child) == 1, f"a parent and a child file: {len(files)}"):
        check(all(not v for v in child[0].gpu.values()), "no GPU record in the child")
        check(child[0].finished, "the child's file is finished")
    check(stats.get("lost") == 0 and stats.get("outside_exit") == 0, f"parent: {stats}")


def case_detach_refused(a, tmp):
    """A CUPTI that refuses to detach: said once (stderr and the recording), and each window
    still holds its work, the kinds switched as before the detach existed."""
    p, stats, events, files = run(a, tmp, "detach", {"FAKE_CUPTI_NO_DETACH": "1"})
    said = p.stderr.count("CUPTI does not detach in this process")
    check(said == 1, f"said once on stderr: {said}")
    check_windows(events, "refused")
    check(stats.get("finalizes") == 0, f"no finalize: {stats}")
    if files:
        v = files[0].info_values("cupti_detach")
        check(len(v) == 1 and v[0].startswith("unavailable:cuptiFinalize"),
              f"the recording says why, once: {v}")


def case_detach_off(a, tmp):
    """NVTXPP_CUPTI_DETACH=off: the kinds switched, CUPTI never detached (the comparison the
    cost rounds make); the windows hold the same work."""
    out = os.path.join(tmp, "o.json")
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti, FAKE_CUPTI_STATS="1",
               NVTXPP_CUPTI_DETACH="off", APP_STEPS="20", APP_STEP_US="10000")
    q = subprocess.run([a.capture, "--no-summary", "--cuda-sample=20ms/100ms", "-o", out, "--",
                        a.app, "fake_gpu", "sample_steps"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    check(q.returncode == 0, f"exit 0: {q.stderr}")
    check("finalizes=0" in q.stderr, f"never detached: {q.stderr}")
    check(len(of(ft.load(out)["traceEvents"], "cuda_kernel")) >= 1, "kernels in the periods")


def case_detach_driver(a, tmp):
    """Work launched through the driver API (as Numba and cuBLASLt launch), sampled: every
    detach finds CUPTI flushed (the launch functions' records switched off with the kinds, from
    the first detach at the start on), and the periods after a detach still record the driver
    calls (enabled one by one once CUDA has started, CUPTI records none: the capture enables them
    as the DRIVER kind less the others)."""
    out = os.path.join(tmp, "v.json")
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti, FAKE_CUPTI_STATS="1", APP_DRIVER="1",
               APP_STEPS="40", APP_STEP_US="10000")
    q = subprocess.run([a.capture, "--no-summary", "--cuda-sample=20ms/100ms", "-o", out, "--",
                        a.app, "fake_gpu", "sample_steps"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    print(q.stderr)
    check(q.returncode == 0, f"exit 0: {q.returncode}")
    m = re.search(r"fake_cupti: (.*)", q.stderr)
    stats = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())} if m else {}
    check(stats.get("finalizes", 0) >= 2 and stats.get("lost") == 0 and
          stats.get("outside_exit") == 0,
          f"detached at the start and after periods, nothing left unflushed: {stats}")
    events = ft.load(out)["traceEvents"] if os.path.exists(out) else []
    calls = of(events, "cuda_api")
    check(len(calls) >= 8 and all(c["name"].startswith("cu") for c in calls),
          f"the driver calls of the periods after a detach: {len(calls)}")


if __name__ == "__main__":
    sys.exit(ft.main(globals(), ["--fake-cupti"]))
