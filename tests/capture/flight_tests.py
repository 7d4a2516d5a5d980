#!/usr/bin/env python3
"""Tests of nvtxpp-capture's flight recorder (--flight-recorder; docs/leave-it-on.md).

usage: flight_tests.py CASE --capture PATH --app PATH [--mpirun PATH]
Each CASE is one ctest test. The program (flight_app.cpp) says how far it got through files;
the tests wait for those conditions (with a generous bound that only turns a hang into a
failure), never for a time.
"""
import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def wait_for(cond, what, bound_s=120):
    """Polls `cond` until it holds; a failure (not a pass) after bound_s."""
    end = time.monotonic() + bound_s
    while not cond():
        if time.monotonic() > end:
            check(False, f"waited for {what}")
            return False
        time.sleep(0.01)
    return True


def run(a, args, extra, out, env=None, timeout=240):
    cmd = [a.capture] + extra + ["-o", out, "--", a.app] + args
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, env=env)


def start(a, args, extra, out):
    cmd = [a.capture] + extra + ["-o", out, "--", a.app] + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def child_of(pid):
    """The program the launcher `pid` started."""
    path = f"/proc/{pid}/task/{pid}/children"
    found = []
    wait_for(lambda: bool(found.append(open(path).read().split()) or found[-1]),
             "the launcher's child")
    return int(found[-1][0])


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def ranges(trace, name):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e.get("name") == name]


def payloads(trace, name="step"):
    return sorted(e["args"]["payload"] for e in ranges(trace, name))


