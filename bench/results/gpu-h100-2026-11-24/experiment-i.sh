#!/bin/bash
# Where the slow state's time goes: launch_overhead's per-pass thread and process figures (its own
# CPU time, system time, context switches, page faults, every thread's CPU and run-queue wait)
# under no tool, the CUPTI floor, nvtxpp-capture and nsys; and the floor with address-space
# randomisation off (setarch -R), to see whether the state follows where things are mapped.
cd "$(dirname "$0")/../../.."
source .gpu-deps/env.sh
ROUNDS=${ROUNDS:-6}
B=/tmp/bxp
SECONDS=0
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF $CMAKE_ARGS >/tmp/c.log 2>&1 && cmake --build $B -j16 --target nvtxpp-capture nvtxpp_inject >/tmp/b.log 2>&1 || { tail -20 /tmp/c.log /tmp/b.log; exit 1; }
nvcc -O2 -std=c++17 -arch=sm_90 bench/gpu/launch_overhead.cu -o /tmp/lo || exit 1
CUPTI_LIB=$(dirname "$(find /usr/local/cuda/ -name 'libcupti.so' | head -1)")
g++ -O2 -std=c++17 -shared -fPIC -I/usr/local/cuda/include bench/gpu/cupti_floor.cpp -o /tmp/libcupti_floor.so -L"$CUPTI_LIB" -Wl,-rpath,"$CUPTI_LIB" -lcupti || exit 1
echo "built in $SECONDS s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)"
C=$B/tools/capture/nvtxpp-capture
F="CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,runtime,memcpy,memset,sync"
run() {
  case "$1" in
    none) echo "no tool:"; /tmp/lo 100000 ;;
    floor) echo "floor:"; env $F /tmp/lo 100000 ;;
    floor_norand) echo "floor norand:"; env $F setarch -R /tmp/lo 100000 ;;
    capture) echo "capture:"; $C --summary-only -- /tmp/lo 100000 ;;
    nsys) echo "nsys:"; "$NSYS" profile -t cuda,nvtx --force-overwrite true -o /tmp/ln /tmp/lo 100000 ;;
  esac 2>&1 | grep -E ":$|launches=|short_queue|threads|cannot|cupti_floor|dropped|lost|refused|setarch"
}
tools=(none floor floor_norand capture nsys)
n=${#tools[@]}
for ((r = 1; r <= ROUNDS; ++r)); do
  echo "round $r ($SECONDS s)"
  for ((i = 0; i < n; ++i)); do run ${tools[$(( (i + r) % n ))]}; done
  [ $SECONDS -gt ${BUDGET_S:-480} ] && { echo "stopped after round $r ($SECONDS s)"; break; }
done > $OUT/run-i.txt 2>&1
echo "done in $SECONDS s"
