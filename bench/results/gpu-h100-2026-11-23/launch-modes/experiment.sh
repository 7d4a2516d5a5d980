#!/bin/bash
# Device experiment 2: CPU launch cost vs GPU pace; CUPTI floor; CUPTI attributes.
cd "$(dirname "$0")/.."
source .gpu-deps/env.sh
ROUNDS=${ROUNDS:-5}
B=/tmp/bxp
head -c0 /dev/null; { lscpu | grep -iE "^CPU\\(s\\)|numa|thread|socket|core"; } > $OUT/topo.txt 2>&1
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF $CMAKE_ARGS >/dev/null && cmake --build $B -j16 --target nvtxpp-capture nvtxpp_inject >/tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
nvcc -O2 -std=c++17 -arch=sm_90 bench/gpu/launch_overhead.cu -o /tmp/lo || exit 1
CUPTI_LIB=$(dirname "$(find /usr/local/cuda/ -name 'libcupti.so' | head -1)")
echo "cupti lib: $CUPTI_LIB"
g++ -O2 -std=c++17 -shared -fPIC -I/usr/local/cuda/include bench/gpu/cupti_floor.cpp -o /tmp/libcupti_floor.so -L"$CUPTI_LIB" -Wl,-rpath,"$CUPTI_LIB" -lcupti || exit 1
C=$B/tools/capture/nvtxpp-capture
run() {
  local T="" P="${1#*@}"; [ "$P" != "all" ] && T="taskset -c $P"
  case "${1%@*}" in
    none) $T /tmp/lo 100000 ;;
    floor_k) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel $T /tmp/lo 100000 ;;
    floor_kr) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,runtime $T /tmp/lo 100000 ;;
    floor_kr_pt0) CUPTI_FLOOR_PER_THREAD=0 CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,runtime $T /tmp/lo 100000 ;;
    floor_kr_32) CUPTI_FLOOR_BUFFER_MB=32 CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,runtime $T /tmp/lo 100000 ;;
    floor_ks) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,sync $T /tmp/lo 100000 ;;
    floor_kmm) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,memcpy,memset $T /tmp/lo 100000 ;;
    floor_all) CUDA_INJECTION64_PATH=/tmp/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,runtime,memcpy,memset,sync $T /tmp/lo 100000 ;;
    capture) $T $C --summary-only -- /tmp/lo 100000 ;;
    cap_zero) XP_ZERO=1 $T $C --summary-only -- /tmp/lo 100000 ;;
    cap_pinned) XP_PINNED=1 $T $C --summary-only -- /tmp/lo 100000 ;;
    cap_nort) XP_NO_RT=1 $T $C --summary-only -- /tmp/lo 100000 ;;
    nsys) $T $NSYS profile -t cuda,nvtx --force-overwrite true -o /tmp/lx /tmp/lo 100000 ;;
  esac 2>&1 | grep -E "launches=|short_queue|cupti_floor|XP_"
}
lscpu | grep -iE "^CPU\(s\)|numa|thread|socket|core"; nvidia-smi topo -m 2>&1 | head -8
BUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//; s/^/0000/')
BUS=$(ls /sys/bus/pci/devices | grep -i "${BUS: -7}" | head -1); echo "gpu pci $BUS"
LOCAL=$(cat /sys/bus/pci/devices/$BUS/local_cpulist 2>/dev/null); echo "gpu local cpus: $LOCAL numa: $(cat /sys/bus/pci/devices/$BUS/numa_node 2>/dev/null)"
PIN=${PIN:-$(python3 - "$LOCAL" <<'PY2'
import sys,glob
def expand(t):
    out=[]
    for part in t.split(","):
        if not part: continue
        a,_,b=part.partition("-"); out+=range(int(a),int(b or a)+1)
    return out
local=set(expand(sys.argv[1])) if sys.argv[1] else None
first=set()
for p in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list"):
    first.add(expand(open(p).read().strip())[0])
cpus=sorted(c for c in first if local is None or c in local)
print(",".join(map(str,cpus)))
PY2
)}; echo "pin (one logical cpu per core, gpu-local): $PIN"
tools=(${TOOLS:-none@all floor_k@all floor_kr@all floor_kr_pt0@all floor_kr_32@all floor_ks@all floor_kmm@all capture@all})
for ((r = 0; r < ROUNDS; ++r)); do
  echo "round $r"
  n=${#tools[@]}
  for ((i = 0; i < n; ++i)); do
    t=${tools[$(( (i + r) % n ))]}
    echo "== $t"; PINNED=1 run $t
  done
done > $OUT/xp5.txt 2>&1
python3 - $OUT/xp5.txt <<'PY'
import re,statistics as st,sys
t=None;d={}
for l in open(sys.argv[1]):
    l=l.strip()
    if l.startswith("== "): t=l[3:]; continue
    m=re.search(r"ns_per_launch=([0-9.]+) cpu_ns_per_launch=([0-9.]+)",l)
    if m: d.setdefault(t,{}).setdefault("loop",[]).append(float(m.group(1))); d[t].setdefault("cpu",[]).append(float(m.group(2)))
    m=re.search(r"median_ns_per_launch=([0-9.]+) mean_ns_per_launch=([0-9.]+)",l)
    if m: d.setdefault(t,{}).setdefault("sq_med",[]).append(float(m.group(1))); d[t].setdefault("sq_mean",[]).append(float(m.group(2)))
base={k:st.median(v) for k,v in d.get("none@all",{}).items()}
for t,v in d.items(): print(t, "slow passes (>5800):", sum(1 for x in v["loop"] if x>5800), "of", len(v["loop"]), "fast-mode median:", st.median([x for x in v["loop"] if x<=5800] or [0]))
print(f"{'tool':12} " + " ".join(f"{k:>22}" for k in ("loop","cpu","sq_med","sq_mean")))
for t,v in d.items():
    cells=[]
    for k in ("loop","cpu","sq_med","sq_mean"):
        x=v.get(k,[])
        if not x: cells.append("-"); continue
        m=st.median(x); cells.append(f"{m:8.0f} (+{m-base.get(k,0):6.0f}) [{min(x):.0f}-{max(x):.0f}]")
    print(f"{t:12} "+" ".join(cells))
PY
