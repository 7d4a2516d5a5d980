#!/usr/bin/env bash
# Runs the nvtxpp benchmark suite and prints the ratio table (docs/performance.md explains it).
#
# usage: bench/run.sh [options]
#   -b DIR    build directory (default: build-bench; configured and built when missing)
#   -r N      repetitions per case; medians are reported (default: 10)
#   -t S      --benchmark_min_time per repetition, seconds (default: 0.2)
#   -m LIST   situations, comma-separated (default: none,null,capture):
#               none     no tool attached
#               null     a minimal tool that listens and records nothing (nvtxpp's own cost)
#               capture  under nvtxpp-capture ("pending" when the tool is not built): one
#                        process per case, raw recording on /dev/shm
#               nsys     under `nsys profile -t nvtx` (set NSYS to the nsys to use)
#   -i        also count instructions per iteration with callgrind (no tool and null tool)
#   -o DIR    where the JSON, logs and table go (default: BUILD_DIR/bench-results)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=build-bench
reps=10
min_time=0.2
modes=none,null,capture
icount=0
out=
while getopts "b:r:t:m:io:h" opt; do
  case $opt in
    b) build=$OPTARG ;;
    r) reps=$OPTARG ;;
    t) min_time=$OPTARG ;;
    m) modes=$OPTARG ;;
    i) icount=1 ;;
    o) out=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
case $build in /*) ;; *) build=$root/$build ;; esac
out=${out:-$build/bench-results}
mkdir -p "$out"

bench=$build/bench/nvtxpp_bench
null_tool=$build/bench/libnvtxpp_bench_null_tool.so
if [ ! -x "$bench" ] || [ ! -e "$null_tool" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_BENCHMARKS=ON \
    -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_EXAMPLES=OFF >"$out/configure.log"
  cmake --build "$build" -j"$(nproc)" --target nvtxpp_bench nvtxpp_bench_null_tool \
    >"$out/build.log"
fi

gbench_args=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true
  --benchmark_min_time="$min_time" --benchmark_out_format=json)

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs"
  echo "compiler: $(${CXX:-c++} --version | head -1)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
} >"$out/machine.txt"
cat "$out/machine.txt"

report_args=()
IFS=, read -r -a mode_list <<<"$modes"
for mode in "${mode_list[@]}"; do
  json=$out/$mode.json
  case $mode in
    none)
      env -u NVTX_INJECTION64_PATH "$bench" "${gbench_args[@]}" --benchmark_out="$json" \
        >"$out/$mode.log" 2>&1 ;;
    null)
      NVTX_INJECTION64_PATH=$null_tool "$bench" "${gbench_args[@]}" --benchmark_out="$json" \
        >"$out/$mode.log" 2>&1 ;;
    capture)
      capture=${NVTXPP_CAPTURE:-$build/tools/capture/nvtxpp-capture}
      [ -x "$capture" ] || capture=$(command -v nvtxpp-capture || true)
      if [ -z "$capture" ]; then
        echo "capture: nvtxpp-capture not found; column left pending"
        report_args+=("capture=pending")
        continue
      fi
      # One process per case, its raw recording on tmpfs (/dev/shm) when there is one: a run
      # records hundreds of millions of ranges (GBs of raw data), and past the disk's sustained
      # throughput the recorder waits for the disk (bounded memory), which would measure the
      # disk. Summary only: a JSON trace of every iteration would be tens of GB.
      raw=/dev/shm
      [ -d "$raw" ] && [ -w "$raw" ] || raw=$out
      parts=()
      : >"$out/$mode.log"
      for c in $("$bench" --benchmark_list_tests); do
        part=$out/$mode-part-${#parts[@]}.json
        TMPDIR=$raw "$capture" --summary-only -- "$bench" "${gbench_args[@]}" \
          --benchmark_filter="^$c\$" --benchmark_out="$part" >"$out/$mode-case.log" 2>&1
        head -c 4000 "$out/$mode-case.log" >>"$out/$mode.log"
        parts+=("$part")
      done
      python3 - "$json" "${parts[@]}" <<'PY'
import json, sys
out, parts = sys.argv[1], sys.argv[2:]
merged = None
for p in parts:
    with open(p) as f:
        d = json.load(f)
    if merged is None:
        merged = d
    else:
        merged["benchmarks"] += d["benchmarks"]
with open(out, "w") as f:
    json.dump(merged, f, indent=1)
PY
      rm -f "${parts[@]}" "$out/$mode-case.log" ;;
    nsys)
      nsys=${NSYS:-nsys}
      "$nsys" profile -t nvtx --force-overwrite true -o "$out/nsys-bench" \
        "$bench" "${gbench_args[@]}" --benchmark_out="$json" >"$out/$mode.log" 2>&1 ;;
    *) echo "unknown situation: $mode" >&2; exit 2 ;;
  esac
  report_args+=("$mode=$json")
done

if [ "$icount" = 1 ]; then
  for mode in none null; do
    : >"$out/icount-$mode.tsv"
    for c in $("$bench" --list-icount); do
      f=$out/callgrind.tmp
      if [ "$mode" = null ]; then
        NVTX_INJECTION64_PATH=$null_tool valgrind --tool=callgrind --collect-atstart=no \
          --callgrind-out-file="$f" "$bench" --icount="$c" --n=100000 >/dev/null 2>&1
      else
        env -u NVTX_INJECTION64_PATH valgrind --tool=callgrind --collect-atstart=no \
          --callgrind-out-file="$f" "$bench" --icount="$c" --n=100000 >/dev/null 2>&1
      fi
      total=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f")
      python3 -c "print('$c', $total / 100000)" >>"$out/icount-$mode.tsv"
      rm -f "$f"
    done
    report_args+=(--icount "$mode=$out/icount-$mode.tsv")
  done
fi

python3 "$here/report.py" "${report_args[@]}" | tee "$out/table.md"
