#!/usr/bin/env bash
# Nsight Compute's NVTX filters on nvtxpp's ranges (docs/ncu.md): builds docs/ncu_demo.cu and the
# reduce examples, runs `ncu --nvtx --nvtx-include FILTER` on a registered string, a formatted
# name, nested ranges, a range in a domain (`domain@range/`), a start/end range, a regex and an
# exclude, and checks that ncu profiles exactly the kernels launched inside those ranges. Needs a
# GPU, nvcc and ncu. ncu runs are kept short: --section LaunchStats, --launch-count 8.
#
#   scripts/verify_ncu_gpu.sh [OUT_DIR]     (default: $OUT, else out/ncu-gpu)
#
# Environment: NCU (the ncu to run; default .gpu-tools/ncu when present, else ncu on the PATH,
# else /usr/local/cuda/bin/ncu), BUILD_DIR (default build-ncu-gpu).
# OUT_DIR receives log.txt (everything printed; the section "ncu output" is what docs/ncu.md
# quotes) and ncu-NAME.txt, ncu's whole output for each filter.
# Exit status: 0 when every filter profiled the expected kernels, 1 otherwise.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
out="${1:-${OUT:-out/ncu-gpu}}"
build="${BUILD_DIR:-build-ncu-gpu}"
. "$here/gpu_common.sh"  # out, work, the log, step, check, machine, finish

ncu="${NCU:-}"
if [ -z "$ncu" ]; then
  if [ -x "$root/.gpu-tools/ncu" ]; then ncu="$root/.gpu-tools/ncu"
  elif command -v ncu >/dev/null 2>&1; then ncu=ncu
  else ncu=/usr/local/cuda/bin/ncu; fi
fi
"$ncu" --version 2>&1 | tail -n 1
nvcc --version | tail -n 1

step "configure and build (docs/ncu_demo.cu and the reduce examples, on nvtxpp by add_subdirectory)"
mkdir -p "$work/project"
cat >"$work/project/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90-real 75-virtual)
endif()
project(nvtxpp_ncu_check LANGUAGES CXX CUDA)
add_subdirectory("$root" nvtxpp)
add_subdirectory("$root/examples/reduce" reduce)
add_executable(ncu_demo "$root/docs/ncu_demo.cu")
target_compile_features(ncu_demo PRIVATE cxx_std_17 cuda_std_17)
target_link_libraries(ncu_demo PRIVATE nvtxpp::nvtxpp)
EOF
check configure cmake -S "$work/project" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; finish; }
check build cmake --build "$build" -j "$(nproc)" --target ncu_demo reduce_v2 reduce_v3 \
  >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; finish; }
demo="$build/ncu_demo"
v2="$build/reduce/reduce_v2"
v3="$build/reduce/reduce_v3"

step "the programs alone"
check demo_run "$demo"
check v3_run "$v3" -n 1000000 -s 4

# ncu_filter NAME 'EXPECTED KERNELS' NCU-ARGS... -- PROGRAM ARGS...: runs ncu with --nvtx and
# NCU-ARGS (at most 8 kernels unless NCU-ARGS say otherwise), and checks the kernels it profiled
# (their names, namespaces dropped, in launch order, space-separated; '' for none) against
# EXPECTED.
ncu_filter() {
  local name="$1" expect="$2"; shift 2
  local args=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  shift
  local log="$out/ncu-$name.txt"
  echo
  echo "--- $name: ncu --nvtx $(printf '%q ' "${args[@]}")$(basename "$1") ${*:2}"
  local count=(--launch-count 8)
  case " ${args[*]} " in *" --launch-count "*) count=() ;; esac
  timeout 300 "$ncu" --nvtx "${args[@]}" "${count[@]}" --section LaunchStats "$@" >"$log" 2>&1
  local status=$?
  local got
  got=$(sed -n 's/^==PROF== Profiling "\([^"]*\)".*/\1/p' "$log" | sed 's/(.*//; s/.*:://' |
    tr '\n' ' ' | sed 's/ $//')
  grep -E '^==(PROF|WARNING|ERROR)==|NVTX|^ +<|REGISTERED|ASCII|UNICODE' "$log" | head -n 60
  echo "ncu status $status; kernels profiled: ${got:-(none)}; expected: ${expect:-(none)}"
  if [ "$status" != 0 ] || [ "$got" != "$expect" ]; then
    failed+=("$name (expected '${expect:-(none)}', profiled '${got:-(none)}', status $status)")
  fi
}

step "ncu output"
# docs/ncu_demo.cu: setup { fill }; step 0..2 { scale; update { shift };
# solver@solve { residual } }; transfer (start/end) { pack }.
ncu_filter registered "fill" --nvtx-include "setup/" -- "$demo"
ncu_filter formatted "scale shift residual" --nvtx-include "step 1/" -- "$demo"
ncu_filter nested "shift" --nvtx-include "step 1/update/" -- "$demo"
ncu_filter domain "residual residual residual" --nvtx-include "solver@solve/" -- "$demo"
ncu_filter domain_omitted "" --nvtx-include "solve/" -- "$demo"
ncu_filter regex "scale shift residual scale shift residual" \
  --nvtx-include "regex:step [02]/" -- "$demo"
ncu_filter exclude "scale shift" --nvtx-include "step 2/" --nvtx-exclude "solver@solve/" \
  -- "$demo"
ncu_filter start_end "pack" --nvtx-include "transfer" -- "$demo"
# The reduce examples: string literals and formatted names, as they are in examples/reduce.
ncu_filter reduce_v2_kernels "partial_reduce single_thread_sum divide_by" \
  --nvtx-include "Kernels/" -- "$v2" -n 1000000
ncu_filter reduce_v3_divide "divide_by" --nvtx-include "Divide Kernel Stream 2/" \
  -- "$v3" -n 1000000 -s 4
ncu_filter reduce_v3_sum "partial_reduce single_thread_sum partial_reduce single_thread_sum" \
  --nvtx-include "Sum Kernels Stream 1/" --launch-count 4 -- "$v3" -n 1000000 -s 4
# A range that holds copies only: ncu profiles kernels, so nothing.
ncu_filter reduce_v3_copies "" --nvtx-include "H2D Memory Stream 2/" -- "$v3" -n 1000000 -s 4

finish
