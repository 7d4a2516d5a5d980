#!/usr/bin/env bash
# Does `nvtxpp-capture diff` cry wolf on real GPU programs? (issue 38, docs/diff.md "How far to
# trust it"): RUNS unchanged runs each of reduce v3 and v4, stream_workers, the corpus's
# numbered training steps, the cuBLAS SGEMM program (a library's kernels) and the Numba reduce
# (Python, kernels compiled at run time, the driver API); then bench/diff_noise.py compares
# disjoint sets of those runs at 1, 3 and 5 runs a side and counts the comparisons with any
# verdict of change (every one is false). A real change is also looked for: the steps program
# with one step five times as long against itself unchanged.
#
#   scripts/verify_diff_noise_gpu.sh [OUT_DIR]     (default: $OUT, else out/diff-noise-gpu)
#
# Environment: BUILD_DIR (default build-diff-gpu), RUNS (default 10).
# OUT_DIR receives log.txt, diff-noise-gpu.txt and .csv (the tables, every comparison) and
# traces.tar.gz (every trace, for comparisons made elsewhere).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/diff-noise-gpu}}"
build="${BUILD_DIR:-build-diff-gpu}"
runs="${RUNS:-10}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, the log, step, check, finish

step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DNVTXPP_BUILD_TESTS=ON -DNVTXPP_BUILD_BENCHMARKS=OFF \
  "${sqlite_args[@]}" >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; exit 1; }
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
  reduce_v3 reduce_v4 stream_workers nvtxpp_corpus_train_steps nvtxpp_corpus_cublas_gemm \
  corpus_nvtx >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
capture="$build/tools/capture/nvtxpp-capture"
find_prog() { find "$build" -type f -name "$1" | head -n 1; }
declare -A prog=(
  [reduce_v3]="$(find_prog reduce_v3)"
  [reduce_v4]="$(find_prog reduce_v4)"
  [stream_workers]="$(find_prog stream_workers)"
  [train_steps]="$(find_prog nvtxpp_corpus_train_steps) --slow 0"
  [cublas_gemm]="$(find_prog nvtxpp_corpus_cublas_gemm) 2048 30"
  [numba_reduce]="python3 $root/tests/capture/corpus/numba_reduce.py $(find_prog libcorpus_nvtx.so)"
)
traces="$work/traces"
for name in reduce_v3 reduce_v4 stream_workers train_steps cublas_gemm numba_reduce; do
  step "$name: $runs unchanged runs"
  mkdir -p "$traces/$name"
  # shellcheck disable=SC2086  # the program and its arguments, split on purpose
  ${prog[$name]} >/dev/null 2>&1 || echo "warning: $name's warm-up run failed"
  for i in $(seq -w 1 "$runs"); do
    # shellcheck disable=SC2086
    check "capture $name.$i" "$capture" --no-summary -o "$traces/$name/run$i.json" -- \
      ${prog[$name]} >>"$work/captures.log" 2>&1
  done
  ls "$traces/$name" | wc -l
done
step "a real change: one step of the steps program five times as long"
mkdir -p "$traces/train_steps_slow12"
for i in $(seq -w 1 5); do
  check "capture slow.$i" "$capture" --no-summary -o "$traces/train_steps_slow12/run$i.json" -- \
    "$(find_prog nvtxpp_corpus_train_steps)" --slow 12 >>"$work/captures.log" 2>&1
done
base5=$(ls "$traces"/train_steps/*.json | head -n 5)
"$capture" diff $base5 --vs "$traces"/train_steps_slow12/*.json | tee "$out/diff-train-steps-slow.txt"

step "unchanged runs compared (bench/diff_noise.py traces)"
check "diff_noise" python3 "$root/bench/diff_noise.py" traces "$capture" \
  "$traces"/reduce_v3 "$traces"/reduce_v4 "$traces"/stream_workers "$traces"/train_steps \
  "$traces"/cublas_gemm "$traces"/numba_reduce --comparisons 60 --out "$out" \
  --name diff-noise-gpu
tail -n 5 "$work/captures.log"
tar -C "$work" -czf "$out/traces.tar.gz" traces
ls -la "$out"
finish
