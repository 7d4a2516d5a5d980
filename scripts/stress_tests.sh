#!/usr/bin/env bash
# Runs the tests that involve threads, signals, exit() or timing N times in each build that
# scripts/test.sh made (build/release, build/asan, build/tsan where present) and reports the
# failures per test. A test that fails once in N waits for time instead of a condition.
#
# usage: [NVTXPP_STRESS_BUILDS="build/a build/b"] scripts/stress_tests.sh [N] [ctest -R regex]
#   N      repetitions (default 50)
#   regex  tests to repeat (default: the capture tests and the thread tests)
# Exit status: 0 when every repetition passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
n="${1:-50}"
regex="${2:-^capture\.|thread}"
# The memory cases take seconds each and test bounds, not timing: left out unless named.
exclude="^capture\.memory"
[ -n "${2:-}" ] && exclude="^$"
jobs="${NVTXPP_JOBS:-$(nproc)}"

total_fail=0
for build in ${NVTXPP_STRESS_BUILDS:-build/release build/asan build/tsan}; do
  [ -f "$build/CTestTestfile.cmake" ] || continue
  tests=$(ctest --test-dir "$build" -N -R "$regex" -E "$exclude" | sed -n 's/^ *Test *#[0-9]*: //p')
  [ -n "$tests" ] || continue
  declare -A fails=()
  for t in $tests; do fails[$t]=0; done
  log=$(mktemp)
  for ((i = 1; i <= n; i++)); do
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" \
      ctest --test-dir "$build" -j "$jobs" -R "$regex" -E "$exclude" --output-on-failure >"$log" 2>&1
    for t in $(awk '/tests FAILED:/ {f = 1; next} f && / - / {print $3}' "$log"); do
      fails[$t]=$((fails[$t] + 1))
      total_fail=$((total_fail + 1))
      echo "$build: run $i: $t failed" >&2
      cp "$log" "/tmp/stress-$(basename "$build")-$t-$i.log"
    done
  done
  rm -f "$log"
  echo "== $build: $n runs"
  for t in $tests; do
    printf '  %-32s %d/%d failed\n' "$t" "${fails[$t]}" "$n"
  done
  unset fails
done
if [ "$total_fail" -eq 0 ]; then
  echo "stress: no failure"
  exit 0
fi
echo "stress: $total_fail failure(s); logs in /tmp/stress-*.log"
exit 1
