#!/usr/bin/env bash
# nvtxpp-capture on a GPU machine: builds everything, runs the GPU-labelled tests, captures
# reduce_v2, reduce_v3 -s 8 and stream_workers to .sqlite (and .json) and profiles the same
# programs with Nsight Systems, then compares the two through nsys's own stats reports
# (scripts/compare_nsys.py; and, for reference, one nsys run with another under the same rule);
# times per-launch cost (bench/gpu/launch_overhead.cu) with no tool, under nvtxpp-capture, under
# a bare CUPTI client (the floor) and under nsys; and the NVTX recording cost (capture_app
# overhead).
#
#   scripts/verify_capture_gpu.sh [OUT_DIR]        (default: out/capture-gpu)
#
# Environment: NSYS (the nsys to run; default nsys), BUILD_DIR (default build-capture-gpu),
# CMAKE_ARGS (more configure arguments, e.g. where libsqlite3 is), LAUNCH_ROUNDS (rounds of the
# per-launch comparison; default 8).
# OUT_DIR receives log.txt, compare.md (side-by-side tables), launch.txt, launch-cost.txt and
# the traces.
# Exit status: 0 when every test and comparison passed, 1 otherwise.
set -u
out="${1:-${OUT:-out/capture-gpu}}"
build="${BUILD_DIR:-build-capture-gpu}"
here="$(cd "$(dirname "$0")" && pwd)"
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, machine


step "configure and build"
check configure cmake -S "$here/.." -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DNVTXPP_BUILD_BENCHMARKS=OFF "${sqlite_args[@]}" ${CMAKE_ARGS:-} \
  >/dev/null || exit 1
check build cmake --build "$build" -j "$(nproc)" >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log"; exit 1; }
capture="$build/tools/capture/nvtxpp-capture"
nvcc -O2 -std=c++17 -arch=sm_90 "$here/../bench/gpu/launch_overhead.cu" -o "$work/launch_overhead"

step "GPU-labelled tests"
check ctest_gpu ctest --test-dir "$build" -L gpu --output-on-failure --timeout 300

exe() { find "$build/examples" -type f -name "$1" -perm -u+x | head -n 1; }

step "capture vs nsys, per program"
: >"$out/compare.md"
for cmd in "reduce_v2" "reduce_v3 -s 8" "stream_workers"; do
  read -r -a w <<<"$cmd"
  name=$(echo "$cmd" | tr ' ' '_')
  prog=$(exe "${w[0]}")
  echo "--- $cmd"
  "$prog" "${w[@]:1}" >/dev/null 2>&1  # warm-up: the first run fills the CUDA JIT cache
  check "capture $cmd" "$capture" -o "$work/$name.sqlite" -- "$prog" "${w[@]:1}" \
    >"$out/$name.summary.txt" 2>&1
  head -n 60 "$out/$name.summary.txt"
  "$capture" --no-summary -o "$work/$name.json" -- "$prog" "${w[@]:1}" >/dev/null 2>&1
  # Four nsys runs: the first is compared with ours, the next two measure nsys's own
  # run-to-run noise (compare_nsys.py --noise), the fourth takes our place under the same rule.
  for k in a b c d; do
    "$nsys" profile -t cuda,nvtx --force-overwrite true -o "$work/$name-nsys-$k" "$prog" \
      "${w[@]:1}" >/dev/null 2>&1
    "$nsys" export --type sqlite --force-overwrite true -o "$work/$name-nsys-$k.sqlite" \
      "$work/$name-nsys-$k.nsys-rep" >/dev/null 2>&1
  done
  cp "$work/$name-nsys-a.sqlite" "$work/$name-nsys.sqlite"
  { echo; echo "## $cmd"; echo; } >>"$out/compare.md"
  # cuda_api_sum: the two tools trace different sets of functions (see docs/capture-results.md), so a
  # function in one file only is a note; functions in both are compared.
  python3 "$here/compare_nsys.py" "$work/$name.sqlite" "$work/$name-nsys-a.sqlite" \
    --noise "$work/$name-nsys-b.sqlite" --noise "$work/$name-nsys-c.sqlite" \
    --lenient cuda_api_sum --nsys "$nsys" ${COMPARE_ARGS:-} >"$work/compare.txt" 2>&1
  status=$?
  cat "$work/compare.txt" | tee -a "$out/compare.md"
  [ "$status" = 0 ] || failed+=("compare $cmd (status $status)")
  # The rule's own rate of false alarms: nsys's fourth run in our place, against the same run
  # and noise. A reference for the count above, not a check.
  python3 "$here/compare_nsys.py" "$work/$name-nsys-d.sqlite" "$work/$name-nsys-a.sqlite" \
    --noise "$work/$name-nsys-b.sqlite" --noise "$work/$name-nsys-c.sqlite" \
    --lenient cuda_api_sum --nsys "$nsys" ${COMPARE_ARGS:-} >"$work/self.txt" 2>&1
  { echo; echo "### nsys against itself: its fourth run in nvtxpp-capture's place, same rule"
    echo; sed -n '/^## Summary/,$p' "$work/self.txt" | tail -n +2
  } | tee -a "$out/compare.md"
