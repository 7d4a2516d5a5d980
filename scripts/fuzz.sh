#!/usr/bin/env bash
# Long fuzzing runs: builds the libFuzzer targets of tests/fuzz (clang) into build/fuzz and runs
# each for SECONDS (default 600), one after another, one process each, at nice 10
# (NVTXPP_FUZZ_PARALLEL=1: side by side). Inputs found grow a working corpus in
# build/fuzz/corpus/<name> (seeded from tests/fuzz/corpus); crashes land in build/fuzz/crashes/
# and the logs in build/fuzz/logs/. Once fixed, copy a crash input to
# tests/fuzz/regressions/<name>/. Usage: scripts/fuzz.sh [seconds] [fuzzer...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
fuzzers=("$@")
[ ${#fuzzers[@]} -eq 0 ] && fuzzers=(fuzz_capture fuzz_json_reader fuzz_color_name fuzz_format)
dir=build/fuzz
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_INSTALL=OFF -DNVTXPP_BUILD_FUZZERS=ON >/dev/null
cmake --build "$dir" -j "${NVTXPP_JOBS:-$(nproc)}" --target "${fuzzers[@]}"
mkdir -p "$dir/logs" "$dir/crashes"

run() {
  mkdir -p "$dir/corpus/$1"
  # -timeout: an input taking over 10 s is a hang; -rss_limit_mb: memory stays bounded.
  nice -n 10 "$dir/tests/fuzz/$1" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/crashes/$1-" \
    "$dir/corpus/$1" "tests/fuzz/corpus/$1" >"$dir/logs/$1.log" 2>&1
}
report() {  # fuzzer, status
  local r=ok
  [ "$2" -ne 0 ] && r="FAILED (see $dir/logs/$1.log)"
  echo "$1: $r; $(grep -aE '^#[0-9]+.*(DONE|pulse)' "$dir/logs/$1.log" | tail -1)"
}

status=0
if [ "${NVTXPP_FUZZ_PARALLEL:-0}" = "1" ]; then
  pids=()
  for f in "${fuzzers[@]}"; do
    run "$f" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    s=0
    wait "${pids[$i]}" || s=$?
    report "${fuzzers[$i]}" "$s"
    [ "$s" -ne 0 ] && status=1
  done
else
  for f in "${fuzzers[@]}"; do
    s=0
    run "$f" || s=$?
    report "$f" "$s"
    [ "$s" -ne 0 ] && status=1
  done
fi
exit "$status"
