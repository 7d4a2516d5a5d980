#!/usr/bin/env bash
# The README's test command: installs missing dependencies, builds everything, runs the tests
# (all but those labelled `gpu`), then builds and runs them again under AddressSanitizer +
# UndefinedBehaviorSanitizer, the thread and capture tests under ThreadSanitizer, and a short run
# of each libFuzzer target (tests/fuzz; scripts/fuzz.sh for long runs). Set NVTXPP_TEST_GPU=1 on
# a machine with a GPU to run those too.
# `scripts/test.sh --build NAME` (release, asan, tsan or fuzz) runs one of its builds alone.
set -euo pipefail
cd "$(dirname "$0")/.."
self="$PWD/scripts/test.sh"

jobs="${NVTXPP_JOBS:-$(nproc)}"
# ctest's slots: four a core, and two more. A test that keeps a core busy takes four, one that
# mostly sleeps or waits takes one (tests/test_costs.cmake): no more busy tests run at once than
# there are cores, and those that wait fill the rest.
ctest_jobs=$((4 * jobs + 2))
# ccache when it is installed (never required): every configuration below compiles through it,
# with paths taken relative to the checkout, so that another clone's builds hit the cache too.
launcher=()
if command -v ccache >/dev/null 2>&1 && [ "${NVTXPP_CCACHE:-1}" != 0 ]; then
  export CCACHE_BASEDIR="$PWD"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
exclude="gpu"
[ "${NVTXPP_TEST_GPU:-0}" = "1" ] && exclude="^$"

# The builds ------------------------------------------------------------------------------------

build_release() {
  # The programs of the GPU tests only where they run (NVTXPP_TEST_GPU=1): without a GPU, CI
  # would compile a corpus of CUDA programs (cuBLAS, cuFFT, Thrust, ...) that nothing runs, a
  # sixth of this build. The GPU machine's scripts build them (scripts/*_gpu.sh).
  local gpu_tests=OFF
  [ "${NVTXPP_TEST_GPU:-0}" = "1" ] && gpu_tests=ON
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_BENCHMARKS=ON \
    -DNVTXPP_GPU_TESTS=$gpu_tests "${launcher[@]}"
  cmake --build build/release -j "$jobs"
}

build_asan() {
  local san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
  # (Tests that only compile run in the release stage: nothing of them runs under a sanitizer.
  # Nor do the GPU tests: their programs are not built here.)
  # Debug (no optimisation) with line tables only (-g1): a sanitizer's report names each frame's
  # function, file and line; full debug information would only slow the compiler and the linker.
  cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNVTXPP_BUILD_EXAMPLES=OFF \
    -DNVTXPP_COMPILE_ONLY_TESTS=OFF -DNVTXPP_GPU_TESTS=OFF "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_DEBUG=-g1 "-DCMAKE_CXX_FLAGS=$san" "-DCMAKE_EXE_LINKER_FLAGS=$san" \
    "-DCMAKE_SHARED_LINKER_FLAGS=$san"
  cmake --build build/asan -j "$jobs"
}

build_tsan() {
  # Only the targets those tests need; the injection library and the CUPTI test double too,
  # since they are loaded into the TSan-built capture app. tests/tsan.supp suppresses NVTX's own
  # header code only (each line says why). capture.memory and capture.memory_threads (10 million
  # ranges each) are left out: under TSan they take minutes, and the ASan stage already runs
  # them. Line tables only (-g1): a report names each frame's function, file and line (inlined
  # frames too: tsan.supp's NVTX lines still match); full debug information took a quarter of
  # the build.
  local tsan="-fsanitize=thread -fno-omit-frame-pointer"
  cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVTXPP_BUILD_EXAMPLES=OFF \
    "${launcher[@]}" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
    -DNVTXPP_INSTALL=OFF "-DCMAKE_CXX_FLAGS=$tsan" "-DCMAKE_EXE_LINKER_FLAGS=$tsan" \
    "-DCMAKE_SHARED_LINKER_FLAGS=$tsan" "-DCMAKE_MODULE_LINKER_FLAGS=$tsan"
  local targets=(test_threads test_memory nvtxpp-capture nvtxpp_inject nvtxpp_capture_app
    nvtxpp_window_app instrument_test nvtxpp_ring_threads_test nvtxpp_call_table_test
    nvtxpp_flight_app nvtxpp_merge_stages_test nvtxpp_capture_app_heavy nvtxpp_window_app_heavy
    nvtxpp_flight_app_heavy nvtxpp_heavy_tls_check nvtxpp_refuse_threads nvtxpp_top_app
    nvtxpp_live_table_test)
  local all t
  all=$(cmake --build build/tsan --target help)
  for t in nvtxpp_capture_nvtxpp_app nvtxpp_fake_cupti nvtxpp_capture_graph_app \
    nvtxpp_cupti_convert_test test_sqlite_writer nvtxpp_capture_reports_app nvtxpp_diff_app; do
    # optional targets (CUPTI headers, libsqlite3): built when this configuration has them
    if grep -q "^$t:" <<<"$all"; then targets+=("$t"); fi
  done
  cmake --build build/tsan -j "$jobs" --target "${targets[@]}"
}

