#!/usr/bin/env bash
# nvtxpp-capture on programs nobody here wrote (issue 26), on a GPU machine: builds, runs the
# GPU-labelled tests, then the corpus (tests/capture/corpus: cuBLAS, cuBLASLt, cuFFT, cuRAND,
# cuSPARSE, Thrust/CUB, the driver API with NVRTC, a CUDA graph around library calls, threads on
# their own streams, stream-ordered pools, Numba), each under Nsight Systems and under
# nvtxpp-capture, compared on six nsys stats reports; what CUPTI reports of the runtime's own
# driver calls (scripts/api_probe.py); and what recording driver launches costs a runtime-only
# launch loop (bench/gpu/launch_overhead.cu, before and after, alternating rounds).
#
#   scripts/verify_corpus_gpu.sh [OUT_DIR] [PHASE...]   phases: build tests corpus probe bench
#                                                        (default: all, in that order)
#
# Environment: NSYS, BUILD_DIR (default build-corpus-gpu), ROUNDS (launch rounds, default 12),
# JOBS (corpus programs at a time, default 3).
# OUT_DIR receives log.txt, corpus.md (the table), corpus-tables.tgz (side-by-side reports),
# probe.txt, launch-driver.txt and launch-driver-cost.txt.
set -u
out="${1:-${OUT:-out/corpus-gpu}}"
shift || true
phases="${*:-build tests corpus probe bench}"
build="${BUILD_DIR:-build-corpus-gpu}"
here="$(cd "$(dirname "$0")" && pwd)"
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, machine
capture="$build/tools/capture/nvtxpp-capture"
export NVTXPP_NSYS="$nsys"

for phase in $phases; do
  case $phase in
  build)
    step "configure and build"
    check configure cmake -S "$here/.." -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF "${sqlite_args[@]}" \
      >"$work/configure.log" 2>&1 || { tail -n 40 "$work/configure.log"; exit 1; }
    check build cmake --build "$build" -j "$(nproc)" >"$work/build.log" 2>&1 || {
      tail -n 40 "$work/build.log"; exit 1; }
    nvcc -O2 -std=c++17 -arch=sm_90 "$here/../bench/gpu/launch_overhead.cu" \
      -o "$build/launch_overhead"
    ;;
  tests)
    step "GPU-labelled tests (the corpus apart)"
    check ctest_gpu ctest --test-dir "$build" -L gpu -LE corpus --output-on-failure --timeout 300
    ;;
  corpus)
    step "the corpus against nsys (six reports, rows and counts)"
    check corpus ctest --test-dir "$build" -L corpus -j "${JOBS:-3}" --output-on-failure \
      --timeout 900
    # One archive of the per-program tables (the device tool brings back few files).
    (cd "$build/corpus" && tar czf "$out/corpus-tables.tgz" ./*.md)
    python3 "$here/corpus_table.py" "$build/corpus" >"$out/corpus.md"
    cat "$out/corpus.md"
    ;;
  probe)
    step "the runtime's own driver calls, as CUPTI reports them (--cuda-api=all)"
    rm -rf "$work/probe"
    "$capture" --summary-only --cuda-api=all --keep-raw "$work/probe" -- \
      "$build/tests/capture/corpus/nvtxpp_corpus_cublas_gemm" >/dev/null 2>&1
    python3 "$here/api_probe.py" "$work/probe" | tee "$out/probe.txt"
    rm -rf "$work/probe-default"
    "$capture" --summary-only --keep-raw "$work/probe-default" -- \
      "$build/tests/capture/corpus/nvtxpp_corpus_cublas_gemm" >/dev/null 2>&1
    echo "default recording:" | tee -a "$out/probe.txt"
    python3 "$here/api_probe.py" "$work/probe-default" | tee -a "$out/probe.txt"
    step "the default before driver launches were recorded (NVTXPP_DRIVER_LAUNCHES=off): must disagree"
    for t in cublaslt_matmul driver_api; do
      NVTXPP_DRIVER_LAUNCHES=off python3 "$here/../tests/capture/corpus/compare_corpus.py" \
        "before_$t" --capture "$capture" --out "$build/corpus-before" -- \
        "$build/tests/capture/corpus/nvtxpp_corpus_$t" >"$work/before_$t.txt" 2>&1
      status=$?
      grep -E "^\| (nvtx_|cuda_)|no launching" "$work/before_$t.txt"
      echo "before_$t: status $status (1: the reports disagree, as expected)"
      [ "$status" = 1 ] || failed+=("before_$t disagreed not (status $status)")
    done
    step "--cuda-api=all against nsys: cuBLASLt and the driver API"
    for t in cublaslt_matmul driver_api; do
      check "all $t" python3 "$here/../tests/capture/corpus/compare_corpus.py" "all_$t" \
        --capture "$capture" --out "$build/corpus-all" --capture-arg=--cuda-api=all -- \
        "$build/tests/capture/corpus/nvtxpp_corpus_$t" | tail -n 12
    done
    ;;
  bench)
    step "driver launch records: a runtime-only launch loop, before (NVTXPP_DRIVER_LAUNCHES=off) and after"
    rounds="${ROUNDS:-12}"
    {
      for ((round = 1; round <= rounds; ++round)); do
        echo "round $round"
        for which in $([ $((round % 2)) = 0 ] && echo "after before" || echo "before after"); do
          echo "nvtxpp-capture $which:"
          if [ "$which" = before ]; then
            NVTXPP_DRIVER_LAUNCHES=off "$capture" --summary-only -- "$build/launch_overhead" 100000
          else
            "$capture" --summary-only -- "$build/launch_overhead" 100000
          fi | grep -E "^(launches|short_queue|process)"
        done
      done
    } 2>&1 | tee "$out/launch-driver.txt"
    python3 "$here/../bench/driver_launch_cost.py" "$out/launch-driver.txt" |
      tee "$out/launch-driver-cost.txt"
    ;;
  esac
done

finish
