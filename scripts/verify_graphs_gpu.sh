#!/usr/bin/env bash
# CUDA graphs on a GPU machine (issue #22): builds nvtxpp-capture and examples/graphs, runs the
# GPU tests of graph attribution, prints the per-range GPU table of the issue's 3-replay program
# under nvtxpp-capture (summary, JSON, SQLite and a join of our table with NVTX_EVENTS), profiles
# the same program with Nsight Systems (--cuda-graph-trace=graph and =node) for the comparison,
# runs scripts/nsys_graph_ranges.py on nsys's export, and times 10,000 replays
# (bench/gpu/graph_replay_cost.cu) with no tool, under nvtxpp-capture, and under nvtxpp-capture
# with graph node events off.
#
#   scripts/verify_graphs_gpu.sh [OUT_DIR]      (default: $OUT, else out/graphs-gpu)
#
# Environment: NSYS (default .gpu-tools/nsys when present, else nsys), BUILD_DIR (default
# build-graphs-gpu), COST_RUNS (runs of each configuration in the cost comparison, default 5).
# OUT_DIR receives (8 files): log.txt, issue_summary.txt, issue.json, issue.svg, nsys.txt,
# replay_cost.txt, all_summary.csv, all.json.
# Exit status: 0 when every check passed, 1 otherwise.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/graphs-gpu}}"
build="${BUILD_DIR:-build-graphs-gpu}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, machine


step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DNVTXPP_BUILD_BENCHMARKS=OFF "${sqlite_args[@]}" >/dev/null || exit 1
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
  graph_replay nvtxpp_capture_graph_gpu_app >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log"; exit 1; }
capture="$build/tools/capture/nvtxpp-capture"
app=$(find "$build/examples" -type f -name graph_replay -perm -u+x | head -n 1)
check bench_build nvcc -O2 -std=c++17 -arch=sm_90 "$root/bench/gpu/graph_replay_cost.cu" \
  -o "$work/graph_replay_cost"

step "GPU tests: graph_replay (3 replays, --all) and capture_gpu.graphs"
check ctest_gpu ctest --test-dir "$build" -R 'graph_replay|capture_gpu\.graphs' -L gpu \
  --output-on-failure --timeout 300
check graphs_all python3 "$root/tests/capture/gpu/check_graphs_gpu.py" --capture "$capture" \
  --app "$build/tests/capture/gpu/nvtxpp_capture_graph_gpu_app" --out "$work/all"
cp "$work/all/graphs_all_summary.csv" "$out/all_summary.csv" 2>/dev/null
cp "$work/all/graphs_all.json" "$out/all.json" 2>/dev/null

step "the issue's program under nvtxpp-capture: layer > attention (2 kernels), mlp (1), 3 replays"
"$app" >/dev/null 2>&1  # warm-up: the first run fills the CUDA JIT cache
check capture_issue "$capture" -o "$out/issue.json" -- "$app" >"$out/issue_summary.txt" 2>&1
cat "$out/issue_summary.txt"
check capture_issue_sqlite "$capture" --no-summary -o "$work/issue.sqlite" -- "$app"
python3 - "$work/issue.sqlite" <<'PY' | tee -a "$out/issue_summary.txt"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
print("\nNVTXPP_GRAPH_RANGES joined with NVTX_EVENTS (the capture-time range of each instance):")
q = """SELECT coalesce(n.text, s.value) AS range, count(*) AS instances,
              sum(g.kernels) AS kernels, sum(g.end - g.start) AS gpu_ns
       FROM NVTXPP_GRAPH_RANGES g
       JOIN NVTX_EVENTS n ON n.globalTid = g.globalTid AND n.start = g.nvtxStart
                          AND n.eventType = 59
       LEFT JOIN StringIds s ON s.id = n.textId
       GROUP BY range ORDER BY gpu_ns DESC"""
for r in con.execute(q):
    print("  ", r)
PY
# Our .sqlite, with NVTXPP_GRAPH_RANGES beside Nsight Systems' tables, read by nsys's own reports.
{ echo; echo "nsys stats on nvtxpp-capture's .sqlite (CPU-side ranges as without graphs):"
  "$nsys" stats -r nvtx_sum,nvtx_gpu_proj_sum "$work/issue.sqlite" 2>&1 | grep -v "^$"
} | tee -a "$out/issue_summary.txt"
check issue_table python3 - "$out/issue_summary.txt" <<'PY'
import sys
text = open(sys.argv[1]).read()
want = {":layer": ("3", "9"), ":attention": ("3", "6"), ":mlp": ("3", "3")}
sect = text.split("NVTX Ranges in CUDA Graph Launches", 1)
rows = {}
if len(sect) == 2:
    for line in sect[1].splitlines()[3:]:
        if not line.strip():
            break
        f = line.split()
        rows[f[0]] = (f[2], f[7])
