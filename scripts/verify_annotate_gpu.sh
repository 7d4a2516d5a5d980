#!/usr/bin/env bash
# The no-rebuild route on a GPU machine (docs/annotate.md): a cuBLAS program with no annotation
# of its own (tests/annotate/gpu/cublas_app.cpp) whose cublasSgemm calls must appear as NVTX
# ranges, with cuBLAS's kernels projected under them:
#   1. under Nsight Systems, through LD_AUDIT + NVTXPP_ANNOTATE_CALLS only
#      (nsys profile -t cuda,nvtx; nsys stats nvtx_sum and nvtx_kern_sum);
#   2. under nvtxpp-capture --annotate-calls, in its .sqlite (read by the same nsys stats
#      reports) and its .json;
# and the cost per annotated cublasSgemm call (the same program timed plain and under the
# auditor).
#
#   scripts/verify_annotate_gpu.sh [OUT_DIR]     (default: $OUT, else out/annotate-gpu)
#
# Environment: NSYS (default .gpu-tools/nsys when present, else nsys), BUILD_DIR (default
# build-annotate-gpu), CMAKE_ARGS (more configure arguments; the SQLite headers: see
# /work/shared/device/README.md; done automatically from .gpu-tools/libsqlite3-dev_*.deb).
# OUT_DIR receives log.txt, nsys-stats.txt, capture-stats.txt, cublas.sqlite, cublas.json.
# Exit status: 0 when every check passed, 1 otherwise.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
out="${1:-${OUT:-out/annotate-gpu}}"
build="${BUILD_DIR:-build-annotate-gpu}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, machine
calls=20

ls /usr/local/cuda/lib64/libcublas.so* 2>&1 | head -n 3

step "configure and build"
# The tools only (no test tree: it needs Catch2); the cuBLAS program is built by nvcc below.
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF \
  -DNVTXPP_INSTALL=OFF "${sqlite_args[@]}" ${CMAKE_ARGS:-} \
  >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; exit 1; }
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
  nvtxpp_audit >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log"; exit 1; }
app="$work/annotate_cublas"
# Lazily bound (-z lazy, whatever the toolchain's default): calls bound at load time reach no
# auditor's PLT hooks (docs/annotate.md).
check build_app nvcc -O2 -std=c++17 "$root/tests/annotate/gpu/cublas_app.cpp" -o "$app" \
  -lcublas -Xlinker -z,lazy || exit 1
capture="$build/tools/capture/nvtxpp-capture"
audit="$(cd "$build/tools/capture" && pwd)/libnvtxpp_audit.so"
"$app" 2 >/dev/null 2>&1  # warm-up (module loading, JIT cache)

step "plain run"
check plain "$app" "$calls"

step "1. Nsight Systems with LD_AUDIT (no nvtxpp-capture)"
# env(1) sets the auditor for the program only, not for nsys's own processes.
check nsys_profile "$nsys" profile -t cuda,nvtx --force-overwrite true -o "$work/cublas-nsys" \
  env LD_AUDIT="$audit" NVTXPP_ANNOTATE_CALLS='cublasSgemm*@libcublas.so*' "$app" "$calls"
python3 "$root/tests/annotate/gpu/check_cublas.py" --calls "$calls" \
  --nsys "$nsys" "$work/cublas-nsys.nsys-rep" | tee "$out/nsys-stats.txt"
[ "${PIPESTATUS[0]}" = 0 ] || failed+=("nsys_stats")

step "2. nvtxpp-capture --annotate-calls"
check capture_sqlite "$capture" --annotate-calls 'cublasSgemm*@libcublas.so*' \
  -o "$out/cublas.sqlite" -- "$app" "$calls"
python3 "$root/tests/annotate/gpu/check_cublas.py" --calls "$calls" --nsys "$nsys" \
  "$out/cublas.sqlite" | tee "$out/capture-stats.txt"
[ "${PIPESTATUS[0]}" = 0 ] || failed+=("capture_stats")
check capture_json "$capture" --no-summary --annotate-calls 'cublasSgemm*@libcublas.so*' \
  -o "$out/cublas.json" -- "$app" "$calls"
check capture_json_check python3 "$root/tests/annotate/gpu/check_cublas.py" --calls "$calls" \
  "$out/cublas.json"

step "cost per annotated cublasSgemm call (wall time of 2000 calls, best of 3)"
time_run() {  # prints the best of 3 wall times in ms
  local best=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
    local ms=$(( (t1 - t0) / 1000000 ))
    { [ -z "$best" ] || [ "$ms" -lt "$best" ]; } && best=$ms
  done
  echo "$best"
}
plain_ms=$(time_run "$app" 2000)
audit_ms=$(time_run env LD_AUDIT="$audit" NVTXPP_ANNOTATE_CALLS='cublasSgemm*@libcublas.so*' \
  "$app" 2000)
echo "plain: ${plain_ms} ms; under the auditor, no tool: ${audit_ms} ms (2000 calls plus setup)"

finish
