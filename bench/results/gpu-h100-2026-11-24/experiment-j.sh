#!/bin/bash
# Does tracing the runtime API cost the launching thread, and which route is cheapest? The CUPTI
# floor with all five record kinds, without runtime API records, and with the launch functions
# traced through CUPTI's callback API instead (runtime_cb_launch); nvtxpp-capture and nsys beside
# them. Also lists the CUPTI functions that Nsight Systems' injection libraries import.
cd "$(dirname "$0")/../../.."
source .gpu-deps/env.sh
ROUNDS=${ROUNDS:-7}
B=/tmp/bxp
SECONDS=0
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF $CMAKE_ARGS >/tmp/c.log 2>&1 && cmake --build $B -j16 --target nvtxpp-capture nvtxpp_inject >/tmp/b.log 2>&1 || { tail -20 /tmp/c.log /tmp/b.log; exit 1; }
nvcc -O2 -std=c++17 -arch=sm_90 bench/gpu/launch_overhead.cu -o /tmp/lo || exit 1
CUPTI_LIB=$(dirname "$(find /usr/local/cuda/ -name 'libcupti.so' | head -1)")
g++ -O2 -std=c++17 -shared -fPIC -I/usr/local/cuda/include bench/gpu/cupti_floor.cpp -o /tmp/libcupti_floor.so -L"$CUPTI_LIB" -Wl,-rpath,"$CUPTI_LIB" -lcupti || exit 1
echo "built in $SECONDS s"
{
  for lib in $(find / -xdev \( -name 'libToolsInjection*.so*' -o -name 'libcupti*.so*' \) -path '*nsight*' 2>/dev/null); do
    echo "== $lib"
    nm -D --undefined-only "$lib" 2>/dev/null | grep -i cupti | awk '{print $NF}' | sort -u | tr '\n' ' '
    echo
  done
} > $OUT/nsys-cupti.txt 2>&1
C=$B/tools/capture/nvtxpp-capture
F="CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so"
run() {
  case "$1" in
    none) echo "no tool:"; /tmp/lo 100000 ;;
    floor) echo "floor:"; env $F CUPTI_FLOOR_KINDS=kernel,runtime,memcpy,memset,sync /tmp/lo 100000 ;;
    floor_nort) echo "floor no runtime:"; env $F CUPTI_FLOOR_KINDS=kernel,memcpy,memset,sync /tmp/lo 100000 ;;
    floor_cbl) echo "floor runtime_cb_launch:"; env $F CUPTI_FLOOR_KINDS=kernel,memcpy,memset,sync,runtime_cb_launch /tmp/lo 100000 ;;
    capture) echo "capture:"; $C --summary-only -- /tmp/lo 100000 ;;
    nsys) echo "nsys:"; "$NSYS" profile -t cuda,nvtx --force-overwrite true -o /tmp/ln /tmp/lo 100000 ;;
  esac 2>&1 | grep -E ":$|launches=|short_queue|threads|cannot|cupti_floor|dropped|lost|refused"
}
tools=(none floor floor_nort floor_cbl capture nsys)
n=${#tools[@]}
for ((r = 1; r <= ROUNDS; ++r)); do
  echo "round $r ($SECONDS s)"
  for ((i = 0; i < n; ++i)); do run ${tools[$(( (i + r) % n ))]}; done
  [ $SECONDS -gt ${BUDGET_S:-500} ] && { echo "stopped after round $r ($SECONDS s)"; break; }
done > $OUT/run-j.txt 2>&1
echo "done in $SECONDS s"
