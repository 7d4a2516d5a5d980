#!/usr/bin/env bash
# `nvtxpp-capture merge -j N` on the GPU machine's cores (no GPU needed): bench/merge_scaling.py
# with the page cache dropped before each merge, 16 x 1 M and 64 x 250 k ranges at -j 1, 2, 4, 8,
# 16 by default (about 4-6 minutes on 16 cores; SETS=64x1000000 JOBS=1,16 for the full-size
# 64-file run, about as long again).
#
#   scripts/verify_merge_scaling_gpu.sh [OUT_DIR]    (default: $OUT, else out/merge-scaling)
#
# Environment: SETS, JOBS, PIECES (merge_scaling.py's --sets, --jobs, --pieces), INDEPENDENT=1
# (--independent), BUILD_DIR (default
# build-merge-scaling), CMAKE_ARGS (more configure arguments).
# OUT_DIR receives log.txt (everything) and merge-scaling.txt (the results).
# Exit status: 0 when every step passed (every -j printed the same summary), 1 otherwise.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/merge-scaling}}"
build="${BUILD_DIR:-build-merge-scaling}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, the log, step, check, machine

step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=ON \
  -DNVTXPP_BENCH_MERGE_ONLY=ON "${sqlite_args[@]}" ${CMAKE_ARGS:-} >"$work/configure.log" 2>&1 || {
  tail -n 30 "$work/configure.log"; exit 1; }
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_merge_gen \
  >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }

step "merge -j scaling"
lscpu | grep -E "^Thread|^Core|^Socket|^CPU\(s\)|MHz" || true
check scaling python3 "$root/bench/merge_scaling.py" --build "$build" --no-build --cold \
  --work "$work/scaling" --sets "${SETS:-16x1000000,64x250000}" --jobs "${JOBS:-1,2,4,8,16}" \
  --pieces "${PIECES:-}" ${INDEPENDENT:+--independent} --out "$out/merge-scaling.txt"
grep -q "summary identical at every -j: NO" "$out/merge-scaling.txt" 2>/dev/null &&
  failed+=("summaries differ between -j values")
rm -rf "$work"
finish
