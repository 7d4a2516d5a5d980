#!/usr/bin/env python3
"""Tests of `nvtxpp-capture top` (docs/top.md), as a person would use it: on a program with a
known split of each 20 ms step (top_app.cpp: A 60%, B 30%, C 10%, inside "step N"), attached by
PID, launched with `-- program`, and on a terminal: tmux runs it at 80x24 and capture-pane reads
the screen.

usage: top_tests.py CASE --capture PATH --app PATH(top_app)
The program says how far it got through files; every wait is for a condition (a file, a line, a
row on the screen) with a generous bound that only turns a hang into a failure, never a time
standing in for "it has started".
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flight_tests as ft  # noqa: E402  (check, wait_for, child_of, load, ranges, main)

check, wait_for = ft.check, ft.wait_for
SPLIT = {"A": 60.0, "B": 30.0, "C": 10.0, "step *": 100.0}
TOLERANCE = 3.0  # points


def start_app(a, tmp, args=None, extra=()):
    """The program under the flight recorder; returns (launcher, program pid, files)."""
    files = {k: os.path.join(tmp, k) for k in ("ready", "stop", "out", "t.json")}
    args = args or ["split", files["ready"], files["stop"], files["out"]]
    p = subprocess.Popen([a.capture, "--flight-recorder=16MB", "--no-summary", *extra,
                          "-o", files["t.json"], "--", a.app, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    prog = ft.child_of(p.pid)
    wait_for(lambda: os.path.exists(files["ready"]), "the program's first steps")
    return p, prog, files


def stop_app(p, files):
    open(files["stop"], "w").close()
    _, err = p.communicate(timeout=240)
    check(p.returncode == 0, f"the program ends well: {p.returncode} {err}")
    return err


def top(a, *args, timeout=240):
    return subprocess.run([a.capture, "top", *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


def parse_table(text):
    """Rows of a plain table (or a screen): {range: {total, self, calls, thread, line}}, in
    order, read by the column heads' places."""
    lines = text.splitlines()
    heads = [i for i, l in enumerate(lines) if l.lstrip().startswith("Total%")]
    if not heads:
        return {}, []
    head = lines[heads[-1]]
    at_range = head.index("Range")
    at_thread = head.find("Thread")
    rows, order = {}, []
    for line in lines[heads[-1] + 1:]:
        nums = line[:at_range].split()
        if len(nums) < 3 or not re.match(r"^[0-9.]+$", nums[0]):
            break
        name = line[at_range:].strip()
        name = name[:-len(" (open)")] if name.endswith(" (open)") else name
        rows[name] = {"total": float(nums[0]), "self": float(nums[1]), "calls": nums[2],
                      "thread": line[at_thread:at_range].strip() if at_thread >= 0 else "",
                      "line": line}
        order.append(name)
    return rows, order


def check_split(rows, what):
    for name, share in SPLIT.items():
        got = rows.get(name, {}).get("total")
        check(got is not None and abs(got - share) <= TOLERANCE,
              f"{what}: {name} Total% {got} within {TOLERANCE} points of {share}")
    if "A" in rows:
        check(abs(rows["A"]["self"] - rows["A"]["total"]) <= 0.5, f"{what}: A's self is its total")
    if "step *" in rows:
        check(rows["step *"]["self"] <= TOLERANCE, f"{what}: a step's own time is ~0: "
              f"{rows['step *']['self']}")


def json_rows(obj):
    return {r["name"]: {"total": r["total_pct"], "self": r["self_pct"], "row": r}
            for r in obj["rows"]}


# ---------------------------------------------------------------------------------------------


