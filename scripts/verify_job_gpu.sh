#!/usr/bin/env bash
# The flight recorder on a shared GPU machine and across a job (docs/leave-it-on.md, "A whole
# job", "Security and files"), on a machine with a GPU:
#  1. build nvtxpp-capture and the GPU test programs;
#  2. the capture's GPU-labelled tests (capture_gpu.*), capture_gpu.job among them:
#     four ranks, one rank's 1 s kernel dumps all four with their kernels, merge names it;
#  3. the capture tests that do not need a GPU (rings nameless, killed runs cleaned, job dumps)
#     on this machine too;
#  4. the job-wide dump's files kept under $OUT/job (four dumps and their merge), read by
#     nsys stats.
#
#   scripts/verify_job_gpu.sh           (writes under $OUT, default out/job-gpu)
# Environment: NSYS, OUT, BUILD_DIR (default build-job-gpu).
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-out/job-gpu}"
build="${BUILD_DIR:-$root/build-job-gpu}"
. "$(dirname "$0")/gpu_common.sh"

step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${sqlite_args[@]}" \
  >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; finish; }
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
  nvtxpp_flight_app nvtxpp_capture_gpu_app nvtxpp_capture_flight_gpu_app \
  nvtxpp_capture_graph_gpu_app nvtxpp_capture_job_gpu_app nvtxpp_capture_app nvtxpp_fake_cupti \
  >"$work/build.log" 2>&1 || {
  grep -E "error|FAILED" "$work/build.log" | head -n 40; }

step "the capture's GPU-labelled tests"
check gpu_tests ctest --test-dir "$build" --output-on-failure -R '^capture_gpu\.' -j 4

step "capture tests without a GPU, on this machine"
check capture_tests ctest --test-dir "$build" --output-on-failure -R 'capture\.(shared|job|flight)' -j 8

step "a job-wide dump kept: four ranks' dump 1 and their merge"
mkdir -p "$out/job"
check job_kept python3 "$root/tests/capture/gpu/check_job_gpu.py" \
  --capture "$build/tools/capture/nvtxpp-capture" \
  --app "$build/tests/capture/gpu/nvtxpp_capture_job_gpu_app" --keep "$work/job"
cp "$work"/job/train.rank*.dump1.sqlite "$work/job/job.dump1.sqlite" "$out/job/" 2>/dev/null
check nsys_stats "$nsys" stats --force-export=false --report nvtx_sum,cuda_gpu_kern_sum \
  "$work/job/job.dump1.sqlite"
finish