done
cp "$work"/*.json "$work"/*.sqlite "$out/" 2>/dev/null
rm -f "$out"/*-nsys-[abcd].sqlite
ls -la "$work"/*.sqlite "$work"/*.json

rounds="${LAUNCH_ROUNDS:-8}"
step "per-launch cost: 100,000 empty kernels (ns per launch), tools alternated over $rounds rounds"
# The CUPTI floor (bench/gpu/cupti_floor.cpp) enables the CUPTI record kinds nvtxpp-capture
# enables and only counts the records: what any tool that traces them through CUPTI pays.
cupti_lib=$(dirname "$(find "$(dirname "$(command -v nvcc)")/.." -name 'libcupti.so' | head -n 1)")
tools=(none capture floor nsys)
if ! g++ -O2 -std=c++17 -shared -fPIC -I"$(dirname "$(command -v nvcc)")/../include" \
  "$here/../bench/gpu/cupti_floor.cpp" -o "$work/libcupti_floor.so" -L"$cupti_lib" \
  -Wl,-rpath,"$cupti_lib" -lcupti; then
  echo "the CUPTI floor did not build: left out of the rounds"
  tools=(none capture nsys)
fi
launch_with() {
  case $1 in
    none) echo "no tool:"; "$work/launch_overhead" 100000 ;;
    capture) echo "nvtxpp-capture:"
             "$capture" --summary-only -- "$work/launch_overhead" 100000 |
               grep -E "^(launches|short_queue)" ;;
    floor) echo "CUPTI floor:"
           CUDA_INJECTION64_PATH="$work/libcupti_floor.so" \
             CUPTI_FLOOR_KINDS=kernel,runtime,memcpy,memset,sync "$work/launch_overhead" 100000 ;;
    nsys) echo "nsys -t cuda,nvtx:"
          "$nsys" profile -t cuda,nvtx --force-overwrite true -o "$work/launch-nsys" \
            "$work/launch_overhead" 100000 | grep -E "^(launches|short_queue)" ;;
  esac
}
{
  # The order turns each round, so no tool always runs first or right after nsys.
  n=${#tools[@]}
  for ((round = 1; round <= rounds; ++round)); do
    echo "round $round"
    for ((i = 0; i < n; ++i)); do launch_with "${tools[$(((i + round) % n))]}"; done
  done
} 2>&1 | tee "$out/launch.txt"
python3 "$here/../bench/launch_cost.py" "$out/launch.txt" | tee "$out/launch-cost.txt"

step "NVTX recording cost on this host (bench/recording_cost.py: push+pop against two TSC reads)"
python3 "$here/../bench/recording_cost.py" "$build" --runs 5 --capture "$capture" 2>&1 |
  tee "$out/recording.txt"

finish