def ctl(a, verb, pid):
    return subprocess.run([a.capture, verb, str(pid)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=240)


# ---------------------------------------------------------------------------------------------


def case_flight_exit(a, tmp):
    """Dump at the normal end, named .dump1 before the extension; nothing else written."""
    out = os.path.join(tmp, "t.json")
    p = run(a, ["steps", "5000"], ["--flight-recorder=4MB", "--no-summary"], out)
    check(p.returncode == 0, f"exit 0: {p.returncode} {p.stderr}")
    check("dump 1 (at exit)" in p.stderr, f"says so on stderr: {p.stderr}")
    check(not os.path.exists(out), "no -o file itself")
    t = load(os.path.join(tmp, "t.dump1.json"))
    check(payloads(t) == list(range(5000)), "every step in a window larger than the run")
    check(len(ranges(t, "work")) == 5000, "and every inner range")
    # The program's status passes through; --dump-on-exit=no writes nothing at a normal end.
    out2 = os.path.join(tmp, "n.json")
    p = run(a, ["steps", "10", "7"], ["--flight-recorder=1MB", "--dump-on-exit=no"], out2)
    check(p.returncode == 7, f"the program's status: {p.returncode}")
    check(not [f for f in os.listdir(tmp) if f.startswith("n.")], f"no dump: {os.listdir(tmp)}")
    # %n places the number; SQLite in nsys's layout.
    p = run(a, ["steps", "300"], ["--flight-recorder=1MB", "--no-summary"],
            os.path.join(tmp, "s%n.sqlite"))
    check(p.returncode == 0, f"sqlite run: {p.stderr}")
    db = sqlite3.connect(os.path.join(tmp, "s1.sqlite"))
    n = db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()[0]
    check(n == 600, f"600 push/pop rows in s1.sqlite: {n}")


def case_flight_window(a, tmp):
    """The window is bounded: by size (the oldest steps are gone, the newest kept), by duration."""
    out = os.path.join(tmp, "t.json")
    p = run(a, ["steps", "400000"], ["--flight-recorder=1MB", "--no-summary"], out)
    check(p.returncode == 0, p.stderr)
    got = payloads(load(os.path.join(tmp, "t.dump1.json")))
    check(got and got[-1] == 399999, f"the last step is in: {got[-1:]}")
    check(got and got[0] > 0 and len(got) < 400000, f"the first ones are not: {got[:1]}, {len(got)}")
    check(got == list(range(got[0], got[0] + len(got))), "the window has no hole")
    # 300 steps of about 2 ms, a window of 100 ms: the last steps only (plus up to one flush).
    out = os.path.join(tmp, "d.json")
    p = run(a, ["slow", "300", "", "2000"], ["--flight-recorder=100ms", "--no-summary"], out)
    check(p.returncode == 0, p.stderr)
    t = load(os.path.join(tmp, "d.dump1.json"))
    got = payloads(t)
    check(got and got[-1] == 299, f"the last step is in: {got[-1:]}")
    steps = ranges(t, "step")
    span_ms = (max(e["ts"] + e["dur"] for e in steps) - min(e["ts"] for e in steps)) / 1000
    # At least the last 100 ms (less the one step cut at its start), at most one flush more.
    check(80 <= span_ms <= 300 and len(got) < 300, f"the last 100 ms: {span_ms} ms, {len(got)}")


def case_flight_sigkill(a, tmp):
    """SIGKILL mid-run: the launcher still dumps the program's last window."""
    out = os.path.join(tmp, "t.json")
    ready = os.path.join(tmp, "ready")
    p = start(a, ["spin", ready], ["--flight-recorder=2MB", "--no-summary"], out)
    prog = child_of(p.pid)
    wait_for(lambda: os.path.exists(ready), "20,000 steps")
    # A request that returns once the program has put its partly filled blocks in the ring (as
    # it does every 100 ms anyway): steps past 20,000 are then in the ring, and nothing but the
    # ring can bring them to the dump after SIGKILL.
    check(ctl(a, "stacks", prog).returncode == 0, "stacks PID answers")
    os.kill(prog, signal.SIGKILL)
    _, err = p.communicate(timeout=240)
    check(p.returncode == -signal.SIGKILL, f"dies of the same signal: {p.returncode}")
    check("dump 1 (program killed by signal 9)" in err, f"says so: {err}")
    t = load(os.path.join(tmp, "t.dump1.json"))
    got = payloads(t)
    check(got and got[-1] > 20000, f"steps after READY are in: {got[-1:]}")
    check(got == list(range(got[0], got[0] + len(got))), "no hole in the window")


def case_flight_crash(a, tmp):
    """abort() inside a range: the window up to the crash, then the program dies as it would."""
    out = os.path.join(tmp, "t.json")
    p = run(a, ["crash"], ["--flight-recorder=1MB", "--no-summary"], out)
    check(p.returncode == -signal.SIGABRT, f"SIGABRT passes through: {p.returncode}")
    t = load(os.path.join(tmp, "t.dump1.json"))
    check(payloads(t)[-1:] == [49999], "the last step before the crash")
    crashing = ranges(t, "crashing")
    check(len(crashing) == 1 and crashing[0]["args"].get("unterminated"),
          f"the range it crashed in, unterminated: {crashing}")


def case_flight_dump(a, tmp):
    """`nvtxpp-capture dump PID` (the program's or the launcher's) while threads keep recording."""
    out = os.path.join(tmp, "t.json")
    ready, stop = os.path.join(tmp, "ready"), os.path.join(tmp, "stop")
    p = start(a, ["threads", ready, stop, "3"], ["--flight-recorder=8MB", "--no-summary"], out)
    prog = child_of(p.pid)
    wait_for(lambda: os.path.exists(ready), "every thread warm")
    d = ctl(a, "dump", prog)
    check(d.returncode == 0 and "dump 1" in d.stdout, f"dump PROGRAM: {d.returncode} {d.stdout}")
    d = ctl(a, "dump", p.pid)
    check(d.returncode == 0 and "dump 2" in d.stdout, f"dump LAUNCHER: {d.returncode} {d.stdout}")
    s = ctl(a, "stacks", prog)
    check(s.returncode == 0 and '"worker 0"' in s.stdout, f"stacks PROGRAM: {s.stdout}")
    check(os.path.exists(os.path.join(tmp, "t.dump1.json")), "dump 1 exists while it runs")
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    check(p.returncode == 0, f"exit 0: {err}")
    for n in (1, 2):
        t = load(os.path.join(tmp, f"t.dump{n}.json"))
        names = {e["args"]["name"] for e in t["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "thread_name"}
        check({"worker 0", "worker 1", "worker 2"} <= names, f"dump {n}: all threads: {names}")
        tids = {e["tid"] for e in ranges(t, "step")}
        check(len(tids) == 3, f"dump {n}: steps of the three threads: {len(tids)}")
    check(os.path.exists(os.path.join(tmp, "t.dump3.json")), "dump 3 at exit")
    # No recorder: exit 2, saying so.
    d = ctl(a, "dump", 1)
    check(d.returncode == 2 and "no nvtxpp-capture" in d.stderr, f"dump 1: {d.stderr}")
    s = ctl(a, "stacks", os.getpid())
    check(s.returncode == 2, f"stacks of a process not recorded: {s.returncode}")


def case_flight_dump_idle_thread(a, tmp):
    """A thread that recorded a little, then nothing while another floods the ring many times
    over: a dump (or stacks request) still holds its latest records, because the program hands
    over every thread's current block at each request, also one it handed over before."""
    out = os.path.join(tmp, "i.json")
    p = start(a, ["idle_flood", tmp, "2000000"], ["--flight-recorder=1MB", "--no-summary",
                                                  "--dump-on-exit=no"], out)
    prog = child_of(p.pid)
    wait_for(lambda: os.path.exists(os.path.join(tmp, "idle")), "the idle thread's ranges")
    # Its block reaches the ring now (the request; answered once the launcher has registered,
    # which may come after the program's first ranges), then the flood passes over it.
    wait_for(lambda: ctl(a, "stacks", prog).returncode == 0, "stacks PID answers")
    open(os.path.join(tmp, "go"), "w").close()
    wait_for(lambda: os.path.exists(os.path.join(tmp, "ready")), "the flood")
    d = ctl(a, "dump", prog)
    check(d.returncode == 0, f"dump PID: {d.stderr}")
    s = ctl(a, "stacks", prog)
    open(os.path.join(tmp, "stop"), "w").close()
    _, err = p.communicate(timeout=240)
    check(p.returncode == 0, f"exit 0: {err}")
    t = load(os.path.join(tmp, "i.dump1.json"))
    check(len(ranges(t, "flood")) > 1000, "the flood's last ranges are in the dump")
    check(len(ranges(t, "idle work")) == 10, f"the idle thread's ranges are in the dump: "
          f"{len(ranges(t, 'idle work'))}")
    check('"idle"' in s.stdout, f"and in the stacks report: {s.stdout}")


def case_flight_trigger(a, tmp):
    """'step>3x' fires once, on the one slow instance among hundreds of noisy ones."""
    out = os.path.join(tmp, "t.json")
    # 2 ms steps, the slow one 100 ms: a 20x trigger is not fooled by a busy machine's preemptions.
    p = run(a, ["slow", "400", "250", "2000", "50"],
            ["--flight-recorder=4MB", "--no-summary", "--trigger=step>20x",
             "--trigger=step>1s", "--trigger=never@nowhere>2x"], out)
    check(p.returncode == 0, p.stderr)
    fired = [l for l in p.stderr.splitlines() if "(trigger " in l]
    check(len(fired) == 1, f"one trigger dump: {fired}")
    check("'step>20x'" in p.stderr and '"step"' in p.stderr, f"names the trigger: {p.stderr}")
    t = load(os.path.join(tmp, "t.dump1.json"))
    slow = [e for e in ranges(t, "step") if e["args"]["payload"] == 250]
    check(len(slow) == 1 and slow[0]["dur"] > 80000, f"the slow instance is in dump 1: {slow}")
    check(payloads(t)[0] == 0, "with the window before it")
    check(os.path.exists(os.path.join(tmp, "t.dump2.json")), "and the dump at exit")
    check("never@nowhere>2x" in p.stderr and "never ended" in p.stderr,
          f"a trigger on a range that never occurs is said at the end: {p.stderr}")


def trigger_latency_ms(stderr):
    """How late the trigger's dump was written, as its line says ("... N ms after the instance
    ended"), or None."""
    m = re.search(r"(\d+) ms after the instance ended", stderr)
    return int(m.group(1)) if m else None


def case_flight_trigger_moment(a, tmp):
    """A program that goes on working after its slow step, on a machine with no idle core: the
    trigger's dump holds the window up to the slow step's end and 10 ms after it, not what the
    program did until the dump was written; the dump at exit holds the later steps."""
    out = os.path.join(tmp, "b.json")
    stop = os.path.join(tmp, "stop")
    # 5 ms steps, step 30 takes 300 ms: an absolute bound that no preemption reaches.
    p = start(a, ["busy_after", stop, "30", "5000", "300000", "2"],
              ["--flight-recorder=16MB", "--no-summary", "--trigger=Train step *>150ms"], out)
    dump1 = os.path.join(tmp, "b.dump1.json")
    wait_for(lambda: os.path.exists(dump1), "the trigger's dump")
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    print(err)
    check(p.returncode == 0, f"exit 0: {p.returncode}")
    fired = [l for l in err.splitlines() if "(trigger " in l]
    check(len(fired) == 1 and '"Train step 30"' in fired[0], f"one firing, on step 30: {fired}")
    latency = trigger_latency_ms(err)
    check(latency is not None, f"the dump's line says how late it came: {fired}")
    print(f"trigger-to-dump latency: {latency} ms")
    t = load(dump1)
    steps = [e for e in t["traceEvents"] if e["ph"] == "X"]
    slow = [e for e in steps if e["name"] == "Train step 30"]
    if not check(len(slow) == 1 and slow[0]["dur"] > 250000 and
                 not slow[0]["args"].get("unterminated"), f"the slow step, whole: {slow}"):
        return
    end = slow[0]["ts"] + slow[0]["dur"]
    last = max(e["ts"] + e["dur"] for e in steps)
    # 10 ms after the slow step's end, and a microsecond for the clock's rounding.
    check(last <= end + 10001, f"nothing later than 10 ms after the slow step: "
          f"{(last - end) / 1000:.3f} ms after it (the dump came {latency} ms after it)")
    later = [e for e in steps if e["ts"] > end + 10001]
    check(not later, f"no range that began after the window's end: {later[:3]}")
    cut = [e for e in steps if e["args"].get("unterminated")]
    check(all(e["ts"] + e["dur"] == last for e in cut),
          f"a range open at the window's end is cut there: {cut}")
    check(len(ranges(t, "Train step 1")) == 1, "with the steps before it")
    t2 = load(os.path.join(tmp, "b.dump2.json"))
    check(max(e["ts"] + e["dur"] for e in t2["traceEvents"] if e["ph"] == "X") > end + 10001,
          "the dump at exit holds what came later")
    check("no longer reaches back" not in err, f"no note of a missed instance: {fired}")
    # A window shorter than the slow step: the instance began before it, so it is not in the
    # dump, and the line says so (as when the ring wraps past it before the dump).
    stop = os.path.join(tmp, "stop2")
    p = start(a, ["busy_after", stop, "30", "5000", "300000", "0"],
              ["--flight-recorder=100ms", "--no-summary", "--dump-on-exit=no",
               "--trigger=Train step *>150ms"], os.path.join(tmp, "s.json"))
    short = os.path.join(tmp, "s.dump1.json")
    wait_for(lambda: os.path.exists(short), "the short window's trigger dump")
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    check("the window no longer reaches back to the instance's start, so the instance is not in "
          "it: a larger --flight-recorder LIMIT keeps more" in err, f"said: {err}")
    check(not ranges(load(short), "Train step 30"), "the instance is not in that dump")


def case_flight_trigger_exit_repeat(a, tmp):
    """A trigger's dump written after the program ended (its end came within the 10 ms after
    the slow step) holds the window the dump at exit would hold: that one is not written again,
    the line says so, and the summary of the window is printed all the same."""
    for attempt in range(3):
        out = os.path.join(tmp, f"r{attempt}.json")
        stop = os.path.join(tmp, f"stop{attempt}")
        p = start(a, ["child_slow", stop, "12", "5000", "300000"],
                  ["--flight-recorder=4MB", "--trigger=Train step *>150ms"], out)
        dump1 = os.path.join(tmp, f"r{attempt}.dump1.json")
        wait_for(lambda: os.path.exists(dump1), "the trigger's dump")
        open(stop, "w").close()
        stdout, err = p.communicate(timeout=240)
        print(err)
        check(p.returncode == 0, f"exit 0: {p.returncode}")
        dump2 = os.path.join(tmp, f"r{attempt}.dump2.json")
        if os.path.exists(dump2):
            # Written twice: right only when the child ended after the trigger's window (a
            # preempted exit); then its "child" range ends later in the dump at exit.
            t1, t2 = load(dump1), load(dump2)
            slow = ranges(t1, "Train step 12")
            child = ranges(t2, "child")
            late = slow and child and child[0]["ts"] + child[0]["dur"] > (
                slow[0]["ts"] + slow[0]["dur"] + 10000)
            if check(late and open(dump1).read() != open(dump2).read(),
                     f"attempt {attempt}: the same window written twice: {err}"):
                print(f"attempt {attempt}: the child ended after the window; again")
                continue
            return
        check(re.search(r"no dump \(at exit\): the window is the one dump 1 holds, byte for "
                        r"byte \(.*r" + str(attempt) + r"\.dump1\.json\); not written again",
                        err) is not None, f"says so instead: {err}")
        check("NVTX Range Summary" in stdout, f"the summary all the same: {stdout[:300]}")
        t = load(dump1)
        check(len(ranges(t, "Train step 12")) == 1 and len(ranges(t, "child")) == 1,
              "dump 1 holds the slow step and the child's whole life")
        return
    check(False, "three attempts: the child never ended within 10 ms of its slow step")


def case_flight_trigger_pattern(a, tmp):
    """Numbered ranges ("Train step 1" ... "Train step 30", 40 ms each, step 25 twenty times as
    long): 'Train step *>3x' keeps one median over all of them and fires once, on step 25,
    naming it; a literal trigger on one of the names works as before; a pattern that matches no
    range is said at the end. (A busy machine would have to stall a 40 ms step by 80 ms to fire
    the pattern on another step.)"""
    out = os.path.join(tmp, "p.json")
    p = run(a, ["numbered", "30", "25", "40000", "20"],
            ["--flight-recorder=4MB", "--no-summary", "--trigger=Train step *>3x",
             "--trigger=Train step 25>400ms", "--trigger=Train step 7>2s",
             "--trigger=Layer *@*>2x", "--trigger-cooldown=0", "--dump-on-exit=no"], out)
    check(p.returncode == 0, p.stderr)
    fired = [l for l in p.stderr.splitlines() if "(trigger " in l]
    check(len(fired) == 2, f"two trigger dumps (the pattern's, the literal's): {fired}")
    check(len(fired) == 2 and "'Train step *>3x': \"Train step 25\"" in fired[0]
          and "dump 1 " in fired[0], f"the pattern names the instance: {fired[:1]}")
    check(len(fired) == 2 and "'Train step 25>400ms': \"Train step 25\"" in fired[1],
          f"the literal trigger: {fired[1:]}")
    check(re.search(r"of its 24 earlier instance\(s\)", fired[0] if fired else "") is not None,
          f"one median over the 24 numbered steps before it: {fired[:1]}")
    t = load(os.path.join(tmp, "p.dump1.json"))
    slow = ranges(t, "Train step 25")
    check(len(slow) == 1 and slow[0]["dur"] > 600000, f"the slow step is in dump 1: {slow}")
    check(len(ranges(t, "Train step 1")) == 1, f"with the steps before it")
    check("no range matching 'Layer *' ended" in p.stderr,
          f"a pattern no range matched is said at the end: {p.stderr}")
    check("Train step 7>2s" not in p.stderr, f"a trigger that saw its range is not: {p.stderr}")


def case_flight_trigger_started(a, tmp):
    """Start/end ranges (started on one thread, ended on another) are measured as push/pop
    ranges are: 'step>20x' fires once, on the slow one."""
    out = os.path.join(tmp, "s.json")
    p = run(a, ["slow", "400", "250", "2000", "50", "started"],
            ["--flight-recorder=4MB", "--no-summary", "--trigger=step>20x"], out)
    check(p.returncode == 0, p.stderr)
    fired = [l for l in p.stderr.splitlines() if "(trigger " in l]
    check(len(fired) == 1 and '"step"' in fired[0], f"one trigger dump: {fired}")
    t = load(os.path.join(tmp, "s.dump1.json"))
    # Start/end ranges are async events in JSON: a "b" (with the payload) and an "e" by id.
    ev = [e for e in t["traceEvents"] if e.get("name") == "step"]
    ends = {e["id"]: e["ts"] for e in ev if e["ph"] == "e"}
    slow = [ends[e["id"]] - e["ts"] for e in ev
            if e["ph"] == "b" and e["args"].get("payload") == 250 and e["id"] in ends]
    check(len(slow) == 1 and slow[0] > 80000, f"the slow instance is in dump 1 (us): {slow}")


def case_flight_hang_started(a, tmp):
    """A program inside a start/end range only: the hang report lists it apart from the threads'
    stacks, with how long it has been open and the thread that started it."""
    out = os.path.join(tmp, "h.json")
    stacks = os.path.join(tmp, "h.stacks.txt")
    ready, stop = os.path.join(tmp, "ready"), os.path.join(tmp, "stop")
    p = start(a, ["started_hang", ready, stop], ["--flight-recorder=1MB", "--no-summary",
                                                  "--hang-timeout=500ms"], out)
    prog = child_of(p.pid)
    wait_for(lambda: os.path.exists(stacks), "the stacks report")
    open(stop, "w").close()
    p.communicate(timeout=240)
    text = open(stacks).read()
    print(text)
    check(re.search(r"^  start/end ranges\n    epoch  \(open [0-9.]+ s, started by thread "
                    + str(prog) + r"\)$", text, re.M) is not None,
          f"the start/end range, apart, with its thread: {text}")
    lone = os.path.join(tmp, "h.rank0.stacks.txt")
    with open(lone, "w") as f:
        f.write(text.replace("# nvtxpp-capture stacks", "# nvtxpp-capture stacks: rank 0", 1))
    g = subprocess.run([a.capture, "stacks", lone], stdout=subprocess.PIPE, text=True)
    check("rank 0: epoch (start/end)" in g.stdout, f"stacks FILE groups by it: {g.stdout}")


def case_flight_cooldown(a, tmp):
    """A storm of slow instances: the cool-down and --trigger-max bound the dumps."""
    args = ["slow", "400", "100,150,200,250", "2000", "50"]
    out = os.path.join(tmp, "c.json")
    p = run(a, args, ["--flight-recorder=4MB", "--no-summary", "--trigger=step>20x",
                      "--trigger-cooldown=1h", "--dump-on-exit=no"], out)
    fired = [l for l in p.stderr.splitlines() if "(trigger " in l]
    check(len(fired) == 1, f"one dump in the cool-down: {fired}")
    check("3 trigger firing(s) wrote no dump (cool-down)" in p.stderr, f"3 in the cool-down: "
          f"{[l for l in p.stderr.splitlines() if 'no dump' in l]}")
    out = os.path.join(tmp, "m.json")
    p = run(a, args, ["--flight-recorder=4MB", "--no-summary", "--trigger=step>20x",
                      "--trigger-cooldown=0", "--trigger-max=2", "--dump-on-exit=no"], out)
    fired = [l for l in p.stderr.splitlines() if "(trigger " in l]
    check(len(fired) == 2, f"--trigger-max=2: {fired}")
    check("2 trigger firing(s) wrote no dump (--trigger-max reached)" in p.stderr,
          f"2 past the maximum: {[l for l in p.stderr.splitlines() if 'no dump' in l]}")
    check(sorted(f for f in os.listdir(tmp) if f.startswith("m.")) ==
          ["m.dump1.json", "m.dump2.json"], f"{os.listdir(tmp)}")


def case_flight_hang(a, tmp):
    """A deadlocked program: NAME.stacks.txt names each thread and the ranges it is inside."""
    out = os.path.join(tmp, "t.json")
    stacks = os.path.join(tmp, "t.stacks.txt")
    p = start(a, ["deadlock"], ["--flight-recorder=1MB", "--no-summary",
                                "--hang-timeout=500ms"], out)
    prog = child_of(p.pid)
    wait_for(lambda: os.path.exists(stacks), "the stacks report")
    wait_for(lambda: os.path.exists(os.path.join(tmp, "t.dump1.json")), "the hang's dump")
    s = ctl(a, "stacks", prog)
    check(s.returncode == 0 and '"worker A"' in s.stdout, f"stacks PID: {s.stdout}")
    os.kill(prog, signal.SIGKILL)
    _, err = p.communicate(timeout=240)
    text = open(stacks).read()
    print(text)
    for thread, outer in (("worker A", "update A"), ("worker B", "update B")):
        block = text.split(f'"{thread}"')[1].split("thread")[0] if f'"{thread}"' in text else ""
        check(outer in block and "take second lock" in block and
              block.index(outer) < block.index("take second lock"),
              f"{thread}: {outer} > take second lock, outermost first: {block!r}")
    check("main" in text and "join" in text, "the main thread's ranges")
    check("(open " in text, "with how long each has been open")
    check("dump 1 (hang)" in err, f"the hang's dump is said: {err}")
    load(os.path.join(tmp, "t.dump1.json"))


def case_flight_mpirun(a, tmp):
    """mpirun -np 4 with rank 3 stuck elsewhere: the cross-rank stacks name it."""
    if not a.mpirun:
        print("mpirun not installed: skipped")
        return
    stop = os.path.join(tmp, "stop")
    cmd = [a.mpirun, "--oversubscribe", "-np", "4"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [a.capture, "--flight-recorder=1MB", "--hang-timeout=500ms", "--no-summary", "-o",
            os.path.join(tmp, "t.json"), "--", a.app, "rank_stuck", stop, "3"]
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    files = [os.path.join(tmp, f"t.rank{r}.stacks.txt") for r in range(4)]
    wait_for(lambda: all(os.path.exists(f) and os.path.getsize(f) > 0 for f in files),
             "four stacks reports")
    g = subprocess.run([a.capture, "stacks"] + files, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    print(g.stdout)
    check(g.returncode == 0, g.stderr)
    check("ranks 0-2: step > allreduce" in g.stdout and "rank 3: step > forward" in g.stdout,
          f"groups the ranks: {g.stdout}")
    check("rank 3 differs" in g.stdout, f"names the rank that differs: {g.stdout}")
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    check(p.returncode == 0, f"mpirun exits 0: {err}")


def case_flight_bad_input(a, tmp):
    """Malformed options: exit 2 before the program starts, naming the option."""
    marker = os.path.join(tmp, "ran")
    for opts, name in ((["--flight-recorder=abc"], "--flight-recorder"),
                       (["--flight-recorder=0s"], "--flight-recorder"),
                       (["--flight-recorder=10XB"], "--flight-recorder"),
                       (["--flight-recorder=1TB"], "--flight-recorder: unknown size unit 'TB' in "
                        "'1TB' (a size takes B, KB, MB, GB, KiB, MiB, GiB)\n"),
                       (["--flight-recorder=5d"], "--flight-recorder: unknown unit 'd' in '5d'"),
                       (["--flight-recorder=1MB", "--trigger=step"], "--trigger"),
                       (["--flight-recorder=1MB", "--trigger=step>"], "--trigger"),
                       (["--flight-recorder=1MB", "--trigger=>3x"], "--trigger"),
                       (["--flight-recorder=1MB", "--trigger=step>1x"], "--trigger"),
                       (["--flight-recorder=1MB", "--trigger=step>5parsecs"], "--trigger"),
                       (["--flight-recorder=1MB", "--trigger=Layer [0-9>2x"],
                        "--trigger 'Layer [0-9>2x': pattern 'Layer [0-9': the '[' at position 7 "
                        "has no closing ']'"),
                       (["--flight-recorder=1MB", "--trigger=x@[z-a]>2x"], "is reversed"),
                       (["--flight-recorder=1MB", "--hang-timeout=soon"], "--hang-timeout"),
                       (["--flight-recorder=1MB", "--trigger-max=-1"], "--trigger-max"),
                       (["--flight-recorder=1MB", "--dump-on-exit=maybe"], "--dump-on-exit"),
                       (["--trigger=step>3x"], "--flight-recorder")):
        p = subprocess.run([a.capture] + opts + ["-o", os.path.join(tmp, "x.json"), "--",
                                                  a.app, "touch", marker],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 2 and name in p.stderr, f"{opts}: exit 2 naming {name}: "
              f"{p.returncode} {p.stderr}")
        check(not os.path.exists(marker), f"{opts}: the program did not start")
    # A dump that cannot be written says so, keeps the window for the next dump (here --convert).
    out = os.path.join(tmp, "f.json")
    env = dict(os.environ, NVTXPP_CAPTURE_FAIL_WRITE_AFTER="1000")
    p = run(a, ["steps", "2000"], ["--flight-recorder=1MB", "--no-summary"], out, env=env)
    check(p.returncode == 3, f"exit 3 when the dump fails: {p.returncode}")
    check("could not be written" in p.stderr and "stays in the ring" in p.stderr, p.stderr)
    check(not os.path.exists(os.path.join(tmp, "f.dump1.json")), "no partial dump left")
    kept = [l.split("kept in ")[1].split(";")[0] for l in p.stderr.splitlines() if "kept in" in l]
    check(len(kept) == 1, f"names the kept recording: {p.stderr}")
    if kept:
        c = subprocess.run([a.capture, "--convert", kept[0], "-o", os.path.join(tmp, "c.json"),
                            "--no-summary"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        check(c.returncode == 0, c.stderr)
        check(payloads(load(os.path.join(tmp, "c.json"))) == list(range(2000)),
              "--convert writes the window later")
    # The rings of a kept recording may live in /dev/shm (named on stderr): ours to remove.
    for line in p.stderr.splitlines():
        if "rings are in " in line:
            shutil.rmtree(line.split("rings are in ")[1].split(" (linked")[0], ignore_errors=True)


def case_flight_stacks_files(a, tmp):
    """`stacks FILE...` groups ranks by stack; a file that is no report: exit 2."""
    def report(rank, inner):
        return (f"# nvtxpp-capture stacks: rank {rank} (last range opened or closed 5.000 s ago)\n"
                f"process {100 + rank}: ./train\n  thread {100 + rank} \"main\"\n"
                f"    step  (open 5.100 s)\n      {inner}  (open 5.000 s)\n"
                f"  thread {200 + rank}\n    (no open range)\n")
    files = []
    for r in range(8):
        path = os.path.join(tmp, f"t.rank{r}.stacks.txt")
        with open(path, "w") as f:
            f.write(report(r, "forward" if r == 7 else "allreduce"))
        files.append(path)
    g = subprocess.run([a.capture, "stacks"] + files, stdout=subprocess.PIPE, text=True)
    check(g.returncode == 0, "exit 0")
    check(g.stdout.splitlines()[0] == "ranks 0-6: step > allreduce; rank 7: step > forward",
          f"one line: {g.stdout}")
    bad = os.path.join(tmp, "bad.txt")
    open(bad, "w").write("hello\n")
    g = subprocess.run([a.capture, "stacks", bad], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(g.returncode == 2, f"not a report: exit 2, got {g.returncode}")


def main(cases=None, options=()):
    """Runs `case_CASE` of `cases` (a module's globals; this module's by default), with the
    command line's --capture, --app, --mpirun and the required `options`."""
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--mpirun", default="")
    for o in options:
        ap.add_argument(o, required=True)
    a = ap.parse_args()
    fn = (cases if cases is not None else globals()).get("case_" + a.case)
    if fn is None:
        print("unknown case", a.case, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        fn(a, tmp)
    if failures:
        print(f"{len(failures)} failure(s) in {a.case}", file=sys.stderr)
        return 1
    print(f"{a.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
