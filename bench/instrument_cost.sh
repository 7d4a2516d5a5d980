#!/usr/bin/env bash
# The cost of annotating code without editing it (docs/annotate.md's table): the build route's
# hooks against empty hooks and one nvtxpp range, and the no-rebuild route's auditor on libm's
# cos. Medians of 5 repetitions, CPU time. Usage: bench/instrument_cost.sh [BUILD_DIR]
# (a Release build configured with -DNVTXPP_BUILD_BENCHMARKS=ON; default build/release).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
cmake --build "$build" -j "${NVTXPP_JOBS:-2}" --target instrument_bench instrument_bench_empty \
  instrument_bench_plain annotate_bench nvtxpp_bench_null_tool nvtxpp_audit
b="$build/bench"
tool="$PWD/$b/libnvtxpp_bench_null_tool.so"
audit="$(ls "$PWD/$build"/tools/capture/libnvtxpp_audit.so)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # NAME PROGRAM [ENV...]
  local name=$1 prog=$2
  shift 2
  env "$@" "$prog" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=0.3 --benchmark_format=json >"$tmp/$name.json" 2>/dev/null
}
for k in plain empty nvtxpp; do
  p="$b/instrument_bench_$k"
  [ $k = nvtxpp ] && p="$b/instrument_bench"
  run "$k" "$p"
  run "$k-tool" "$p" NVTX_INJECTION64_PATH="$tool"
done
run cos "$b/annotate_bench"
run cos-audit-notasked "$b/annotate_bench" LD_AUDIT="$audit" NVTXPP_ANNOTATE_CALLS='sin@libm.so*'
run cos-audit "$b/annotate_bench" LD_AUDIT="$audit" NVTXPP_ANNOTATE_CALLS='cos@libm.so*'
run cos-audit-tool "$b/annotate_bench" LD_AUDIT="$audit" NVTXPP_ANNOTATE_CALLS='cos@libm.so*' \
  NVTX_INJECTION64_PATH="$tool"
python3 - "$tmp" <<'PY'
import json, os, sys
d = sys.argv[1]
def med(run, bm):
    for b in json.load(open(os.path.join(d, run + ".json")))["benchmarks"]:
        if b["name"] == bm + "_median":
            return b["cpu_time"]
    return float("nan")
cpu = open("/proc/cpuinfo").read()
model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("model name")), "?")
print(f"machine: {model}, {os.cpu_count()} CPUs; CPU time per call, median of 5 (ns)")
rows = [
    ("call, uninstrumented", med("plain", "BM_call"), med("plain-tool", "BM_call")),
    ("call, empty hooks (floor)", med("empty", "BM_call"), med("empty-tool", "BM_call")),
    ("call, nvtxpp hooks, included", med("nvtxpp", "BM_call"), med("nvtxpp-tool", "BM_call")),
    ("call, nvtxpp hooks, excluded", med("nvtxpp", "BM_excluded_call"),
     med("nvtxpp-tool", "BM_excluded_call")),
    ("uninstrumented call + one nvtxpp range", med("plain", "BM_nvtxpp_range"),
     med("plain-tool", "BM_nvtxpp_range")),
]
print(f"{'build route':42} {'no tool':>9} {'null tool':>10}")
for name, a, b in rows:
    print(f"{name:42} {a:9.2f} {b:10.2f}")
floor, floor_t = rows[1][1], rows[1][2]
rng = rows[4][2] - rows[0][2]
print(f"included - floor: no tool {rows[2][1]-floor:+.2f}, null tool {rows[2][2]-floor_t:+.2f} "
      f"(one nvtxpp range under the null tool: {rng:.2f})")
print(f"excluded - floor: no tool {rows[3][1]-floor:+.2f}, null tool {rows[3][2]-floor_t:+.2f}")
print()
print(f"{'no-rebuild route (libm cos through the PLT)':42} {'ns/call':>9}")
for name, run in [("plain", "cos"), ("LD_AUDIT, cos not asked (sin@libm)", "cos-audit-notasked"),
                  ("LD_AUDIT, cos asked, no tool", "cos-audit"),
                  ("LD_AUDIT, cos asked, null tool", "cos-audit-tool")]:
    print(f"{name:42} {med(run, 'BM_cos'):9.2f}")
PY
