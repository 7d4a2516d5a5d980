#!/usr/bin/env bash
# Issue 52: leave it on in a launch-bound loop. One call does the map, one call the rounds:
#
#   PARTS=map            scripts/verify_launch_cost_gpu.sh [OUT_DIR]
#   PARTS="rounds leave_on" scripts/verify_launch_cost_gpu.sh [OUT_DIR]
#
# (default: all three; OUT_DIR defaults to $OUT, else out/launch-cost-gpu). Environment:
# BUILD_DIR (default build-launch-gpu), MAP_RUNS (late-start map runs, default 3), ROUNDS
# (default 5), MODES (the rounds' programs: torch_train.py's modes and train_step, the GPU-bound
# bench/gpu/train_step.cu, and ddp under torchrun on two GPUs; default "eager emit_nvtx compile
# graphs"), CONFIGS (default "none nvtx idle sample ours nsys"; also idle_keep, idle_nodrv,
# idle_bare, raised, late, late_keep, nsys_nvtx), SECONDS_A_RUN (default 5), PIN (a
# command put before each run, e.g. "taskset -c 4-7": the same cores for every run, where the
# machine's load moves runs between cores), PROGRAMS (leave_on's, default "blas torch numba").
# Parts:
#   map     bench/gpu/launch_map.cu: a framework-like step (launches beside cheap runtime calls,
#           then a sync) under each CUPTI feature alone, switched on, off and detached; all of
#           them twice; detached and attached again; a first switch-on before CUDA starts
#           (--start=early). Its table goes to docs/performance.md.
#   rounds  torch_train.py's modes and bench/gpu/train_step.cu (GPU-bound) in alternated,
#           rotated rounds (bench/sample_cost.py's tables): the configurations below.
#   leave_on  scripts/verify_leave_on_gpu.sh with this build: every mode's periods, raises and
#           windows still hold their steps' kernels (cuBLAS-linked C++, PyTorch, Numba).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/launch-cost-gpu}}"
build="${BUILD_DIR:-build-launch-gpu}"
parts=" ${PARTS:-map rounds leave_on} "
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

build_tool() {
  [ -n "${capture:-}" ] && return 0
  step "configure and build nvtxpp-capture"
  check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF \
    "${sqlite_args[@]}" >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; finish; }
  check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
    >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; finish; }
  capture="$(cd "$build" && pwd)/tools/capture/nvtxpp-capture"
}