build_fuzz() {
  command -v clang++ >/dev/null || return 0  # (the fuzz stage says so)
  # (-O2 as the fuzzers run; line tables only, enough for a crash's stack)
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
    -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_INSTALL=OFF -DNVTXPP_BUILD_FUZZERS=ON "${launcher[@]}"
  cmake --build build/fuzz -j "$jobs" --target fuzz_capture fuzz_json_reader fuzz_color_name \
    fuzz_format
}

if [ "${1:-}" = "--build" ]; then
  case "${2:-}" in
    release | asan | tsan | fuzz) "build_$2" ;;
    *)
      echo "usage: scripts/test.sh [--build release|asan|tsan|fuzz]" >&2
      exit 2
      ;;
  esac
  exit 0
fi

scripts/install-deps.sh

# Each stage's time, printed at the end (and when a stage fails: the stages so far): wall seconds,
# and the CPU seconds (user + system) of the processes it ran, which another load on the machine
# changes less.
ticks=$(getconf CLK_TCK)
cpu_seconds() {  # the CPU time of this script's finished children (cutime + cstime), in seconds
  local stat
  read -r -a stat </proc/$$/stat
  echo $(((stat[15] + stat[16]) / ticks))
}
stages=()
stage_start=$SECONDS
stage_cpu=0
stage() {  # stage NAME: closes the stage before it, opens NAME
  local cpu
  cpu=$(cpu_seconds)
  if [ -n "${stage_name:-}" ]; then
    stages+=("$(printf '%-44s %5d s %6d CPU-s' "$stage_name" $((SECONDS - stage_start)) \
      $((cpu - stage_cpu)))")
  fi
  stage_name="$1"
  stage_start=$SECONDS
  stage_cpu=$cpu
  [ -n "$1" ] && echo "== $1"
  return 0
}
print_stages() {
  stage ""
  echo "== stage times"
  printf '  %s\n' "${stages[@]}"
  printf '  %-44s %5d s %6d CPU-s\n' "total" "$SECONDS" "$(cpu_seconds)"
}
trap print_stages EXIT

stage "build (Release, warnings as errors)"
build_release
stage "tests"
ctest --test-dir build/release -j "$ctest_jobs" --output-on-failure -LE "$exclude"

stage "build under AddressSanitizer + UndefinedBehaviorSanitizer"
build_asan
stage "tests under AddressSanitizer + UndefinedBehaviorSanitizer"
# Packaging and compile-fail tests build other projects: nothing to sanitize there. Tests
# labelled `nosan` cannot run under the sanitizers' runtime (they say why in their CMakeLists).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/asan -j "$ctest_jobs" --output-on-failure \
  -LE "gpu|packaging|compile_fail|nosan"

stage "build under ThreadSanitizer"
build_tsan
stage "thread and capture tests under ThreadSanitizer"
# Most of these wait most of their time: there, only the tests that keep a core busy take four
# slots. A TSan-built process whose threads outlive main sleeps at its exit so that they run on
# while the exit handlers do (races at exit): 250 ms, not TSan's 1 s, still spans one whole wait
# of the block writer (200 ms when idle; our other threads wait for a request or a period of the
# test's own), and the stage's hundreds of such exits take a third less time.
TSAN_OPTIONS="halt_on_error=1:atexit_sleep_ms=250:suppressions=$PWD/tests/tsan.supp" \
  ctest --test-dir build/tsan -j "$ctest_jobs" --output-on-failure -R 'thread|^capture\.|^test_memory$' \
  -E '^capture\.memory' -LE "$exclude"

stage "fuzzers (libFuzzer, 20 s each)"
if command -v clang++ >/dev/null; then
  build_fuzz
  # Seeds and saved crash inputs first (plain tests), then a short fresh run of each.
  ctest --test-dir build/fuzz -j "$jobs" --output-on-failure -L fuzz
  # The four runs, as many at once as there are cores: each still fuzzes for its 20 s.
  fuzzers=(fuzz_capture fuzz_json_reader fuzz_color_name fuzz_format)
  fuzz_failed=()
  for ((i = 0; i < ${#fuzzers[@]}; i += jobs)); do
    pids=()
    for f in "${fuzzers[@]:i:jobs}"; do
      mkdir -p "build/fuzz/corpus/$f"
      "build/fuzz/tests/fuzz/$f" -max_total_time=20 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="build/fuzz/$f-" "build/fuzz/corpus/$f" "tests/fuzz/corpus/$f" \
        >"build/fuzz/$f.log" 2>&1 &
      pids+=("$!")
    done
    for k in "${!pids[@]}"; do
      f="${fuzzers[i + k]}"
      status=0
      wait "${pids[k]}" || status=$?
      echo "-- $f"
      tail -n 3 "build/fuzz/$f.log"
      [ "$status" = 0 ] || fuzz_failed+=("$f (exit $status)")
    done
  done
  if [ ${#fuzz_failed[@]} -gt 0 ]; then
    echo "fuzzers failed: ${fuzz_failed[*]} (their logs: build/fuzz/*.log)"
    exit 1
  fi
else
  echo "no clang++: fuzzers skipped"
fi
stage ""
echo "== all tests passed"
