#!/usr/bin/env python3
"""nvtxpp-capture on a machine other users share (docs/leave-it-on.md, "Security and files"):
the flight recorder's request directory trusts only its user, files are never made through a
planted link, and a killed run leaves nothing behind.

usage: shared_machine_tests.py CASE --capture PATH --app PATH(flight_app)
Cases that need a second user run the launcher as `nobody` (uid 65534) and play the other user
as root; without root they check what one user can (a directory of the wrong mode, a symlink)
and say what they skipped. The tests wait for conditions, never for time.
"""
import os
import pwd
import signal
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flight_tests as ft  # noqa: E402  (check, wait_for, child_of, ctl, load, failures)

check, wait_for = ft.check, ft.wait_for
NOBODY = 65534


def is_root():
    return os.geteuid() == 0


def as_user(uid):
    """A preexec_fn that becomes `uid` (its own group too), for the 'victim' launcher."""
    def become():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    return become


def victim_env(tmp):
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["TMPDIR"] = tmp
    env["HOME"] = tmp
    return env


def shared_tmp(tmp):
    """A test directory the victim (nobody) can write in, as /tmp is."""
    os.chmod(tmp, 0o1777)
    return tmp


def next_pids(n=300):
    with open("/proc/sys/kernel/ns_last_pid") as f:
        last = int(f.read())
    return range(last + 1, last + 1 + n)


def plant(dirpath, target):
    """The attack of the issue: a link per upcoming pid's `.launcher.tmp` (and `.launcher`)."""
    for pid in next_pids():
        for name in (f"{pid}.launcher.tmp", f"{pid}.launcher"):
            try:
                os.symlink(target, os.path.join(dirpath, name))
            except FileExistsError:
                pass


def ring_dirs(prog):
    """NVTXPP_CAPTURE_DIR and NVTXPP_FLIGHT_DIR of the program (its environment)."""
    with open(f"/proc/{prog}/environ", "rb") as f:
        env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    return (env[b"NVTXPP_CAPTURE_DIR"].decode(), env.get(b"NVTXPP_FLIGHT_DIR", b"").decode())


def named_rings(d):
    return [f for f in os.listdir(d) if f.endswith(".ring") or f.endswith(".calls")] \
        if d and os.path.isdir(d) else []


# ---------------------------------------------------------------------------------------------


def case_shared_planted_dir(a, tmp):
    """A request directory prepared by another user is refused, and nothing outside is written."""
    if not is_root():
        print("skipped: needs root to play a second user")
        return
    shared_tmp(tmp)
    victim_file = os.path.join(tmp, "victim.txt")
    with open(victim_file, "w") as f:
        f.write("precious\n")
    os.chown(victim_file, NOBODY, NOBODY)
    control = f"/tmp/nvtxpp-capture-{NOBODY}"
    out = os.path.join(tmp, "t.json")
    cmd = [a.capture, "--flight-recorder=1MB", "--no-summary", "-o", out, "--", a.app, "touch",
           os.path.join(tmp, "ran")]

    def attempt(prepare, want):
        subprocess.run(["rm", "-rf", control])
        prepare()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=victim_env(tmp), preexec_fn=as_user(NOBODY), timeout=120)
        check(p.returncode == 2, f"{want}: exit 2, got {p.returncode}: {p.stderr}")
        check(control in p.stderr and want in p.stderr, f"names {control} and '{want}': {p.stderr}")
        check(not os.path.exists(os.path.join(tmp, "ran")), f"{want}: the program did not run")
        check(open(victim_file).read() == "precious\n", f"{want}: the victim's file is untouched")

    def others_dir():  # the other user's (root's), open to all, links per upcoming pid
        os.mkdir(control)
        os.chmod(control, 0o777)
        plant(control, victim_file)
    attempt(others_dir, "owned by uid 0")

    def open_dir():  # the victim's own uid, but writable by all
        os.mkdir(control)
        os.chown(control, NOBODY, NOBODY)
        os.chmod(control, 0o777)
    attempt(open_dir, "mode is 0777")

    elsewhere = os.path.join(tmp, "elsewhere")

    def link_dir():  # a link to a directory of the victim's
        os.mkdir(elsewhere)
        os.chown(elsewhere, NOBODY, NOBODY)
        os.chmod(elsewhere, 0o700)
        os.symlink(elsewhere, control)
    attempt(link_dir, "symbolic link")
    check(os.listdir(elsewhere) == [], "nothing written where the link points")
    subprocess.run(["rm", "-rf", control])


