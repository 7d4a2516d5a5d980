#!/usr/bin/env bash
# Issue 27 (the flight recorder) on a GPU machine: GPU activity in a dump, read by nsys stats.
#  1. build nvtxpp-capture and the examples;
#  2. reduce_v3 -s 8 captured normally (-o normal.sqlite) and under --flight-recorder=256MB
#     (-o flight.sqlite: the dump at exit, flight.dump1.sqlite): the dump holds the same kernels,
#     copies, API calls and NVTX ranges as the normal capture (the window is larger than the run);
#     nsys stats runs its six reports on the dump unmodified;
#  3. the same under --flight-recorder=1MB: a window smaller than the run; the dump still reads
#     in nsys stats, with GPU work in it (kernels > 0), fewer ranges than the run made;
#  4. a trigger on a GPU program: stream_workers with --trigger='scale_add@stream_workers>1us' --trigger-max=1
#     writes one dump during the run (GPU records reach the ring as CUPTI hands over its buffers:
#     the count of kernels in it is printed, not checked);
#  5. the CUDA half (ctest capture_gpu.flight, tests/capture/gpu/check_flight_gpu.py): a dump on
#     request holds the kernels that completed before it; the hang report and `stacks PID` name
#     cudaStreamSynchronize under the ranges of a thread waiting for a kernel;
#  6. what tracking the CUDA call each thread is in costs a launch: bench/gpu/launch_overhead
#     under --flight-recorder=256MB with NVTXPP_API_CALLS=off (before) and on (after, the
#     default), alternating rounds (bench/driver_launch_cost.py reads them);
#  7. the same on a cheap runtime call (bench/gpu/api_call_cost: cudaGetDevice, cudaStreamQuery)
#     with no tool, the normal capture, and the flight recorder with the call table off and on
#     (bench/api_call_cost.py reads them).
#
#   scripts/verify_flight_gpu.sh            (writes under $OUT, default out/flight-gpu)
#
# Environment: NSYS (default .gpu-tools/nsys when present, else nsys), OUT, BUILD_DIR.
# $OUT receives log.txt, results.md, normal.sqlite, flight.dump1.sqlite, small.dump1.sqlite,
# stats.txt, launch-calls.txt, launch-calls-cost.txt, api-calls.txt and api-calls-cost.txt in
# $OUT/calls.tar.
# Exit status: 0 when every check passed, 1 otherwise.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${OUT:-out/flight-gpu}"
build="${BUILD_DIR:-$root/build-flight-gpu}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, machine, sqlite_args
results="$out/results.md"
: >"$results"

step "1. build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DNVTXPP_BUILD_BENCHMARKS=OFF -DNVTXPP_CAPTURE_REQUIRE_SQLITE=ON \
  "${sqlite_args[@]}" >"$work/configure.log" 2>&1 || { tail -n 40 "$work/configure.log"; exit 1; }
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject reduce_v3 \
  stream_workers nvtxpp_capture_flight_gpu_app >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log"; exit 1; }
nvcc -O2 -std=c++17 -arch=sm_90 "$root/bench/gpu/launch_overhead.cu" -o "$build/launch_overhead"
nvcc -O2 -std=c++17 -arch=sm_90 "$root/bench/gpu/api_call_cost.cu" -o "$build/api_call_cost"
capture="$build/tools/capture/nvtxpp-capture"
exe() { find "$build/examples" -type f -name "$1" -perm -u+x | head -n 1; }
v3=$(exe reduce_v3)
sw=$(exe stream_workers)
"$v3" -s 8 >/dev/null 2>&1  # warm-up (JIT cache)

cat >"$work/count.py" <<'PY'
import sqlite3, sys
def count(db, table, where=""):
    try:
        return db.execute(f"SELECT COUNT(*) FROM {table} {where}").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    print(path.split("/")[-1], "kernels", count(db, "CUPTI_ACTIVITY_KIND_KERNEL"),
          "memcpys", count(db, "CUPTI_ACTIVITY_KIND_MEMCPY"),
          "api", count(db, "CUPTI_ACTIVITY_KIND_RUNTIME"),
          "ranges", count(db, "NVTX_EVENTS", "WHERE eventType = 59"))
PY
reports="nvtx_sum,nvtx_gpu_proj_sum,nvtx_kern_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum"

step "2. reduce_v3 -s 8: normal capture and a flight recorder dump at exit"
check normal "$capture" --no-summary -o "$out/normal.sqlite" -- "$v3" -s 8
check flight "$capture" --no-summary --flight-recorder=256MB -o "$out/flight.sqlite" -- "$v3" -s 8
python3 "$work/count.py" "$out/normal.sqlite" "$out/flight.dump1.sqlite" | tee "$work/counts.txt"
a=$(sed -n 1p "$work/counts.txt" | cut -d' ' -f2-)
b=$(sed -n 2p "$work/counts.txt" | cut -d' ' -f2-)
if [ -n "$a" ] && [ "$a" = "$b" ]; then
  echo "- reduce_v3 -s 8: the dump at exit holds what the normal capture holds ($a)" >>"$results"
else
  failed+=("dump differs from the normal capture: '$a' vs '$b'")
