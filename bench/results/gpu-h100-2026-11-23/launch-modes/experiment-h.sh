#!/bin/bash
# CUPTI settings experiment: flush period, device buffer size, preallocation (floor and ours).
cd "$(dirname "$0")/.."
source .gpu-deps/env.sh
ROUNDS=${ROUNDS:-8}
B=/tmp/bxp
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF $CMAKE_ARGS >/dev/null 2>&1 && cmake --build $B -j16 --target nvtxpp-capture nvtxpp_inject >/tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
nvcc -O2 -std=c++17 -arch=sm_90 bench/gpu/launch_overhead.cu -o /tmp/lo || exit 1
CUPTI_LIB=$(dirname "$(find /usr/local/cuda/ -name 'libcupti.so' | head -1)")
g++ -O2 -std=c++17 -shared -fPIC -I/usr/local/cuda/include bench/gpu/cupti_floor.cpp -o /tmp/libcupti_floor.so -L"$CUPTI_LIB" -Wl,-rpath,"$CUPTI_LIB" -lcupti || exit 1
grep -c NVTXPP_CUPTI_DEVICE_BUFFER_KB tools/capture/cupti.cpp > $OUT/version.txt 2>&1
C=$B/tools/capture/nvtxpp-capture
F="CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,runtime,memcpy,memset,sync"
run() {
  case "$1" in
    none) echo "no tool:"; /tmp/lo 100000 ;;
    floor) echo "floor:"; env $F /tmp/lo 100000 ;;
    floor_1m) echo "floor devbuf 1M:"; env $F CUPTI_FLOOR_DEVICE_BUFFER_KB=1024 /tmp/lo 100000 ;;
    floor_256k) echo "floor devbuf 256K:"; env $F CUPTI_FLOOR_DEVICE_BUFFER_KB=256 /tmp/lo 100000 ;;
    capture) echo "capture:"; $C --summary-only -- /tmp/lo 100000 ;;
    cap_1m) echo "capture devbuf 1M:"; NVTXPP_CUPTI_DEVICE_BUFFER_KB=1024 $C --summary-only -- /tmp/lo 100000 ;;
    cap_256k) echo "capture devbuf 256K:"; NVTXPP_CUPTI_DEVICE_BUFFER_KB=256 $C --summary-only -- /tmp/lo 100000 ;;
    nsys) echo "nsys:"; "$NSYS" profile -t cuda,nvtx --force-overwrite true -o /tmp/ln /tmp/lo 100000 ;;
  esac 2>&1 | grep -E ":$|launches=|short_queue|XP_|cannot|cupti_floor|dropped|lost|refused"
}
tools=(none floor floor_1m floor_256k capture cap_1m cap_256k nsys)
n=${#tools[@]}
SECONDS=0
for ((r = 1; r <= ROUNDS; ++r)); do
  echo "round $r ($SECONDS s)"
  for ((i = 0; i < n; ++i)); do run ${tools[$(( (i + r) % n ))]}; done
  [ $SECONDS -gt ${BUDGET_S:-420} ] && { echo "stopped after round $r ($SECONDS s)"; break; }
done > $OUT/xp9.txt 2>&1
python3 - $OUT/xp9.txt <<'PY'
import re,statistics as st,sys
t=None;r=None;d={};sq={}
for l in open(sys.argv[1]):
    l=l.strip()
    m=re.match(r"round (\d+)",l)
    if m: r=int(m.group(1)); continue
    if l.endswith(":"): t=l[:-1]; continue
    m=re.search(r"^launches=\d+ ns_per_launch=([0-9.]+)",l)
    if m: d.setdefault(t,{}).setdefault(r,[]).append(float(m.group(1)))
    m=re.search(r"^short_queue .*median_ns_per_launch=([0-9.]+)",l)
    if m: sq.setdefault(t,{})[r]=float(m.group(1))
base=d["no tool"]; sqb=sq.get("no tool",{})
for t,v in d.items():
    adds=[x-st.median(base[k]) for k,xs in v.items() if k in base for x in xs]
    fast=[a for a in adds if a<=1800]; slow=[a for a in adds if a>1800]
    sqa=[x-sqb[k] for k,x in sq.get(t,{}).items() if k in sqb]
    print(f"{t:18} add {st.median(adds):6.0f} q1 {st.quantiles(adds,n=4)[0]:6.0f} q3 {st.quantiles(adds,n=4)[2]:6.0f} slow {len(slow)}/{len(adds)} fast {st.median(fast) if fast else 0:6.0f} slow {st.median(slow) if slow else 0:6.0f} shortq {st.median(sqa) if sqa else 0:6.0f}")
PY