def case_shared_planted_files(a, tmp):
    """In the user's own directory, links planted (by root here) per upcoming pid are replaced,
    never followed; a request file of another uid is refused; dump/stacks of another user's
    process exit 2."""
    if not is_root():
        print("skipped: needs root to play a second user")
        return
    shared_tmp(tmp)
    victim_file = os.path.join(tmp, "victim.txt")
    with open(victim_file, "w") as f:
        f.write("precious\n")
    os.chown(victim_file, NOBODY, NOBODY)
    control = f"/tmp/nvtxpp-capture-{NOBODY}"
    subprocess.run(["rm", "-rf", control])
    os.mkdir(control, 0o700)
    os.chown(control, NOBODY, NOBODY)
    plant(control, victim_file)
    out = os.path.join(tmp, "t.json")
    ready, stop = os.path.join(tmp, "ready"), os.path.join(tmp, "stop")
    p = subprocess.Popen([a.capture, "--flight-recorder=2MB", "--no-summary", "-o", out, "--",
                          a.app, "threads", ready, stop, "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=victim_env(tmp), preexec_fn=as_user(NOBODY))
    prog = ft.child_of(p.pid)
    wait_for(lambda: os.path.exists(ready), "the threads warm")
    entry = os.path.join(control, f"{p.pid}.launcher")
    wait_for(lambda: os.path.exists(entry) and not os.path.islink(entry), "the launcher's entry")
    st = os.lstat(entry)
    check(stat.S_ISREG(st.st_mode) and st.st_uid == NOBODY and stat.S_IMODE(st.st_mode) == 0o600,
          f"a new regular file of the user, 0600: {oct(st.st_mode)} uid {st.st_uid}")
    check(open(victim_file).read() == "precious\n", "the linked file is untouched")
    # A request of another uid (root writes it in the user's directory: what no other user can).
    req = os.path.join(control, f"{p.pid}.req.4242")
    with open(req, "w") as f:
        f.write("dump")
    wait_for(lambda: not os.path.exists(req), "the launcher took the request")
    # dump/stacks of another user's process: refused before anything is written.
    d = ft.ctl(a, "dump", prog)
    check(d.returncode == 2 and "another user" in d.stderr, f"dump of nobody's: {d.stderr}")
    s = ft.ctl(a, "stacks", p.pid)
    check(s.returncode == 2 and "another user" in s.stderr, f"stacks of nobody's: {s.stderr}")
    open(stop, "w").close()
    _, err = p.communicate(timeout=240)
    check(p.returncode == 0, f"exit 0: {err}")
    check("refused request" in err and "uid 0" in err, f"says it refused the request: {err}")
    check("requested by nvtxpp-capture dump" not in err, f"no dump for it: {err}")
    check(not os.path.exists(os.path.join(tmp, "t.dump2.json")), "only the dump at exit")
    check(not os.path.exists(os.path.join(control, f"{p.pid}.ans.4242")), "no answer written")
    check(not os.path.exists(entry), "the entry removed at the end")
    subprocess.run(["rm", "-rf", control])


def case_shared_killed(a, tmp):
    """kill -9 of launcher and program together: no ring is left in /dev/shm at once; the raw
    and ring directories go at the next start; a run in progress keeps its own."""
    env = dict(os.environ, TMPDIR=tmp)
    out = os.path.join(tmp, "t.json")
    ready = os.path.join(tmp, "ready")
    p = subprocess.Popen([a.capture, "--flight-recorder=2MB", "--no-summary", "-o", out, "--",
                          a.app, "spin", ready], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env, start_new_session=True)
    prog = ft.child_of(p.pid)
    wait_for(lambda: os.path.exists(ready), "20,000 steps")
    raw, rings = ring_dirs(prog)
    link = os.path.join(raw, f"nvtxpp-{prog}.ring")
    wait_for(lambda: os.path.islink(link) and os.readlink(link).startswith("/proc/"),
             "the launcher holds the ring by descriptor")
    check(named_rings(rings) == [], f"no ring named in {rings}: {named_rings(rings)}")
    # A second run, still going, whose directories must survive the clean-up below.
    ready2, stop2 = os.path.join(tmp, "ready2"), os.path.join(tmp, "stop2")
    q = subprocess.Popen([a.capture, "--flight-recorder=1MB", "--no-summary", "-o",
                          os.path.join(tmp, "q.json"), "--", a.app, "threads", ready2, stop2,
                          "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    qprog = ft.child_of(q.pid)
    wait_for(lambda: os.path.exists(ready2), "the second run warm")
    qraw, qrings = ring_dirs(qprog)

    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=240)
    wait_for(lambda: not os.path.exists(f"/proc/{prog}"), "the program gone")
    check(named_rings(rings) == [], f"no ring left in /dev/shm: {named_rings(rings)}")
    # Only the two (now empty but for links) directories are left; the next start removes them
    # once they are older than the clean-up's bound (made old here rather than waited for).
    for d in (raw, rings, qraw, qrings):
        if d:
            os.utime(d, (1, 1))
    r = subprocess.run([a.capture, "--no-summary", "-o", os.path.join(tmp, "n.json"), "--",
                        a.app, "steps", "10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env, timeout=120)
    check(r.returncode == 0, f"the next run: {r.stderr}")
    check(not os.path.exists(raw), f"the killed run's raw directory removed: {raw}")
    check(not rings or not os.path.exists(rings), f"its ring directory removed: {rings}")
    check(os.path.isdir(qraw) and (not qrings or os.path.isdir(qrings)),
          "the running launch's directories kept")
    open(stop2, "w").close()
    _, err = q.communicate(timeout=240)
    check(q.returncode == 0 and "dump 1 (at exit)" in err, f"the second run ends well: {err}")
    check(not os.path.exists(qraw) and (not qrings or not os.path.exists(qrings)),
          "its directories removed at its end")
    # Another user's directory of the same name pattern is never touched.
    if is_root():
        foreign = os.path.join(tmp, "nvtxpp-capture-Zz9Zz9")
        os.mkdir(foreign)
        os.chown(foreign, NOBODY, NOBODY)
        os.utime(foreign, (1, 1))
        subprocess.run([a.capture, "--no-summary", "-o", os.path.join(tmp, "m.json"), "--",
                        a.app, "steps", "10"], env=env, timeout=120, capture_output=True)
        check(os.path.isdir(foreign), "another user's directory kept")


def dead_pid():
    """The pid of a process that has ended (reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def case_shared_stale_entries(a, tmp):
    """kill -9 of launcher and program: the launcher's entry (and its requests and answers) in
    the request directory goes at the next start, as its raw directory does; a running
    launcher's entry stays, and nothing that is not a file as launchers make them is touched (a
    symlink, a file of another mode or owner, another name)."""
    xdg = os.path.join(tmp, "xdg")  # the test's own request directory, no other run's
    os.mkdir(xdg, 0o700)
    env = dict(os.environ, TMPDIR=tmp, XDG_RUNTIME_DIR=xdg)
    control = os.path.join(xdg, f"nvtxpp-capture-{os.geteuid()}")
    ready = os.path.join(tmp, "ready")
    p = subprocess.Popen([a.capture, "--flight-recorder=2MB", "--no-summary", "-o",
                          os.path.join(tmp, "t.json"), "--", a.app, "spin", ready],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    prog = ft.child_of(p.pid)
    wait_for(lambda: os.path.exists(ready), "20,000 steps")
    entry = os.path.join(control, f"{p.pid}.launcher")
    wait_for(lambda: os.path.exists(entry), "the launcher's entry")
    ready2, stop2 = os.path.join(tmp, "ready2"), os.path.join(tmp, "stop2")
    q = subprocess.Popen([a.capture, "--flight-recorder=1MB", "--no-summary", "-o",
                          os.path.join(tmp, "q.json"), "--", a.app, "threads", ready2, stop2,
                          "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    live = os.path.join(control, f"{q.pid}.launcher")
    wait_for(lambda: os.path.exists(ready2) and os.path.exists(live), "the second run's entry")

    def plant(name, mode=0o600, uid=None):
        path = os.path.join(control, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        os.write(fd, b"1\n")
        os.close(fd)
        os.chmod(path, mode)
        if uid is not None:
            os.chown(path, uid, uid)
        return path

    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=240)
    wait_for(lambda: not os.path.exists(f"/proc/{prog}"), "the program gone")
    check(os.path.exists(entry), "the killed launcher's entry is left at first")
    # What a killed launcher leaves besides its entry (made after its death, so that it cannot
    # take them): a client's request it never took, an answer whose client died, a file its
    # rename never reached.
    dead = dead_pid()
    leftovers = [plant(f"{p.pid}.req.{dead}"), plant(f"{p.pid}.ans.{dead}"),
                 plant(f"{p.pid}.ans.{dead}.tmp")]
    # Not as launchers make them, or not an entry's name: kept whatever the pid.
    target = os.path.join(tmp, "target")
    with open(target, "w") as f:
        f.write("precious\n")
    link = os.path.join(control, f"{dead_pid()}.launcher")
    os.symlink(target, link)
    kept = [plant(f"{dead_pid()}.launcher", 0o644), plant("notes.txt"),
            plant(f"{dead_pid()}.launcher.old")]
    if is_root():
        kept.append(plant(f"{dead_pid()}.launcher", 0o600, NOBODY))

    # The next start, whatever it records, removes them.
    r = subprocess.run([a.capture, "--no-summary", "-o", os.path.join(tmp, "n.json"), "--",
                        a.app, "steps", "10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env, timeout=120)
    check(r.returncode == 0, f"the next run: {r.stderr}")
    check(not os.path.exists(entry), f"the killed launcher's entry removed: {os.listdir(control)}")
    for path in leftovers:
        check(not os.path.exists(path), f"{os.path.basename(path)} removed")
    check(os.path.exists(live), "the running launcher's entry kept")
    check(os.path.islink(link) and open(target).read() == "precious\n",
          "a symlink kept, its target untouched")
    for path in kept:
        check(os.path.exists(path), f"{os.path.basename(path)} kept")
    d = subprocess.run([a.capture, "stacks", str(q.pid)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env, timeout=240)
    check(d.returncode == 0, f"the running launcher still answers: {d.stderr}")
    open(stop2, "w").close()
    _, err = q.communicate(timeout=240)
    check(q.returncode == 0 and not os.path.exists(live), f"its entry goes at its end: {err}")


def case_shared_sigkill_program(a, tmp):
    """SIGKILL of the program alone: the launcher reads the window from the ring it holds by
    descriptor (its name already gone)."""
    out = os.path.join(tmp, "t.json")
    ready = os.path.join(tmp, "ready")
    p = subprocess.Popen([a.capture, "--flight-recorder=2MB", "--no-summary", "-o", out, "--",
                          a.app, "spin", ready], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ, TMPDIR=tmp))
    prog = ft.child_of(p.pid)
    wait_for(lambda: os.path.exists(ready), "20,000 steps")
    raw, rings = ring_dirs(prog)
    link = os.path.join(raw, f"nvtxpp-{prog}.ring")
    wait_for(lambda: os.path.islink(link) and os.readlink(link).startswith("/proc/"),
             "the launcher holds the ring by descriptor")
    check(ft.ctl(a, "stacks", prog).returncode == 0, "stacks PID answers (blocks flushed)")
    os.kill(prog, signal.SIGKILL)
    _, err = p.communicate(timeout=240)
    check("dump 1 (program killed by signal 9)" in err, f"says so: {err}")
    got = ft.payloads(ft.load(os.path.join(tmp, "t.dump1.json")))
    check(got and got[-1] > 20000, f"steps after READY are in: {got[-1:]}")
    check(not os.path.exists(raw) and (not rings or not os.path.exists(rings)),
          "nothing left after the launcher's end")


if __name__ == "__main__":
    sys.exit(ft.main(globals()))