def case_top_once(a, tmp):
    """`top --once PID`: one plain table after one interval; the split reads right."""
    p, prog, files = start_app(a, tmp)
    t = top(a, "--once", "--interval=1s", prog)
    check(t.returncode == 0, f"exit 0: {t.returncode} {t.stderr}")
    rows, order = parse_table(t.stdout)
    check_split(rows, "--once")
    check(f"pid {prog}" in t.stdout and "GPU off" in t.stdout and "dropped 0" in t.stdout,
          f"the header: {t.stdout[:300]}")
    check(order and order[0] == "step *", f"by total: {order}")
    check(rows.get("A", {}).get("thread") == "main loop", f"the thread's name: {rows.get('A')}")
    check("step 1" not in rows, "numbered steps folded into one row")
    # Sorted by name, filtered, a row per thread, numbers kept apart.
    t = top(a, "--once", "--interval=200ms", "--sort=name", prog)
    check(parse_table(t.stdout)[1] == ["A", "B", "C", "step *"], f"--sort=name: {t.stdout}")
    t = top(a, "--once", "--interval=200ms", "--filter=B", prog)
    check(list(parse_table(t.stdout)[0]) == ["B"], f"--filter=B: {t.stdout}")
    t = top(a, "--once", "--interval=200ms", "--keep-numbers", "--rows=3", prog)
    rows, _ = parse_table(t.stdout)
    check(any(n.startswith("step ") and n != "step *" for n in rows) or
          "more row(s)" in t.stdout, f"--keep-numbers: the steps apart: {t.stdout}")
    check("more row(s)" in t.stdout and len(rows) == 3, f"--rows=3: the rest summed: {t.stdout}")
    # The launcher's pid reaches the same run.
    t = top(a, "--once", "--interval=200ms", p.pid)
    check(t.returncode == 0 and f"pid {prog}" in t.stdout, f"by the launcher's pid: {t.stdout}")
    stop_app(p, files)


