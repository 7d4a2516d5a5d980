#!/usr/bin/env python3
"""Job-wide dumps on a GPU: four ranks (mpirun where installed, else four processes with Open
MPI's rank variables and one NVTXPP_JOB_ID) of job_gpu.cu under --dump-scope=job; rank 2's 1 s
kernel fires a trigger there, and every rank's dump 1 holds its kernels; merge names rank 2.

usage: check_job_gpu.py --capture PATH --app PATH [--mpirun PATH]
"""
import argparse
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time


def wait_for(cond, what, bound_s=240):
    end = time.monotonic() + bound_s
    while not cond():
        if time.monotonic() > end:
            raise SystemExit(f"FAIL: waited for {what}")
        time.sleep(0.02)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "")
    ap.add_argument("--keep", default="")
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp()
    os.makedirs(tmp, exist_ok=True)
    out = os.path.join(tmp, "train.sqlite")
    opts = ["--flight-recorder=16MB", "--dump-scope=job", "--trigger=step>500ms", "--no-summary",
            "-o", out, "--", a.app, tmp, "2", "300"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_odls_base_sigkill_timeout="30")
    procs = []
    if a.mpirun:
        cmd = [a.mpirun, "--oversubscribe", "-np", "4"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        procs.append(subprocess.Popen(cmd + [a.capture] + opts, stderr=subprocess.PIPE, text=True,
                                      env=env))
        how = "mpirun -np 4"
    else:
        for r in range(4):
            e = dict(env, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE="4",
                     NVTXPP_JOB_ID=f"gpu-check-{os.getpid()}")
            procs.append(subprocess.Popen([a.capture] + opts, stderr=subprocess.PIPE, text=True,
                                          env=e))
        how = "four processes with OMPI_COMM_WORLD_RANK/SIZE and NVTXPP_JOB_ID (no mpirun here)"
    print("launch:", how)
    dumps = [os.path.join(tmp, f"train.rank{r}.dump1.sqlite") for r in range(4)]
    wait_for(lambda: all(os.path.exists(d) for d in dumps) or any(p.poll() for p in procs),
             "dump 1 of every rank")
    open(os.path.join(tmp, "stop"), "w").close()
    err = "".join(p.communicate(timeout=240)[1] for p in procs)
    print(err)
    failures = []
    if any(p.returncode != 0 for p in procs):
        failures.append(f"exit status {[p.returncode for p in procs]}")
    for r in (0, 1, 3):
        if not re.search(rf"rank {r}: dump 1 \(job dump started by rank 2: trigger", err):
            failures.append(f"rank {r} did not dump for rank 2's trigger")
    for r, d in enumerate(dumps):
        if not os.path.exists(d):
            failures.append(f"no {d}")
            continue
        db = sqlite3.connect(d)
        k = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
        n = db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()[0]
        print(f"rank {r} dump 1: {n} ranges, {k} kernels")
        if k == 0 or n == 0:
            failures.append(f"rank {r}'s dump 1 has {n} ranges and {k} kernels")
    merged = os.path.join(tmp, "job.dump1.sqlite")
    m = subprocess.run([a.capture, "merge", "-o", merged] + dumps, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    print(m.stdout, m.stderr)
    if m.returncode != 0 or not re.search(r":step: slowest instance on rank 2", m.stdout):
        failures.append("merge does not name rank 2's slow step")
    for f in failures:
        print("FAIL:", f)
    print("job_gpu:", "ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
