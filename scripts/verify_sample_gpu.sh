#!/usr/bin/env bash
# Issue 41 (the sampled GPU mode) on a GPU machine: correctness, a raise on a trigger, and the
# cost of leaving the flight recorder on (docs/leave-it-on-gpu.md).
#
#   scripts/verify_sample_gpu.sh [OUT_DIR]     (default: $OUT, else out/sample-gpu)
#
# Environment: BUILD_DIR (default build-sample-gpu), ROUNDS (default 5), SECONDS_PER_RUN
# (default 4), PARTS (default "check raise cost tests": any of them, for one device call each).
#  1. bench/gpu/train_step.cu (about 400 ranges and 241 kernels a step, kernels of 3 us to 1 ms)
#     under a full capture and under --cuda-sample=100ms/1s: in the sampled trace every kept
#     launch started in a period, and each step wholly inside a period has the full capture's
#     kernels (tests/capture/sample_check.py); `nsys stats` runs six reports on the sampled
#     SQLite unmodified.
#  2. A slow step caught by a trigger under --flight-recorder --cuda-sample=20ms/2s
#     --cuda-raise=1s: the trigger's dump, then the dump of the raised steps, with their kernels.
#  3. The cost: ROUNDS alternated rounds of no tool, --cuda=off, --cuda-sample at 1/10
#     (100ms/1s) and 1/100 (10ms/1s), the flight recorder sampled at 1/10 with and without its
#     call table, full capture, and `nsys profile -t cuda,nvtx`: each run's mean step, as a ratio
#     to the round's run without a tool (bench/results/.../sample-cost.txt).
#  4. `ctest -L gpu`: the GPU tests, after the CUPTI source changed.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/sample-gpu}}"
build="${BUILD_DIR:-build-sample-gpu}"
rounds="${ROUNDS:-5}"
parts=" ${PARTS:-check raise cost tests} "
want() { [[ "$parts" == *" $1 "* ]]; }
secs="${SECONDS_PER_RUN:-4}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, the log, step, check, finish, sqlite_args

step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DNVTXPP_BUILD_TESTS=ON -DNVTXPP_BUILD_BENCHMARKS=OFF \
  "${sqlite_args[@]}" >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; exit 1; }
if want tests; then
  check build cmake --build "$build" -j "$(nproc)" >"$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log"; exit 1; }
else
  check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
    >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
fi
capture="$build/tools/capture/nvtxpp-capture"
train="$work/train_step"
check nvcc nvcc -O2 -std=c++17 -o "$train" "$root/bench/gpu/train_step.cu" || exit 1
reports="nvtx_sum,nvtx_gpu_proj_sum,nvtx_kern_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum"
results="$out/results.txt"
: >"$results"

if want check; then
step "1. correctness: a full capture and a sampled one of the same program"
check full "$capture" --no-summary -o "$out/full.json" -- "$train" --seconds 2
check sampled "$capture" -o "$out/sampled.json" --cuda-sample=100ms/1s -- \
  "$train" --seconds 4 >"$out/sampled-summary.txt" 2>&1
grep -A3 "GPU detail was sampled" "$out/sampled-summary.txt"
check sample_check python3 "$root/tests/capture/sample_check.py" "$out/full.json" \
  "$out/sampled.json" | tee -a "$results"
check sampled_sqlite "$capture" --no-summary -o "$out/sampled.sqlite" --cuda-sample=100ms/1s -- \
  "$train" --seconds 3
if "$nsys" stats --force-export=false --report "$reports" "$out/sampled.sqlite" \
  >"$out/sampled-stats.txt" 2>&1 && grep -q "busy" "$out/sampled-stats.txt" &&
  grep -q "GPU detail: sampled" "$out/sampled-stats.txt"; then
  echo "- nsys stats ran its six reports on the sampled SQLite unmodified (kernels and the" \
    "'GPU detail: sampled' ranges listed)" >>"$results"
else
  failed+=("nsys stats on the sampled SQLite"); tail -n 30 "$out/sampled-stats.txt"
fi

fi