ok = all(rows.get(k) == v for k, v in want.items())
print("issue table:", rows, "OK" if ok else f"FAILED, want {want}")
sys.exit(0 if ok else 1)
PY
# One replay's GPU work under its capture-time ranges (a whole run's microsecond kernels would
# not show beside its millisecond capture).
python3 "$root/scripts/trace_svg.py" "$out/issue.json" "$out/issue.svg" --skip-cat cuda_flow \
  --skip-cat cuda_api --only-during layer@nvtx_graph || true

step "Nsight Systems on the same program"
: >"$out/nsys.txt"
for mode in graph node; do
  {
    echo "## nsys profile -t cuda,nvtx --cuda-graph-trace=$mode"
    "$nsys" profile -t cuda,nvtx --cuda-graph-trace=$mode --force-overwrite true \
      -o "$work/nsys-$mode" "$app" 2>&1 | tail -n 2
    "$nsys" export --type sqlite --force-overwrite true -o "$work/nsys-$mode.sqlite" \
      "$work/nsys-$mode.nsys-rep" >/dev/null 2>&1
    "$nsys" stats -r nvtx_gpu_proj_sum,nvtx_kern_sum,cuda_gpu_kern_sum "$work/nsys-$mode.sqlite" \
      2>&1 | grep -v "^$"
    echo "### tables with graph information"
    python3 - "$work/nsys-$mode.sqlite" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
for t in names:
    cols = [c[1] for c in con.execute(f"PRAGMA table_info({t})")]
    if "GRAPH" in t.upper() or any("graph" in c.lower() for c in cols):
        n = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        print(f"{t} ({n} rows): {cols}")
if "CUDA_GRAPH_NODE_EVENTS" in names:
    for r in con.execute("SELECT * FROM CUDA_GRAPH_NODE_EVENTS LIMIT 12"):
        print("  ", r)
PY
    echo "### scripts/nsys_graph_ranges.py on this export"
    python3 "$root/scripts/nsys_graph_ranges.py" "$work/nsys-$mode.sqlite"
    echo
  } >>"$out/nsys.txt" 2>&1
done
cat "$out/nsys.txt"

step "replay cost: 10,000 replays, launch to completion (ns per replay)"
runs="${COST_RUNS:-5}"
: >"$work/cost.txt"
for ((i = 0; i < runs; i++)); do
  for tool in none capture nodes_off; do
    case $tool in
      none) line=$("$work/graph_replay_cost" 10000 7 | tail -n 1) ;;
      capture) line=$("$capture" --summary-only -- "$work/graph_replay_cost" 10000 7 \
                        | grep median_ns_per_replay) ;;
      nodes_off) line=$(NVTXPP_GRAPH_NODES=off "$capture" --summary-only -- \
                          "$work/graph_replay_cost" 10000 7 | grep median_ns_per_replay) ;;
    esac
    echo "$tool $line" | tee -a "$work/cost.txt"
  done
done
check replay_cost python3 - "$work/cost.txt" <<'PY' | tee "$out/replay_cost.txt"
import re, statistics, sys
vals = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) median_ns_per_replay=([0-9.]+)", line)
    if m:
        vals.setdefault(m.group(1), []).append(float(m.group(2)))
print("graph_replay_cost: 10,000 replays of a 3-kernel graph, launch to completion;")
print("per configuration: the median over runs of each run's median of 7 rounds (ns/replay)")
med = {k: statistics.median(v) for k, v in vals.items()}
for k, v in vals.items():
    print(f"  {k:10s} median {med[k]:9.1f}  runs {', '.join(f'{x:.1f}' for x in v)}")
if {"none", "capture", "nodes_off"} <= med.keys():
    print(f"  capture / none           {med['capture'] / med['none']:.3f}")
    print(f"  capture / nodes_off      {med['capture'] / med['nodes_off']:.3f}  "
          "(what graph node attribution adds to a replay)")
sys.exit(0 if len(med) == 3 else 1)
PY

step "result"
ls -la "$out"
if [ "${#failed[@]}" -ne 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "ALL PASSED"