def case_top_json(a, tmp):
    """`--json`: the same content as one JSON object a refresh."""
    p, prog, files = start_app(a, tmp)
    t = top(a, "--once", "--json", "--interval=1s", prog)
    check(t.returncode == 0, f"exit 0: {t.stderr}")
    lines = t.stdout.splitlines()
    check(len(lines) == 1, f"one object: {len(lines)} lines")
    obj = json.loads(lines[0])
    check(obj["pid"] == prog and not obj["ended"] and obj["gpu_detail"] == "off",
          f"the header's fields: {obj}")
    check_split(json_rows(obj), "--json")
    a_row = json_rows(obj).get("A", {}).get("row", {})
    check(abs(a_row.get("mean_ns", 0) - 12e6) < 1e6 and abs(a_row.get("p50_ns", 0) - 12e6) < 1e6,
          f"A's mean and p50 are 12 ms: {a_row}")
    check(45 <= a_row.get("calls_per_s", 0) <= 55, f"A 50 a second: {a_row}")
    # A stream: one object per refresh, until Ctrl-C (exit 0).
    s = subprocess.Popen([a.capture, "top", "--json", "--interval=200ms", str(prog)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = []
    wait_for(lambda: len(got) >= 3 or not got.append(s.stdout.readline()) and False,
             "three refreshes")
    os.kill(s.pid, signal.SIGINT)
    s.communicate(timeout=60)
    check(s.returncode == 0, f"Ctrl-C: exit 0, got {s.returncode}")
    objs = [json.loads(line) for line in got if line.strip()]
    check(len(objs) >= 3 and all(o["pid"] == prog for o in objs), f"objects: {len(objs)}")
    stop_app(p, files)


def case_top_launch(a, tmp):
    """`top -- program`: launched under the flight recorder, the final table when it ends, its
    exit status, its outputs as usual."""
    out = os.path.join(tmp, "l.json")
    t = subprocess.run([a.capture, "top", "--once", "--no-summary", "-o", out, "--", a.app,
                        "steps", "60", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=240)
    check(t.returncode == 3, f"the program's status: {t.returncode} {t.stderr}")
    rows, _ = parse_table(t.stdout)
    check_split(rows, "-- program --once")
    check(" ended " in t.stdout, f"the header says it ended: {t.stdout[:200]}")
    check("dump 1 (at exit)" in t.stderr, f"the launcher's dump as usual: {t.stderr}")
    dump = ft.load(os.path.join(tmp, "l.dump1.json"))
    check(len(ft.ranges(dump, "A")) == 60, "its trace has all 60 steps")
    # A stream of JSON objects, the last one when it ended.
    t = subprocess.run([a.capture, "top", "--json", "--interval=200ms", "--no-summary",
                        "-o", os.path.join(tmp, "m.json"), "--", a.app, "steps", "40"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    objs = [json.loads(line) for line in t.stdout.splitlines() if line.startswith("{")]
    check(t.returncode == 0 and objs and objs[-1]["ended"],
          f"exit 0, the last object ended: {t.returncode} {objs[-1:]}")
    if objs:
        check_split(json_rows(objs[-1]), "-- program --json, the end")
    # The program's death by a signal is top's; a program that cannot run: 127; bad options: 2.
    t = subprocess.run([a.capture, "top", "--once", "--no-summary", "-o",
                        os.path.join(tmp, "k.json"), "--", "sh", "-c", "kill -TERM $$"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    check(t.returncode == -signal.SIGTERM, f"killed by SIGTERM as the program: {t.returncode}")
    t = subprocess.run([a.capture, "top", "--once", "--", os.path.join(tmp, "no-such-program")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    check(t.returncode == 127 and "cannot run" in t.stderr, f"127: {t.returncode} {t.stderr}")
    marker = os.path.join(tmp, "ran")
    t = subprocess.run([a.capture, "top", "--once", "--flight-recorder=abc", "--", "touch",
                        marker], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=240)
    check(t.returncode == 2 and "--flight-recorder" in t.stderr and not os.path.exists(marker),
          f"a bad capture option: exit 2 before the program: {t.returncode} {t.stderr}")


def case_top_bad_input(a, tmp):
    """Bad usage, a PID that is not there, not recorded, another user's: exit 2, said."""
    for args, says in ((["abc"], "not a process id"), (["--sort=size", "1"], "--sort"),
                       (["--interval=5parsecs", "1"], "--interval"),
                       (["--window=50ms", "1"], "--window"), (["--filter=[a", "1"], "--filter"),
                       (["--rows=0", "1"], "--rows"), (["--frobnicate", "1"], "unknown option"),
                       (["1", "2"], "one PID"), (["--"], "no program")):
        t = top(a, *args)
        check(t.returncode == 2 and says in t.stderr, f"{args}: exit 2 saying {says!r}: "
              f"{t.returncode} {t.stderr}")
    t = top(a)
    check(t.returncode == 2 and "usage" in t.stderr, "no PID: the usage, exit 2")
    t = top(a, "--help")
    check(t.returncode == 0 and "nvtxpp-capture top" in t.stdout, "--help")
    gone = subprocess.Popen(["true"])
    gone.wait()
    t = top(a, "--once", gone.pid)
    check(t.returncode == 2 and "no process" in t.stderr, f"an ended pid: {t.stderr}")
    t = top(a, "--once", os.getpid())
    check(t.returncode == 2 and "no nvtxpp-capture --flight-recorder records" in t.stderr,
          f"a process not recorded: {t.stderr}")
    if os.geteuid() == 0:
        other = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: (os.setgid(65534),
                                                                      os.setuid(65534)))
        pid = other.pid
    else:
        other, pid = None, 1
    t = top(a, "--once", pid)
    check(t.returncode == 2 and "another user" in t.stderr, f"another user's: {t.stderr}")
    if other:
        other.kill()
        other.wait()


def case_top_exit_watched(a, tmp):
    """The program ends while top watches: the last table, ended, exit 0."""
    for mode in ([], ["--json"]):
        p, prog, files = start_app(a, tmp)
        s = subprocess.Popen([a.capture, "top", "--interval=200ms", *mode, str(prog)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = []
        wait_for(lambda: first.append(s.stdout.readline()) or
                 ("Range" in first[-1] or first[-1].startswith("{")), f"{mode}: a table")
        stop_app(p, files)
        rest, err = s.communicate(timeout=60)
        check(s.returncode == 0 and "ended" in err, f"{mode}: exit 0, says it ended: "
              f"{s.returncode} {err}")
        if mode:
            last = json.loads(rest.strip().splitlines()[-1])
            check(last["ended"], f"--json: the last object ended: {last}")
            check_split(json_rows(last), "--json at the end")
        else:
            tables = rest.split("nvtxpp-capture top  pid")
            check(" ended " in tables[-1], f"the last table ended: {tables[-1][:200]}")
            check_split(parse_table(tables[-1])[0], "plain at the end")
        for f in ("ready", "stop", "out"):
            os.remove(files[f])


def case_top_names(a, tmp):
    """100,000 distinct names and a 10,000-character one: top answers, rows bounded, the rest as
    (other), long names cut in the table."""
    files = {k: os.path.join(tmp, k) for k in ("ready", "stop")}
    p, prog, _ = start_app(a, tmp, ["names", "100000", files["ready"], files["stop"]],
                           extra=["--flight-recorder=64MB"])
    began = time.monotonic()
    # Over a second and a half: the steps that followed the names have rows of their own in the
    # slices after the names' (a slice that is full counts a name new to it as "(other)").
    t = top(a, "--once", "--json", "--rows=1000000", "--interval=1500ms", prog, timeout=120)
    took = time.monotonic() - began
    check(t.returncode == 0, f"exit 0: {t.stderr}")
    obj = json.loads(t.stdout)
    names = [r["name"] for r in obj["rows"]]
    # At most 4096 (name, thread) cells a second of the window (12 slices at most: the window's
    # 10, the current one, a partial one): well under the 100,000 names.
    check(len(names) <= 4096 * 12 + 8, f"rows bounded: {len(names)}")
    check("(other)" in names, "the rest counted as (other)")
    check(sum(r["calls"] for r in obj["rows"]) == obj["ranges"], "no range lost, only lumped")
    check({"A", "B", "C", "step *"} <= set(names), "the steady rows have rows: " + str(
        [(r["name"][:20], r["calls"], round(r["total_pct"], 1), r["open"]) for r in obj["rows"][:8]])
        + f" window {obj['window_s']} ranges {obj['ranges']}")
    check(took < 30, f"answers in time: {took:.1f} s")
    t = top(a, "--once", "--interval=200ms", prog)
    lines = t.stdout.splitlines()
    check(max(len(line) for line in lines) <= 160, "plain lines at most 160 columns")
    check(any("long name xxx" in line and "\u2026" in line for line in lines),
          f"the long name cut with …: {t.stdout[:600]}")
    check("more row(s)" in t.stdout, "the rows past 40 summed in one line")
    open(files["stop"], "w").close()
    p.communicate(timeout=240)


def trace_shape(path, steps):
    """What must hold of a split run's trace: `steps` steps, each with A, B, C inside, in order."""
    t = ft.load(path)
    events = sorted((e for e in t["traceEvents"] if e["ph"] == "X"),
                    key=lambda e: (e["ts"], -e["dur"]))
    shape = []
    for e in events:
        if e["name"].startswith("step "):
            shape.append([e["name"]])
        elif shape:
            shape[-1].append(e["name"])
    expect = [[f"step {i}", "A", "B", "C"] for i in range(1, steps + 1)]
    return shape == expect, len(shape)


def case_top_unchanged(a, tmp):
    """Attach, quit, attach again: the program's trace at its end is what an unwatched run's is:
    every step, with its three ranges, nothing more."""
    for watched in (False, True):
        sub = os.path.join(tmp, "watched" if watched else "alone")
        os.mkdir(sub)
        p, prog, files = start_app(a, sub)
        if watched:
            for _ in range(2):
                check(top(a, "--once", "--interval=200ms", prog).returncode == 0, "--once")
            s = subprocess.Popen([a.capture, "top", "--json", "--interval=100ms", str(prog)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            got = []
            wait_for(lambda: len(got) >= 2 or not got.append(s.stdout.readline()) and False,
                     "two refreshes")
            os.kill(s.pid, signal.SIGINT)
            s.communicate(timeout=60)
            check(top(a, "--once", "--interval=200ms", prog).returncode == 0, "attached again")
        stop_app(p, files)
        steps = int(open(files["out"]).read())
        same, n = trace_shape(os.path.join(sub, "t.dump1.json"), steps)
        check(same, f"{'watched' if watched else 'alone'}: {steps} steps, each A B C: {n} read")


def case_top_gpu(a, tmp):
    """GPU work under a range, through the test double of CUPTI (no GPU): CUPTI hands its
    records over at a dump's flush; top then shows the GPU time under the range that launched
    it, and GPU detail "full". (--app: capture_app; --fake-cupti: the double.)"""
    env = dict(os.environ, NVTXPP_CUPTI_PATH=a.fake_cupti,
               APP_READY=os.path.join(tmp, "ready"), APP_STOP=os.path.join(tmp, "stop"))
    p = subprocess.Popen([a.capture, "--flight-recorder=1MB", "--no-summary", "-o",
                          os.path.join(tmp, "g.json"), "--", a.app, "fake_gpu", "hold"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    prog = ft.child_of(p.pid)
    wait_for(lambda: os.path.exists(os.path.join(tmp, "ready")), "the program after its work")
    obj = json.loads(top(a, "--once", "--json", "--interval=200ms", prog).stdout)
    check(obj["gpu_detail"] == "full" and obj["gpu_stale"] and obj["gpu_ops"] == 0,
          f"CUPTI loaded, its records not handed over yet: stale: {obj}")
    d = ft.ctl(a, "dump", prog)  # CUPTI's records reach the ring
    check(d.returncode == 0, f"dump PID: {d.stderr}")
    obj = json.loads(top(a, "--once", "--json", "--interval=200ms", prog).stdout)
    rows = json_rows(obj)
    work = rows.get("gpu work", {}).get("row", {})
    check(obj["gpu_ops"] == 5 and not obj["gpu_stale"], f"3 kernels, a copy, a memset: {obj}")
        # The double's copy and memset (2 and 1 us) come with no launching call: in the window's
    # GPU total, under no range, as the trace model counts them.
    check(work.get("gpu_ns") == 15000 and obj["gpu_ns"] == 18000,
          f"the 3 kernels of 5 us under 'gpu work': {work} of {obj['gpu_ns']}")
    t = top(a, "--once", "--interval=200ms", prog)
    check("GPU%" in t.stdout and "GPU full" in t.stdout, f"the GPU column: {t.stdout}")
    open(os.path.join(tmp, "stop"), "w").close()
    p.communicate(timeout=240)
    check(p.returncode == 0, f"the program ends well: {p.returncode}")


# --- the terminal -------------------------------------------------------------------------------


class tmux:
    """A tmux server of our own (its socket in the test's directory), one window of a shell."""

    def __init__(self, tmp, width=80, height=24):
        sock = os.path.join(tmp, "tmux.sock")
        self.base = ["tmux", "-S", sock, "-f", "/dev/null"]
        # A test killed by its timeout runs no `finally`: this watchdog ends the server then.
        subprocess.Popen(["sh", "-c", f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; "
                          f"done; tmux -S '{sock}' kill-server 2>/dev/null"],
                         start_new_session=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        env = dict(os.environ, TERM="screen")
        subprocess.run(self.base + ["new-session", "-d", "-x", str(width), "-y", str(height),
                                    "-s", "t", "env PS1='$ ' bash --norc --noprofile -i"],
                       check=True, env=env)
        wait_for(lambda: self.screen().strip().endswith("$"), "the shell's prompt")

    def keys(self, *keys):
        subprocess.run(self.base + ["send-keys", "-t", "t", *keys], check=True)

    def line(self, text):
        self.keys("-l", text)
        self.keys("Enter")

    def screen(self):
        return subprocess.run(self.base + ["capture-pane", "-p", "-t", "t"],
                              stdout=subprocess.PIPE, text=True, check=True).stdout

    def resize(self, width, height):
        subprocess.run(self.base + ["resize-window", "-t", "t", "-x", str(width), "-y",
                                    str(height)], check=True)

    def wait(self, cond, what, bound_s=60):
        """Polls the screen until `cond(screen)` holds; the screen it held on."""
        seen = [""]
        ok = wait_for(lambda: cond(seen.__setitem__(0, self.screen()) or seen[0]), what, bound_s)
        if not ok:
            print(f"--- the screen while waiting for {what}:\n{seen[0]}", file=sys.stderr)
        return seen[0]

    def close(self):
        subprocess.run(self.base + ["kill-server"], stderr=subprocess.DEVNULL)


def rows_on(screen):
    return parse_table(screen)


def terminal_restored(term, tmp, what):
    """After top: the shell's prompt, no table, and the terminal's modes as the shell had them
    (canonical input, echo)."""
    check("Total%" not in term.screen(), f"{what}: the table is gone")
    out = os.path.join(tmp, "stty.txt")
    if os.path.exists(out):
        os.remove(out)
    term.line(f"stty -a > {out}")
    wait_for(lambda: os.path.exists(out) and os.path.getsize(out) > 0, f"{what}: stty -a")
    modes = open(out).read().split()
    check("icanon" in modes and "echo" in modes and "-icanon" not in modes,
          f"{what}: icanon and echo as before: {' '.join(modes)}")
    term.line("clear")
    term.wait(lambda s: s.strip() == "$", f"{what}: cleared")


def case_top_screen(a, tmp):
    """tmux runs `top PID` at 80x24: the split on screen, keys sort, filter, pause and quit, a
    resize redraws, the terminal is restored; `top -- program` on the screen too."""
    if shutil.which("tmux") is None:
        check(False, "tmux is needed (scripts/install-deps.sh installs it)")
        return
    p, prog, files = start_app(a, tmp)
    term = tmux(tmp)
    try:
        term.line(f"{a.capture} top {prog}")
        s = term.wait(lambda s: len(rows_on(s)[0]) >= 4, "the four rows on the screen")
        print("--- the screen at 80x24:\n" + s)
        check_split(rows_on(s)[0], "the screen")
        lines = s.splitlines()
        check(len(lines) <= 24 and max(map(len, lines)) <= 80, "fits 80x24")
        check(lines[0].startswith(f"nvtxpp-capture top  pid {prog}"), f"header: {lines[0]}")
        check(lines[-1].lstrip().startswith("q:quit"), f"the keys at the bottom: {lines[-1]}")
        for key, sort, first in (("n", "name", "A"), ("p", "p99", "step *"), ("s", "self", "A"),
                                 ("c", "calls", None), ("t", "total", "step *")):
            term.keys(key)
            s = term.wait(lambda s: f"sort {sort}" in s and
                          (first is None or rows_on(s)[1][:1] == [first]), f"sort {sort}")
        order = rows_on(term.wait(lambda s: "sort total" in s, "by total"))[1]
        check(order[:1] == ["step *"], f"by total: {order}")
        term.keys("n")
        s = term.wait(lambda s: rows_on(s)[1] == ["A", "B", "C", "step *"], "by name")
        term.keys("/")
        term.wait(lambda s: "filter (Enter" in s, "the filter's prompt")
        term.keys("-l", "B")
        term.keys("Enter")
        term.wait(lambda s: rows_on(s)[1] == ["B"] and "filter B" in s, "filtered to B")
        term.keys("/")
        term.keys("BSpace")
        term.keys("Enter")
        term.wait(lambda s: len(rows_on(s)[1]) == 4 and "filter B" not in s, "the filter dropped")
        term.keys("h")
        term.wait(lambda s: rows_on(s)[0].get("A", {}).get("thread") == "main loop",
                  "a row per thread, named")
        term.keys("h")
        term.keys("Space")
        term.wait(lambda s: "PAUSED" in s, "paused")
        term.keys("Space")
        term.wait(lambda s: "PAUSED" not in s, "going on")
        term.resize(100, 30)
        s = term.wait(lambda s: len(s.splitlines()) == 30 and
                      s.splitlines()[-1].lstrip().startswith("q:quit") and "Thread" in s,
                      "redrawn at 100x30 (the Thread column has room)")
        term.resize(80, 24)
        s = term.wait(lambda s: len(s.splitlines()) == 24 and
                      s.splitlines()[-1].lstrip().startswith("q:quit") and "Thread" not in s,
                      "redrawn at 80x24")
        term.keys("q")
        term.wait(lambda s: "Total%" not in s and s.rstrip().endswith("$"), "q: the prompt")
        terminal_restored(term, tmp, "q")
        # Ctrl-C restores it too; then attach a third time.
        term.line(f"{a.capture} top {prog}")
        term.wait(lambda s: len(rows_on(s)[0]) >= 4, "attached again")
        term.keys("C-c")
        term.wait(lambda s: "Total%" not in s and s.rstrip().endswith("$"), "Ctrl-C: the prompt")
        terminal_restored(term, tmp, "Ctrl-C")
        stop_app(p, files)
        # `top -- program` on the screen: its output to a file, the final table, its status.
        log = os.path.join(tmp, "prog.log")
        out = os.path.join(tmp, "s.json")
        term.line(f"{a.capture} top --log={log} --no-summary -o {out} -- {a.app} steps 80 5; "
                  f"echo status=$?")
        term.wait(lambda s: len(rows_on(s)[0]) >= 4 and "q:quit" in s, "the launched program")
        s = term.wait(lambda s: "status=5" in s, "the program's end", bound_s=120)
        check(" ended " in s, f"the final table printed: {s}")
        check_split(rows_on(s)[0], "the launched program's final table")
        check("dump 1 (at exit)" in open(log).read(), "the launcher's output went to --log")
    finally:
        term.close()
        if p.poll() is None:
            open(files["stop"], "w").close()
            p.communicate(timeout=240)


if __name__ == "__main__":
    sys.exit(ft.main(globals(), ["--fake-cupti"] if "top_gpu" in sys.argv else []))
