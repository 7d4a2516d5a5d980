#!/usr/bin/env python3
"""The flight recorder on a GPU (needs a CUDA device; ctest label `gpu`): flight_gpu.cu under
nvtxpp-capture --flight-recorder --hang-timeout.
- A dump on request (`nvtxpp-capture dump PID`) after 50 kernels completed holds all 50: the
  records CUPTI still held are asked for before the dump.
- The hang report names the call the main thread waits in (cudaStreamSynchronize, behind a
  kernel that waits for the host) under its ranges, with how long it has waited; `stacks PID`
  says the same.
- The dump at exit holds the 50 kernels once each; the kernel that waits for the host was still
  running at the hang's dump, whose forced flush of CUPTI hands it out without its end: it is in
  no dump, and the summary's warnings count it (gpu_in_flight).

usage: check_flight_gpu.py flight --capture PATH --app PATH    Exit status 0 = pass.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import flight_tests as ft  # noqa: E402  (check, wait_for, ctl, main)

check, wait_for = ft.check, ft.wait_for


def kernels(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    return len([e for e in events if e.get("cat") == "cuda_kernel" and e.get("ph") == "X"])


def case_flight(a, tmp):
    """The three checks of this file's docstring, in one run of flight_gpu."""
    out = os.path.join(tmp, "f.json")
    p = subprocess.Popen([a.capture, "--flight-recorder=64MB", "--hang-timeout=2s",
                          "--no-summary", "-o", out, "--", a.app, tmp],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait_for(lambda: os.path.exists(os.path.join(tmp, "ready1")) or
                    p.poll() is not None, "the warm-up's kernels"):
        p.kill()
    if p.poll() is not None:
        check(False, f"the program ended before its kernels (exit {p.returncode}; 2: no usable "
              f"GPU): {p.communicate()}")
        return
    prog = int(open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()[0])
    d = subprocess.run([a.capture, "dump", str(prog)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=240)
    check(d.returncode == 0, f"dump PID: {d.stdout} {d.stderr}")
    first = os.path.join(tmp, "f.dump1.json")
    if check(os.path.exists(first), "f.dump1.json written"):
        k = kernels(first)
        check(k == 50, f"the live dump holds the 50 completed kernels: {k}")
    open(os.path.join(tmp, "go"), "w").close()
    stacks = os.path.join(tmp, "f.stacks.txt")
    wait_for(lambda: os.path.exists(stacks), "the hang report")
    s = subprocess.run([a.capture, "stacks", str(prog)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=240)
    open(os.path.join(tmp, "release"), "w").close()
    so, se = p.communicate(timeout=240)
    print(so, se)
    check(p.returncode == 0, f"exit 0: {p.returncode}")
    for what, text in (("hang report", open(stacks).read() if os.path.exists(stacks) else ""),
                       ("stacks PID", s.stdout)):
        print(f"--- {what} ---\n{text}")
        names = [l.strip().split("  (")[0] for l in text.splitlines() if l.strip()]
        i = names.index("step") if "step" in names else -1
        check(i >= 0 and names[i:i + 3] == ["step", "wait for GPU", "in cudaStreamSynchronize"],
              f"{what}: step > wait for GPU > in cudaStreamSynchronize: {names[i:i + 4]}")
        m = re.search(r"in cudaStreamSynchronize  \(for ([0-9.]+) s\)", text)
        check(m is not None and float(m.group(1)) > 0, f"{what}: with how long it waited")
    dumps = sorted(f for f in os.listdir(tmp) if re.match(r"f\.dump\d+\.json$", f))
    print("dumps:", dumps)
    last = os.path.join(tmp, dumps[-1]) if dumps else ""
    if check(len(dumps) == 3, f"three dumps (request, hang, exit): {dumps}"):
        k = kernels(last)
        check(k == 50, f"the dump at exit holds the 50 finished kernels once each: {k}")
        warnings = json.load(open(last)).get("otherData", {}).get("warnings", [])
        check(any("1 GPU operation(s) still running at a live dump" in w for w in warnings),
              f"the kernel running at the hang's dump is counted, not silently lost: {warnings}")


if __name__ == "__main__":
    sys.exit(ft.main(globals()))