fi
if "$nsys" stats --force-export=false --report "$reports" "$out/flight.dump1.sqlite" \
  >"$out/stats.txt" 2>&1 && grep -q "partial_reduce" "$out/stats.txt"; then
  echo "- nsys stats reads flight.dump1.sqlite unmodified (six reports; kernels listed)" >>"$results"
else
  failed+=("nsys stats on the dump"); tail -n 30 "$out/stats.txt"
fi

step "3. a window smaller than the run (1MB)"
check small "$capture" --no-summary --flight-recorder=1MB -o "$out/small.sqlite" -- "$v3" -s 8
python3 "$work/count.py" "$out/small.dump1.sqlite" | tee "$work/small.txt"
k=$(awk '{print $3}' "$work/small.txt")
if [ "${k:-0}" -gt 0 ] && "$nsys" stats --force-export=false --report cuda_gpu_kern_sum,nvtx_sum \
  "$out/small.dump1.sqlite" >"$work/small-stats.txt" 2>&1; then
  echo "- --flight-recorder=1MB: a dump nsys stats reads, $k kernel(s) in the window" >>"$results"
else
  failed+=("small window: kernels $k or nsys stats"); tail -n 20 "$work/small-stats.txt"
fi

step "4. a trigger during a GPU program"
"$capture" --no-summary --flight-recorder=64MB --trigger='scale_add@stream_workers>1us' --trigger-max=1 \
  --dump-on-exit=no -o "$work/trig.sqlite" -- "$sw" 2>&1 | grep -E "dump|trigger" | tee "$work/trig.txt"
if grep -q "dump 1 (trigger" "$work/trig.txt"; then
  python3 "$work/count.py" "$work/trig.dump1.sqlite" | tee -a "$results"
  echo "- stream_workers: a trigger's dump during the run (counts above)" >>"$results"
else
  echo "- stream_workers: the trigger did not fire (see the log)" >>"$results"
fi

step "5. the CUDA half: a live dump's kernels, the call a hung thread waits in"
if check flight_gpu ctest --test-dir "$build" --output-on-failure -R '^capture_gpu\.flight$'; then
  echo "- capture_gpu.flight passed: a dump on request held the 50 completed kernels; the hang" \
    "report and stacks PID named cudaStreamSynchronize under the waiting thread's ranges" >>"$results"
fi

step "6. tracking the call each thread is in: launch cost, NVTXPP_API_CALLS=off (before) and on"
# Steps 6 and 7 run pinned to the same four cores each time: unpinned, runs of one configuration
# spread over 2x on the H100 host (cores and their clocks), more than the configurations differ.
pin=""
if command -v taskset >/dev/null && [ "$(nproc)" -ge 8 ]; then pin="taskset -c 4-7"; fi
echo "pinned: ${pin:-no}"
rounds="${ROUNDS:-10}"
{
  for ((round = 1; round <= rounds; ++round)); do
    echo "round $round"
    for which in $([ $((round % 2)) = 0 ] && echo "after before" || echo "before after"); do
      echo "nvtxpp-capture $which:"
      if [ "$which" = before ]; then
        NVTXPP_API_CALLS=off $pin "$capture" --flight-recorder=256MB --dump-on-exit=no \
          --no-summary -o "$work/b.json" -- "$build/launch_overhead" 100000
      else
        $pin "$capture" --flight-recorder=256MB --dump-on-exit=no --no-summary \
          -o "$work/a.json" -- "$build/launch_overhead" 100000
      fi 2>&1 | grep -E "^(launches|short_queue|process)"
    done
  done
} 2>&1 | tee "$out/launch-calls.txt"
python3 "$root/bench/driver_launch_cost.py" "$out/launch-calls.txt" | tee "$out/launch-calls-cost.txt"

step "7. the call table on a cheap runtime call: no tool, capture, flight without and with it"
{
  for ((round = 1; round <= ${ROUNDS:-10}; ++round)); do
    echo "round $round"
    for config in none capture flight-calls-off flight; do
      echo "config $config:"
      case $config in
        none) $pin "$build/api_call_cost" 300000 ;;
        capture) $pin "$capture" --summary-only -- "$build/api_call_cost" 300000 ;;
        flight-calls-off) NVTXPP_API_CALLS=off $pin "$capture" --flight-recorder=256MB \
          --dump-on-exit=no --no-summary -o "$work/c.json" -- "$build/api_call_cost" 300000 ;;
        flight) $pin "$capture" --flight-recorder=256MB --dump-on-exit=no --no-summary \
          -o "$work/c.json" -- "$build/api_call_cost" 300000 ;;
      esac 2>&1 | grep -E "^get_device_ns"
    done
  done
} 2>&1 | tee "$out/api-calls.txt"
python3 "$root/bench/api_call_cost.py" "$out/api-calls.txt" | tee "$out/api-calls-cost.txt"
(cd "$out" && tar cf calls.tar launch-calls.txt launch-calls-cost.txt api-calls.txt \
  api-calls-cost.txt && rm -f launch-calls.txt launch-calls-cost.txt api-calls.txt api-calls-cost.txt)

cat "$results"
rm -rf "$work"
finish
