#!/bin/bash
cd "$(dirname "$0")/.."
source .gpu-deps/env.sh
ROUNDS=${ROUNDS:-6}
B=/tmp/bxp
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF $CMAKE_ARGS >/dev/null 2>&1 && cmake --build $B -j16 --target nvtxpp-capture nvtxpp_inject >/tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
nvcc -O2 -std=c++17 -arch=sm_90 bench/gpu/launch_overhead.cu -o /tmp/lo || exit 1
CUPTI_LIB=$(dirname "$(find /usr/local/cuda/ -name 'libcupti.so' | head -1)")
g++ -O2 -std=c++17 -shared -fPIC -I/usr/local/cuda/include bench/gpu/cupti_floor.cpp -o /tmp/libcupti_floor.so -L"$CUPTI_LIB" -Wl,-rpath,"$CUPTI_LIB" -lcupti || exit 1
C=$B/tools/capture/nvtxpp-capture
F="CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so"
run() {
  case "$1" in
    none) echo "no tool:"; /tmp/lo 100000 ;;
    floor) echo "CUPTI floor:"; env $F CUPTI_FLOOR_KINDS=kernel,runtime,memcpy,memset,sync /tmp/lo 100000 ;;
    floor_db) echo "floor devbuf64:"; env $F CUPTI_FLOOR_DEVICE_BUFFER_MB=64 CUPTI_FLOOR_KINDS=kernel,runtime,memcpy,memset,sync /tmp/lo 100000 ;;
    floor_nosync) echo "floor nosync:"; env $F CUPTI_FLOOR_KINDS=kernel,runtime,memcpy,memset /tmp/lo 100000 ;;
    capture) echo "nvtxpp-capture:"; $C --summary-only -- /tmp/lo 100000 ;;
    cap_db) echo "capture devbuf64:"; XP_DEVBUF_MB=64 $C --summary-only -- /tmp/lo 100000 ;;
  esac 2>&1 | grep -E ":$|launches=|short_queue|XP_|cannot"
}
tools=(none floor floor_db floor_nosync capture cap_db)
for ((r = 1; r <= ROUNDS; ++r)); do
  echo "round $r"
  for ((i = 0; i < 6; ++i)); do run ${tools[$(( (i + r) % 6 ))]}; done
done > $OUT/xp6.txt 2>&1
python3 - $OUT/xp6.txt <<'PY'
import re,statistics as st,sys
t=None;r=None;d={}
for l in open(sys.argv[1]):
    l=l.strip()
    m=re.match(r"round (\d+)",l)
    if m: r=int(m.group(1)); continue
    if l.endswith(":"): t=l[:-1]; continue
    m=re.search(r"^launches=\d+ ns_per_launch=([0-9.]+)",l)
    if m: d.setdefault(t,{}).setdefault(r,[]).append(float(m.group(1)))
base=d["no tool"]
for t,v in d.items():
    adds=[x-st.median(base[k]) for k,xs in v.items() for x in xs]
    fast=[a for a in adds if a<=1800]; slow=[a for a in adds if a>1800]
    print(f"{t:18} add {st.median(adds):6.0f} slow {len(slow)}/{len(adds)} fast {st.median(fast) if fast else 0:6.0f} slow {st.median(slow) if slow else 0:6.0f}")
PY
