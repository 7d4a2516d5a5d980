#!/usr/bin/env bash
# Long fuzzing runs: builds the libFuzzer targets of tests/fuzz (clang) into build/fuzz and runs
# each for SECONDS (default 600) in parallel, at nice 10. Inputs found grow a working corpus in
# build/fuzz/corpus/<name> (seeded from tests/fuzz/corpus); crashes land in build/fuzz/crashes/
# and the logs in build/fuzz/logs/. Copy a crash input to tests/fuzz/regressions/<name>/ once
# fixed. Usage: scripts/fuzz.sh [seconds] [fuzzer...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
fuzzers=("$@")
[ ${#fuzzers[@]} -eq 0 ] && fuzzers=(fuzz_capture fuzz_color_name fuzz_format)
dir=build/fuzz
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_INSTALL=OFF -DNVTXPP_BUILD_FUZZERS=ON >/dev/null
cmake --build "$dir" -j "${NVTXPP_JOBS:-$(nproc)}" --target "${fuzzers[@]}"
mkdir -p "$dir/logs" "$dir/crashes"
pids=()
for f in "${fuzzers[@]}"; do
  mkdir -p "$dir/corpus/$f"
  # -timeout: an input taking over 10 s is a hang; -rss_limit_mb: memory stays bounded.
  nice -n 10 "$dir/tests/fuzz/$f" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/crashes/$f-" \
    "$dir/corpus/$f" "tests/fuzz/corpus/$f" >"$dir/logs/$f.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then r=ok; else r="FAILED (see $dir/logs/${fuzzers[$i]}.log)"; status=1; fi
  echo "${fuzzers[$i]}: $r; $(grep -E '^#[0-9]+.*(DONE|pulse)' "$dir/logs/${fuzzers[$i]}.log" | tail -1)"
done
exit "$status"