if want raise; then
step "2. a slow step caught by a trigger, GPU detail raised after it"
check flight "$capture" --no-summary --flight-recorder=30s --cuda-sample=20ms/2s \
  --cuda-raise=1s --trigger='step>3x' -o "$out/flight.sqlite" -- \
  "$train" --seconds 6 --slow 300 >"$out/flight-stderr.txt" 2>&1
grep "dump" "$out/flight-stderr.txt"
python3 - "$out"/flight.dump*.sqlite <<'PY' | tee -a "$results"
import sqlite3, sys
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    def one(q):
        try:
            return db.execute(q).fetchone()[0]
        except sqlite3.Error:
            return 0
    periods = db.execute(
        "SELECT COALESCE(e.text, s.value), COUNT(*), SUM(e.end - e.start) FROM NVTX_EVENTS e "
        "LEFT JOIN StringIds s ON e.textId = s.id WHERE e.eventType = 60 AND "
        "COALESCE(e.text, s.value) LIKE 'GPU detail:%' GROUP BY 1").fetchall()
    print(f"- {path.split('/')[-1]}: {one('SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')} "
          f"kernels, {one('SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 59')} ranges; "
          + ", ".join(f"{n} x '{t}' ({(d or 0) / 1e6:.0f} ms)" for t, n, d in periods))
PY
raised=$(ls "$out"/flight.dump2.sqlite 2>/dev/null)
if [ -n "$raised" ] && grep -q "dump 2 (GPU detail raised after dump 1" "$out/flight-stderr.txt" &&
  "$nsys" stats --force-export=false --report cuda_gpu_kern_sum,nvtx_sum "$raised" \
    >"$out/flight-dump2-stats.txt" 2>&1 && grep -q "busy" "$out/flight-dump2-stats.txt"; then
  echo "- the raised steps' dump (dump 2) holds kernels, read by nsys stats" >>"$results"
else
  failed+=("the raised steps' dump"); tail -n 20 "$out/flight-stderr.txt"
fi

fi

if want cost; then
step "3. cost: $rounds alternated rounds, ${secs} s of steps each run"
configs=(none cuda_off sample10 sample100 flight10 flight10_nocalls full nsys)
run_config() { # run_config NAME -> the program's output on stdout
  local name="$1" tool=()
  case "$name" in
    none) ;;
    cuda_off) tool=("$capture" --summary-only --cuda=off --) ;;
    sample10) tool=("$capture" --summary-only --cuda-sample=100ms/1s --) ;;
    sample100) tool=("$capture" --summary-only --cuda-sample=10ms/1s --) ;;
    flight10 | flight10_nocalls)
      tool=("$capture" --no-summary --flight-recorder=256MB --dump-on-exit=no
            --cuda-sample=100ms/1s -o "$work/f.sqlite" --) ;;
    full) tool=("$capture" --summary-only --) ;;
    nsys) tool=("$nsys" profile -t cuda,nvtx --force-overwrite true -o "$work/n") ;;
  esac
  local phase=()
  case "$name" in sample10 | flight10*) phase=(--phase 100/1000) ;; sample100) phase=(--phase 10/1000) ;; esac
  if [ "$name" = flight10_nocalls ]; then
    NVTXPP_API_CALLS=off "${tool[@]}" "$train" --seconds "$secs" "${phase[@]}" 2>/dev/null
  else
    "${tool[@]}" "$train" --seconds "$secs" "${phase[@]}" 2>/dev/null
  fi
}
: >"$out/cost-runs.txt"
for r in $(seq 1 "$rounds"); do
  # Each round in another order (rotated), so no configuration always runs first.
  n=${#configs[@]}
  for k in $(seq 0 $((n - 1))); do
    c="${configs[$(((k + r) % n))]}"
    line=$(run_config "$c" | grep -E "^(steps|phase)=?" | tr '\n' ' ')
    echo "round=$r config=$c $line" | tee -a "$out/cost-runs.txt"
  done
done
python3 "$root/bench/sample_cost.py" "$out/cost-runs.txt" | tee "$out/sample-cost.txt"
fi

if want tests; then
  step "4. the GPU tests"
  check gpu_tests ctest --test-dir "$build" -L gpu -j 8 --output-on-failure \
    >"$out/ctest-gpu.txt" 2>&1
  tail -n 5 "$out/ctest-gpu.txt"
fi
cat "$results"
finish