if want rounds; then
  build_tool
  train="$root/tests/capture/corpus/torch_train.py"
  check "build train_step" nvcc -O2 -std=c++17 -o "$work/train_step" "$root/bench/gpu/train_step.cu"
  modes="${MODES:-eager emit_nvtx compile graphs}"
  read -r -a configs <<<"${CONFIGS:-none nvtx idle sample ours nsys}"
  rounds="${ROUNDS:-5}"
  seconds="${SECONDS_A_RUN:-5}"
  step "rounds: $rounds alternated, rotated rounds a mode ($modes): ${configs[*]}"
  # Configurations: none (no tool); nvtx (NVTX only: --cuda=off); idle (--cuda-sample=1ms/1000s:
  # no period in the run, CUPTI detached from its start: the time between periods); idle_keep
  # (the same with NVTXPP_CUPTI_DETACH=off: the kinds switched off, CUPTI kept, as before the
  # detach); sample (--cuda-sample=100ms/1s, its steps placed against the periods: --phase);
  # raised (a trigger on step 30, slow, raises GPU detail for 1 s: the steps 3 s after the start
  # are after the raise); late (a capture window over the steps 2 s to 3 s into the loop: the
  # steps before it, CUPTI detached since cuInit, against those from 3.5 s on, after it, in the
  # same process: SECONDS_A_RUN 6 or more); late_keep (the same, NVTXPP_CUPTI_DETACH=off); ours
  # (a full capture); nsys (-t cuda,nvtx); nsys_nvtx (-t nvtx); idle_nodrv and idle_bare (idle
  # without the driver launch records, and without the graph node callbacks too).
  : >"$out/rounds.txt"
  for mode in $modes; do
    case "$mode" in
      train_step) prog=("$work/train_step") ;;
      ddp) prog=(python3 -m torch.distributed.run --standalone --nproc-per-node=2 "$train" ddp) ;;
      *) prog=(python3 "$train" "$mode") ;;
    esac
    for r in $(seq 1 "$rounds"); do
      n=${#configs[@]}
      for k in $(seq 0 $((n - 1))); do
        c="${configs[$(((k + r) % n))]}"
        env=()
        extra=()
        case "$c" in
          none) tool=() ;;
          nvtx) tool=("$capture" --summary-only --cuda=off --) ;;
          idle) tool=("$capture" --summary-only --cuda-sample=1ms/1000s --) ;;
          idle_keep) env=(NVTXPP_CUPTI_DETACH=off)
            tool=("$capture" --summary-only --cuda-sample=1ms/1000s --) ;;
          sample) tool=("$capture" --summary-only --cuda-sample=100ms/1s --)
            extra=(--phase 100/1000) ;;
          raised) tool=("$capture" --summary-only --flight-recorder=30s --cuda-sample=1ms/1000s
                        --cuda-raise=1s --trigger='step>3x' -o "$work/raised.json" --)
            extra=(--slow-at 30 --after 3) ;;
          late|late_keep) [ "$c" = late_keep ] && env=(NVTXPP_CUPTI_DETACH=off)
            tool=("$capture" --summary-only --capture-range=nvtx --nvtx-capture=window --)
            extra=(--window 2/3) ;;
          idle_nodrv) env=(NVTXPP_DRIVER_LAUNCHES=off)
            tool=("$capture" --summary-only --cuda-sample=1ms/1000s --) ;;
          idle_bare) env=(NVTXPP_DRIVER_LAUNCHES=off NVTXPP_GRAPH_NODES=off)
            tool=("$capture" --summary-only --cuda-sample=1ms/1000s --) ;;
          ours) tool=("$capture" --summary-only --) ;;
          nsys) tool=("$nsys" profile -t cuda,nvtx --force-overwrite true -o "$work/n") ;;
          nsys_nvtx) tool=("$nsys" profile -t nvtx --force-overwrite true -o "$work/n") ;;
        esac
        [ "$mode" = train_step ] && [ "$c" != sample ] && extra=()
        line=$(env "${env[@]}" ${PIN:-} "${tool[@]}" "${prog[@]}" --seconds "$seconds" "${extra[@]}" \
          2>"$work/err.txt" | grep -E "^(steps|phase|after|before)=?" | tr '\n' ' ')
        echo "mode=$mode round=$r config=$c $line" | tee -a "$out/rounds.txt"
        grep -h "CUPTI's switches" "$work/err.txt" | sed "s/^/mode=$mode round=$r config=$c /" \
          >>"$out/switches.txt"
        grep -hE "could not start|does not detach|could not be attached" "$work/err.txt" &&
          failed+=("$mode $c: $(grep -hE 'could not start|does not detach|could not be attached' \
            "$work/err.txt" | head -n 1)")
      done
    done
    echo "--- $mode: each configuration's mean step over the same round's with no tool"
    grep "^mode=$mode " "$out/rounds.txt" | python3 "$root/bench/sample_cost.py" /dev/stdin |
      tee -a "$out/rounds-table.md"
  done
fi

if want leave_on; then
  build_tool
  step "leave_on: every period still holds its steps' kernels (cuBLAS C++, PyTorch, Numba)"
  BUILD_DIR="$build" PROGRAMS="${PROGRAMS:-blas torch numba}" \
    bash "$here/verify_leave_on_gpu.sh" "$out/leave-on" >"$work/leave-on.txt" 2>&1
  status=$?
  grep -E "^- |FAIL|ALL PASSED|FAILED" "$work/leave-on.txt" | head -n 60
  [ "$status" = 0 ] || failed+=("leave_on (status $status)")
fi

finish
