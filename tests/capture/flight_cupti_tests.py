#!/usr/bin/env python3
"""The flight recorder's CUDA half without a GPU, through the test double of CUPTI
(fake_cupti.cpp): the CUDA API call a thread is inside, in the stacks reports, and the GPU
records CUPTI still holds, in a live dump.

usage: flight_cupti_tests.py CASE --capture PATH --app PATH(capture_app) --fake-cupti PATH
The program says how far it got through files ($APP_READY) and waits for the test's word
($APP_STOP); the tests wait for conditions, never for time. Exit status 0 = pass.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flight_tests as ft  # noqa: E402  (check, wait_for, child_of, ctl, load, failures)

check, wait_for = ft.check, ft.wait_for


def launch(a, tmp, mode, extra, out, env_extra=None):
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti,
               APP_READY=os.path.join(tmp, "ready"), APP_STOP=os.path.join(tmp, "stop"))
    env.update(env_extra or {})
    cmd = [a.capture] + extra + ["-o", out, "--", a.app, "fake_gpu", mode]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def stop(tmp, p):
    open(os.path.join(tmp, "stop"), "w").close()
    out, err = p.communicate(timeout=240)
    print(out, err)
    check(p.returncode == 0, f"exit 0, got {p.returncode}: {err}")
    return out, err


def thread_block(text, name):
    """The lines of the report under thread `name` (up to the next thread or process)."""
    m = re.search(r'^  thread \d+ "' + re.escape(name) + r'"\n((?:    .*\n)*)', text, re.M)
    return m.group(1) if m else ""


def seconds(line, kind):
    m = re.search(r"\(" + kind + r" ([0-9.]+) s\)", line)
    return float(m.group(1)) if m else -1.0


def case_flight_api_call(a, tmp):
    """A thread stuck in cudaStreamSynchronize (and the driver call under it) inside "step" >
    "sync": the hang report and `stacks PID` name the call, nested under the ranges, with how
    long it has waited; a thread inside a call with no range open is listed too."""
    check_call_reports(a, tmp, [], {})


def case_flight_api_call_detached(a, tmp):
    """The same with CUPTI detached (--cuda-sample with no period in the run: detached from the
    start): the calls that wait are still followed, and the call that does not wait, entered
    first (cudaGetDevice), is not."""
    check_call_reports(a, tmp, ["--cuda-sample=5ms/1h"], {"APP_WAIT_DETACH": "1"})


def check_call_reports(a, tmp, extra, env):
    out = os.path.join(tmp, "t.json")
    stacks = os.path.join(tmp, "t.stacks.txt")
    p = launch(a, tmp, "in_call", ["--flight-recorder=1MB", "--no-summary", "--hang-timeout=1s"] +
               extra, out, env)
    wait_for(lambda: os.path.exists(os.path.join(tmp, "ready")), "the program inside its call")
    wait_for(lambda: os.path.exists(stacks), "the hang's stacks report")
    s = ft.ctl(a, "stacks", ft.child_of(p.pid))
    check(s.returncode == 0, f"stacks PID: exit 0, got {s.returncode}: {s.stderr}")
    out_text, _ = stop(tmp, p)
    check("api callbacks enabled" in out_text, "the injection library enabled the API domains")
    text = open(stacks).read()
    print(text, "\n--- stacks PID ---\n", s.stdout)
    for what, report in (("hang report", text), ("stacks PID", s.stdout)):
        lines = [l for l in report.splitlines() if l.strip()]
        names = [l.strip().split("  (")[0] for l in lines]
        try:
            i = names.index("step")
            chain = names[i:i + 4]
        except ValueError:
            chain = []
        check(chain == ["step", "sync", "in cudaStreamSynchronize", "in cuStreamSynchronize"],
              f"{what}: the call under the ranges, outermost first, version suffix gone: {chain}")
        by_name = {l.strip().split("  (")[0]: l for l in lines}
        sync_open = seconds(by_name.get("sync", ""), "open")
        call_for = seconds(by_name.get("in cudaStreamSynchronize", ""), "for")
        check(0 < call_for <= sync_open,
              f"{what}: the call's duration, within the range it was made in: {call_for} "
              f"<= {sync_open}")
        indent = [len(l) - len(l.lstrip()) for l in lines if l.strip().split("  (")[0] in
                  ("sync", "in cudaStreamSynchronize", "in cuStreamSynchronize")]
        check(indent == sorted(indent) and len(set(indent)) == 3,
              f"{what}: each one level deeper: {indent}")
        loader = thread_block(report, "loader")
        check("(no open range)" in loader and "in cudaMemcpy  (for " in loader,
              f"{what}: the thread in a call with no range: {loader!r}")


def case_flight_api_call_off(a, tmp):
    """NVTXPP_API_CALLS=off: the report has the ranges and no call (the table is not kept)."""
    out = os.path.join(tmp, "t.json")
    stacks = os.path.join(tmp, "t.stacks.txt")
    p = launch(a, tmp, "in_call", ["--flight-recorder=1MB", "--no-summary", "--hang-timeout=1s"],
               out, {"NVTXPP_API_CALLS": "off"})
    wait_for(lambda: os.path.exists(stacks), "the hang's stacks report")
    out_text, _ = stop(tmp, p)
    text = open(stacks).read()
    print(text)
    check("api callbacks not enabled" in out_text, "no API domain enabled")
    check("sync  (open " in text and "in cuda" not in text, f"ranges, no call: {text}")


def case_flight_live_gpu(a, tmp):
    """Work whose records CUPTI still holds (the fake hands them over only on a flush): a dump
    on request has them, and the dump at exit has them once, not twice."""
    out = os.path.join(tmp, "l.json")
    p = launch(a, tmp, "hold", ["--flight-recorder=1MB", "--no-summary"], out)
    wait_for(lambda: os.path.exists(os.path.join(tmp, "ready")), "the program after its work")
    d = ft.ctl(a, "dump", ft.child_of(p.pid))
    check(d.returncode == 0, f"dump PID: exit 0, got {d.returncode}: {d.stderr}")
    stop(tmp, p)
    for name in ("l.dump1.json", "l.dump2.json"):
        path = os.path.join(tmp, name)
        if not check(os.path.exists(path), f"{name} written: {os.listdir(tmp)}"):
            continue
        events = ft.load(path)["traceEvents"]
        count = {c: len([e for e in events if e.get("cat") == c and e.get("ph") == "X"])
                 for c in ("cuda_kernel", "cuda_memcpy", "cuda_memset")}
        check(count == {"cuda_kernel": 3, "cuda_memcpy": 1, "cuda_memset": 1},
              f"{name}: the 3 kernels, the copy and the memset, once each: {count}")


def case_flight_live_busy(a, tmp):
    """A GPU that is never idle (a kernel still running behind the finished work): a live dump
    still holds the finished work (a flush of complete buffers only would hand over none), the
    running kernel is in no dump, and the summary says so."""
    out = os.path.join(tmp, "b.json")
    p = launch(a, tmp, "hold", ["--flight-recorder=1MB"], out, {"FAKE_CUPTI_RUNNING": "1"})
    wait_for(lambda: os.path.exists(os.path.join(tmp, "ready")), "the program after its work")
    prog = ft.child_of(p.pid)
    s = ft.ctl(a, "stacks", prog)
    check(s.returncode == 0, f"stacks PID: {s.stderr}")
    d = ft.ctl(a, "dump", prog)
    check(d.returncode == 0, f"dump PID: exit 0, got {d.returncode}: {d.stderr}")
    out_text, err = stop(tmp, p)
    for name in ("b.dump1.json", "b.dump2.json"):
        path = os.path.join(tmp, name)
        if not check(os.path.exists(path), f"{name} written: {os.listdir(tmp)}"):
            continue
        events = ft.load(path)["traceEvents"]
        kernels = [e["name"] for e in events if e.get("cat") == "cuda_kernel" and e.get("ph") == "X"]
        check(len(kernels) == 3 and not any("running" in k for k in kernels),
              f"{name}: the 3 finished kernels, not the running one: {kernels}")
    check("still running at a live dump" in out_text + err, f"the summary says so: {err}")


def case_flight_trigger_gpu(a, tmp):
    """GPU work and a trigger's dump written late: the window ends 10 ms after the slow step, so
    the dump holds the work launched by then (also a kernel that started later, behind a queue)
    and none launched after, although CUPTI hands the records over only at the dump."""
    out = os.path.join(tmp, "g.json")
    # Every kernel starts 30 ms after its launch: the slow step's starts past the window's end.
    p = launch(a, tmp, "steps", ["--flight-recorder=4MB", "--no-summary",
                                 "--trigger=Train step *>150ms"], out,
               {"FAKE_CUPTI_KERNEL_DELAY_NS": "30000000"})
    dump1 = os.path.join(tmp, "g.dump1.json")
    wait_for(lambda: os.path.exists(dump1), "the trigger's dump")
    _, err = stop(tmp, p)
    events = ft.load(dump1)["traceEvents"]
    slow = [e for e in events if e.get("ph") == "X" and e.get("name") == "Train step 5"]
    if not check(len(slow) == 1, f"the slow step in dump 1: {slow}"):
        return
    end = slow[0]["ts"] + slow[0]["dur"]
    kernels = [e for e in events if e.get("cat") == "cuda_kernel" and e.get("ph") == "X"]
    calls = [e for e in events if e.get("cat") == "cuda_api" and e.get("ph") == "X"]
    check(len(kernels) == 5 and len(calls) == 5,
          f"the kernels and launches of steps 1 to 5, no later one: {len(kernels)} kernel(s), "
          f"{len(calls)} call(s), kernels from {[round((k['ts'] - end) / 1000, 1) for k in kernels]}"
          f" ms after the slow step's end")
    check(any(k["ts"] > end + 10000 for k in kernels),
          "the slow step's kernel, started past the window's end, is in")
    check(all(c["ts"] <= end + 10000 for c in calls), "no launch after the window's end")
    check(os.path.exists(os.path.join(tmp, "g.dump2.json")), f"and the dump at exit: {err}")


if __name__ == "__main__":
    sys.exit(ft.main(globals(), ["--fake-cupti"]))
