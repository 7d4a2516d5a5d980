#!/usr/bin/env python3
"""scripts/compare_nsys.py without nsys: a stand-in runner prints canned report CSV (in nsys's
console form: notes first, headers with units) and the exit status and tables are checked.

  test_compare_nsys.py --script PATH/compare_nsys.py
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# Prints the CSV stored for REPORT (the name before any ':args') in FILE, a JSON object.
RUNNER = r'''
import json, sys
report, path = sys.argv[1].split(":")[0], sys.argv[2]
text = json.load(open(path)).get(report)
if text is None:
    print(f"SKIPPED: {path} does not contain data for {report}.")
    sys.exit(0)
print(f"Processing [{path}] with [{report}.py]... ")
print()
sys.stdout.write(text)
'''

NVTX = ('"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)",'
        '"StdDev (ns)","Style","Range"\n'
        '90.0,{t1},2,{a1},{a1},{a1},{a1},0.0,PushPop,":step, one"\n'
        '10.0,{t2},{n2},{t2},{t2},{t2},{t2},0.0,StartEnd,physics:copy\n')
KERN = ('Time:ratio_%,Total Time:dur_ns,Instances,Avg:dur_ns,Med:dur_ns,Min:dur_ns,Max:dur_ns,'
        'StdDev:dur_ns,Name,_Q1,_Q3\n'
        '100.0,5000,5,1000.0,1000.0,1000,1000,0.0,_Z1kv,1000,1000\n')


def nvtx(t1=1000000, t2=5000, n2=1):
    return NVTX.format(t1=t1, a1=t1 / 2, t2=t2, n2=n2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        runner = os.path.join(tmp, "runner.py")
        with open(runner, "w") as f:
            f.write(RUNNER)

        def db(name, reports):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                json.dump(reports, f)
            return path

        def compare(ours, theirs, *extra):
            p = subprocess.run([sys.executable, a.script, ours, theirs, "--runner", runner,
                                "--reports", "nvtx_sum,cuda_gpu_kern_sum", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            return p.returncode, p.stdout + p.stderr

        base = db("base", {"nvtx_sum": nvtx(), "cuda_gpu_kern_sum": KERN})
        rc, out = compare(base, db("same", {"nvtx_sum": nvtx(), "cuda_gpu_kern_sum": KERN}))
        check(rc == 0, f"identical reports match (exit {rc})")
        check("| :step, one | PushPop | 2 / 2 |" in out, "a side-by-side row per range")
        check("| cuda_gpu_kern_sum | 1 / 1 | 0 | 0.0% |" in out, "a summary row per report")

        rc, out = compare(base, db("close", {"nvtx_sum": nvtx(t1=1200000, t2=5900),
                                             "cuda_gpu_kern_sum": KERN}))
        check(rc == 0, f"times within 25% or 1000 ns match (exit {rc})")
        check("max relative time difference 16.7%" in out, "the largest difference is reported")

        rc, _ = compare(base, db("slow", {"nvtx_sum": nvtx(t1=2000000),
                                          "cuda_gpu_kern_sum": KERN}))
        check(rc == 1, f"a time 2x off is a mismatch (exit {rc})")
        rc, _ = compare(base, db("slow", {"nvtx_sum": nvtx(t1=2000000),
                                          "cuda_gpu_kern_sum": KERN}), "--tolerance", "1.5")
        check(rc == 0, f"--tolerance loosens it (exit {rc})")

        rc, _ = compare(base, db("count", {"nvtx_sum": nvtx(n2=2), "cuda_gpu_kern_sum": KERN}))
        check(rc == 1, f"a different instance count is a mismatch (exit {rc})")

        rc, out = compare(base, db("missing", {"nvtx_sum": nvtx().rsplit("\n", 2)[0] + "\n",
                                               "cuda_gpu_kern_sum": KERN}))
        check(rc == 1 and "only in ours: physics:copy / StartEnd" in out,
              f"a range in one file only is a mismatch, named (exit {rc})")
        rc, _ = compare(base, db("missing2", {"nvtx_sum": nvtx().rsplit("\n", 2)[0] + "\n",
                                              "cuda_gpu_kern_sum": KERN}), "--lenient", "nvtx_sum")
        check(rc == 0, f"--lenient makes it a note (exit {rc})")

        rc, out = compare(base, db("nokern", {"nvtx_sum": nvtx()}))
        check(rc == 1 and "only in ours: _Z1kv" in out,
              f"a report nsys skipped (no data) leaves our rows unmatched (exit {rc})")

        # --counts-only (the corpus): times are noted, rows and counts decide.
        rc, out = compare(base, db("slow2", {"nvtx_sum": nvtx(t1=2000000),
                                            "cuda_gpu_kern_sum": KERN}), "--counts-only")
        check(rc == 0 and "times differ" in out and "1 row(s) with equal counts" in out,
              f"--counts-only: a time 2x off is noted, not a mismatch (exit {rc})")
        rc, _ = compare(base, db("count2", {"nvtx_sum": nvtx(n2=2), "cuda_gpu_kern_sum": KERN}),
                        "--counts-only")
        check(rc == 1, f"--counts-only: a different instance count still is a mismatch (exit {rc})")

        # cuda_gpu_mem_size_sum: sizes are compared exactly; --json writes the per-report tally.
        size = ('Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation\n'
                '{t},2,{a},{a},{a},{a},0.000,[CUDA memcpy Host-to-Device]\n')
        sized = db("size", {"cuda_gpu_mem_size_sum": size.format(t="8.389", a="4.194")})
        js = os.path.join(tmp, "tally.json")
        rc, out = compare(sized, db("size2", {"cuda_gpu_mem_size_sum": size.format(
            t="8.389", a="4.194")}), "--reports", "cuda_gpu_mem_size_sum", "--json", js)
        check(rc == 0 and json.load(open(js)) == {"cuda_gpu_mem_size_sum": [1, 1, 0]},
              f"equal sizes match; --json tallies rows and mismatches (exit {rc})")
        rc, _ = compare(sized, db("size3", {"cuda_gpu_mem_size_sum": size.format(
            t="8.390", a="4.195")}), "--reports", "cuda_gpu_mem_size_sum", "--counts-only")
        check(rc == 1, f"a byte total that differs is a mismatch, even with --counts-only "
              f"(exit {rc})")

        # --noise: a count nsys itself does not reproduce (migrations on demand) may differ by
        # twice nsys's own spread, and the cell says so; beyond that it is a mismatch.
        mem = ('Time:ratio_%,Total Time:dur_ns,Count,Avg:dur_ns,Med:dur_ns,Min:dur_ns,'
               'Max:dur_ns,StdDev:dur_ns,Operation\n'
               '100.0,50000,{n},1000.0,1000.0,1000,1000,0.0,[CUDA memcpy Unified Host-to-Device]\n')
        nsys1 = db("um1", {"cuda_gpu_mem_time_sum": mem.format(n=1700)})
        nsys2 = db("um2", {"cuda_gpu_mem_time_sum": mem.format(n=1760)})
        rc, out = compare(db("um_ours", {"cuda_gpu_mem_time_sum": mem.format(n=1800)}), nsys1,
                          "--reports", "cuda_gpu_mem_time_sum", "--noise", nsys2)
        check(rc == 0 and "1800 / 1700 (nsys varies by 60)" in out,
              f"a count within twice nsys's own spread matches, said (exit {rc})")
        rc, _ = compare(db("um_far", {"cuda_gpu_mem_time_sum": mem.format(n=1900)}), nsys1,
                        "--reports", "cuda_gpu_mem_time_sum", "--noise", nsys2)
        check(rc == 1, f"beyond twice nsys's spread it is a mismatch (exit {rc})")
        rc, _ = compare(db("um_plain", {"cuda_gpu_mem_time_sum": mem.format(n=1800)}), nsys1,
                        "--reports", "cuda_gpu_mem_time_sum")
        check(rc == 1, f"without --noise any count difference is a mismatch (exit {rc})")

        # --fold-digits: names that carry an id of the run (XLA's program_id) compared with
        # their digits folded, the rows that then share a name added up.
        xla = ('"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)",'
               '"Max (ns)","StdDev (ns)","Style","Range"\n'
               '60.0,3000,{a},1000,1000,1000,1000,0.0,PushPop,"XlaModule:#program_id={x}#"\n'
               '40.0,2000,{b},1000,1000,1000,1000,0.0,PushPop,"XlaModule:#program_id={y}#"\n')
        run1 = db("xla1", {"nvtx_sum": xla.format(a=3, x=6632, b=2, y=17)})
        run2 = db("xla2", {"nvtx_sum": xla.format(a=2, x=9, b=3, y=40211)})
        rc, out = compare(run1, run2, "--reports", "nvtx_sum")
        check(rc == 1, f"without --fold-digits the ids tell the rows apart (exit {rc})")
        rc, out = compare(run1, run2, "--reports", "nvtx_sum", "--fold-digits")
        check(rc == 0 and "| XlaModule:#program_id=## | PushPop | 5 / 5 |" in out,
              f"--fold-digits: one row, its instances added up (exit {rc}): {out[:1500]}")
        run3 = db("xla3", {"nvtx_sum": xla.format(a=3, x=9, b=3, y=40211)})
        rc, _ = compare(run1, run3, "--reports", "nvtx_sum", "--fold-digits")
        check(rc == 1, f"--fold-digits: 5 against 6 instances is a mismatch (exit {rc})")

        rc, out = compare(base, os.path.join(tmp, "absent"))
        check(rc == 2, f"a missing file: exit 2 (got {rc})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
