#!/usr/bin/env bash
# `nvtxpp-capture merge` on a GPU machine: two processes share the GPU as two "ranks" of a job
# (reduce_v2, rank 1 on a smaller array: 2^26 elements against the default 10^8; both captured
# at once with Open MPI's rank variables set by hand), merged to .sqlite and .json; Nsight
# Systems' own stats reports run on the merged file and must give, range by range and kernel
# by kernel, the sum of what they give on each rank's file; then a file of nsys itself
# (`nsys profile` + `nsys export --type sqlite`) is merged with ours and checked the same way.
#
#   scripts/verify_merge_gpu.sh [OUT_DIR]         (default: $OUT, else out/merge-gpu)
#
# Environment: NSYS (the nsys to run; default .gpu-tools/nsys when present, else nsys),
# BUILD_DIR (default build-merge-gpu), CMAKE_ARGS (more configure arguments).
# OUT_DIR receives log.txt (everything), summary.txt (merge's cross-rank summary), stats.txt
# (nsys stats on the merged files), sums.txt (the per-report checks), merged.json and
# timeline.svg (the merged trace drawn by scripts/trace_svg.py).
# Exit status: 0 when every step and check passed, 1 otherwise.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/merge-gpu}}"
build="${BUILD_DIR:-build-merge-gpu}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, machine


step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF \
  "${sqlite_args[@]}" ${CMAKE_ARGS:-} >"$work/configure.log" 2>&1 || {
  tail -n 30 "$work/configure.log"; exit 1; }
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject reduce_v2 \
  >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
capture="$build/tools/capture/nvtxpp-capture"
prog=$(find "$build/examples" -type f -name reduce_v2 -perm -u+x | head -n 1)
[ -n "$prog" ] || { echo "reduce_v2 not built"; exit 1; }
"$prog" >/dev/null 2>&1  # warm-up: the first run fills the CUDA JIT cache

step "two ranks on one GPU, captured at once"
rank_run() { # rank_run RANK ARGS...
  local r=$1; shift
  OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 "$capture" --no-summary \
    -o "$work/trace.rank$r.sqlite" -- "$prog" "$@" >"$work/rank$r.log" 2>&1
}
rank_run 0 & p0=$!
rank_run 1 -n 67108864 & p1=$!
check "rank 0" wait $p0
check "rank 1" wait $p1
cat "$work/rank0.log" "$work/rank1.log"

step "merge"
check "merge .sqlite" "$capture" merge -o "$work/merged.sqlite" "$work/trace.rank0.sqlite" \
  "$work/trace.rank1.sqlite" >"$out/summary.txt"
cat "$out/summary.txt"
check "merge .json" "$capture" merge --no-summary -o "$out/merged.json" \
  "$work/trace.rank0.sqlite" "$work/trace.rank1.sqlite"
python3 "$here/trace_svg.py" "$out/merged.json" "$out/timeline.svg" --skip-cat cuda_flow \
  || failed+=("trace_svg")

step "nsys profile + export of reduce_v2, merged with ours"
"$nsys" profile -t cuda,nvtx --force-overwrite true -o "$work/nsys-run" "$prog" >/dev/null 2>&1
check "nsys export" "$nsys" export --type sqlite --force-overwrite true \
  -o "$work/nsys-run.sqlite" "$work/nsys-run.nsys-rep" >/dev/null 2>&1
check "merge with nsys's file" "$capture" merge -o "$work/merged3.sqlite" --csv \
  "$work/trace.rank0.sqlite" "$work/trace.rank1.sqlite" "$work/nsys-run.sqlite" \
  >>"$out/summary.txt"
tail -n 30 "$out/summary.txt"

step "nsys stats on the merged files: the sum of the inputs'"
reports=(nvtx_sum nvtx_gpu_proj_sum nvtx_kern_sum cuda_gpu_kern_sum cuda_gpu_mem_time_sum
         cuda_api_sum)
stats() { # stats FILE REPORT -> CSV on stdout
  "$nsys" stats --force-export=false --format csv --report "$2" "$1" 2>/dev/null
}
: >"$out/stats.txt"
for f in merged merged3; do
  for r in "${reports[@]}"; do
    { echo "## $f $r"; stats "$work/$f.sqlite" "$r"; echo; } >>"$out/stats.txt"
  done
done
head -n 80 "$out/stats.txt"
for r in "${reports[@]}"; do
  for f in trace.rank0 trace.rank1 nsys-run merged merged3; do
    stats "$work/$f.sqlite" "$r" >"$work/$f.$r.csv"
  done
done
# (not through a pipe: check must run in this shell to record a failure)
check sums python3 - "$work" "${reports[@]}" >"$out/sums.txt" 2>&1 <<'PY'
import csv, io, sys
work, reports = sys.argv[1], sys.argv[2:]
# Per report: the columns that name a row and the columns that add up across inputs.
KEYS = {"nvtx_sum": (["Range", "Style"], ["Instances", "Total Time (ns)"]),
        "nvtx_gpu_proj_sum": (["Range", "Style"], ["Total Proj Time (ns)",
                                                   "Total Range Time (ns)", "Range Instances",
                                                   "Proj Instances"]),
        "nvtx_kern_sum": (["NVTX Range", "Kernel Name"], ["Kern Inst", "Total Time (ns)"]),
        "cuda_gpu_kern_sum": (["Name"], ["Instances", "Total Time (ns)"]),
        "cuda_gpu_mem_time_sum": (["Operation"], ["Count", "Total Time (ns)"]),
        "cuda_api_sum": (["Name"], ["Num Calls", "Total Time (ns)"])}
def table(path):
    text = open(path).read()
    lines = [l for l in text.splitlines() if l.count(",") >= 2 or l.startswith('"')]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))
def sums(rows, key, cols):
    out = {}
    for r in rows:
        k = tuple(r.get(c, "") for c in key)
        acc = out.setdefault(k, [0] * len(cols))
        for i, c in enumerate(cols):
            acc[i] += float(r.get(c) or 0)
    return out
bad = 0
for rep in reports:
    key, cols = KEYS[rep]
    for merged, parts in [("merged", ["trace.rank0", "trace.rank1"]),
                          ("merged3", ["trace.rank0", "trace.rank1", "nsys-run"])]:
        got = table(f"{work}/{merged}.{rep}.csv")
        if not got:
            print(f"FAIL {merged} {rep}: no rows (did nsys stats read the file?)"); bad += 1
            continue
        cols_here = [c for c in cols if c in got[0]]
        want = {}
        for p in parts:
            for k, v in sums(table(f"{work}/{p}.{rep}.csv"), key, cols_here).items():
                acc = want.setdefault(k, [0] * len(cols_here))
                for i in range(len(v)):
                    acc[i] += v[i]
        have = sums(got, key, cols_here)
        if have == want:
            print(f"ok   {merged} {rep}: {len(have)} rows, {cols_here} = sum of {parts}")
        else:
            bad += 1
            print(f"FAIL {merged} {rep}:")
            for k in sorted(set(have) | set(want)):
                if have.get(k) != want.get(k):
                    print(f"   {k}: merged {have.get(k)} inputs {want.get(k)}")
sys.exit(1 if bad else 0)
PY
cat "$out/sums.txt"

step "result"
ls -la "$out"
rm -rf "$work"
if [ ${#failed[@]} -ne 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "ALL PASSED"
