#!/usr/bin/env bash
# Issue 52: leave it on in a launch-bound loop. One call does the map, one call the rounds:
#
#   PARTS=map    scripts/verify_launch_cost_gpu.sh [OUT_DIR]
#   PARTS=rounds scripts/verify_launch_cost_gpu.sh [OUT_DIR]
#
# (default: both; OUT_DIR defaults to $OUT, else out/launch-cost-gpu). Environment: BUILD_DIR
# (default build-launch-gpu), MAP_RUNS (late-start map runs, default 3), ROUNDS (default 5),
# MODES (the PyTorch modes of the rounds, default "eager emit_nvtx compile graphs"), CONFIGS
# (default "none nvtx idle sample ours nsys"), SECONDS_A_RUN (default 5).
# Parts:
#   map     bench/gpu/launch_map.cu: a framework-like step (launches beside cheap runtime calls,
#           then a sync) under each CUPTI feature alone, switched on, off and detached; all of
#           them twice; detached and attached again; a first switch-on before CUDA starts
#           (--start=early). Its table goes to docs/performance.md.
#   rounds  torch_train.py's modes and bench/gpu/train_step.cu (GPU-bound) in alternated,
#           rotated rounds: no tool, --cuda=off, --cuda-sample=1ms/1000s (the time between
#           periods), --cuda-sample=100ms/1s, a full capture, nsys -t cuda,nvtx; `idle_keep`
#           (NVTXPP_CUPTI_DETACH=off: the kinds switched off, CUPTI kept) and `raised`
#           (the steps after a 1 s raise) where CONFIGS names them; then the periods' kernels
#           checked (tests/capture/gpu/leave_on_check.py: eager, cuBLAS-linked C++, Numba).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/launch-cost-gpu}}"
build="${BUILD_DIR:-build-launch-gpu}"
parts=" ${PARTS:-map rounds} "
want() { [[ "$parts" == *" $1 "* ]]; }
. "$here/gpu_common.sh"  # out, work, nsys, the log, step, check, finish, sqlite_args

if want map; then
  step "map: what each CUPTI feature costs a launch-bound step, and what stays"
  check "build launch_map" nvcc -O2 -std=c++17 -o "$work/launch_map" \
    "$root/bench/gpu/launch_map.cu" -lcupti -lcuda || finish
  : >"$out/map.txt"
  for r in $(seq 1 "${MAP_RUNS:-3}"); do
    echo "--- run $r (--start=late)" | tee -a "$out/map.txt"
    check "map run $r" "$work/launch_map" 2>&1 | tee -a "$out/map.txt"
  done
  for r in 1 2; do
    echo "--- run $r (--start=early)" | tee -a "$out/map.txt"
    check "map early $r" "$work/launch_map" --start=early 2>&1 | tee -a "$out/map.txt"
  done
  python3 "$root/bench/launch_map.py" "$out/map.txt" | tee "$out/map-table.md"
fi

if want rounds; then
  step "rounds: see the rounds part below"
  . "$here/launch_cost_rounds.sh"
fi

finish
