#!/usr/bin/env bash
# The README's test command: installs missing dependencies, builds everything, runs the tests
# (all but those labelled `gpu`), then builds and runs them again under AddressSanitizer +
# UndefinedBehaviorSanitizer. Set NVTXPP_TEST_GPU=1 on a machine with a GPU to run those too.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs="${NVTXPP_JOBS:-$(nproc)}"
exclude="gpu"
[ "${NVTXPP_TEST_GPU:-0}" = "1" ] && exclude="^$"

echo "== build (Release, warnings as errors)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_BENCHMARKS=ON
cmake --build build/release -j "$jobs"
echo "== tests"
ctest --test-dir build/release -j "$jobs" --output-on-failure -LE "$exclude"

echo "== tests under AddressSanitizer + UndefinedBehaviorSanitizer"
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNVTXPP_BUILD_EXAMPLES=OFF \
  "-DCMAKE_CXX_FLAGS=$san" "-DCMAKE_EXE_LINKER_FLAGS=$san" "-DCMAKE_SHARED_LINKER_FLAGS=$san"
cmake --build build/asan -j "$jobs"
# Packaging and compile-fail tests build other projects: nothing to sanitize there. Tests
# labelled `nosan` cannot run under the sanitizers' runtime (they say why in their CMakeLists).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/asan -j "$jobs" --output-on-failure \
  -LE "gpu|packaging|compile_fail|nosan"
echo "== all tests passed"
