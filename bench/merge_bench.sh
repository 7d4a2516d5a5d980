#!/usr/bin/env bash
# The merge benchmark: FILES per-rank SQLite traces of RANGES ranges each (bench/merge_gen.cpp),
# merged by `nvtxpp-capture merge` three ways (.sqlite with the cross-rank summary, .sqlite
# without it, the summary alone) and once to JSON (the first JSON_FILES inputs: JSON of 64 M
# ranges is past what JSON viewers open). Wall time and peak resident memory (GNU time) each.
#
# usage: bench/merge_bench.sh [-b BUILD_DIR] [-n FILES] [-r RANGES] [-j JSON_FILES] [-d WORK_DIR]
#                             [-o RESULT_FILE]
#   BUILD_DIR  configured with -DNVTXPP_BUILD_BENCHMARKS=ON (default build/dev); nvtxpp-capture
#              and nvtxpp_merge_gen are built there
#   WORK_DIR   where inputs and outputs go (default /tmp/nvtxpp-merge-bench; removed at the end);
#              needs about 2 x FILES x RANGES x 53 bytes of disk
# Not a test: the figures depend on the machine and its disk.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/dev
files=64
ranges=1000000
json_files=4
work=/tmp/nvtxpp-merge-bench
result=
while getopts "b:n:r:j:d:o:h" opt; do
  case $opt in
    b) build=$OPTARG ;;
    n) files=$OPTARG ;;
    r) ranges=$OPTARG ;;
    j) json_files=$OPTARG ;;
    d) work=$OPTARG ;;
    o) result=$OPTARG ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
  esac
done
cmake --build "$build" -j2 --target nvtxpp-capture nvtxpp_merge_gen >/dev/null
capture=$build/tools/capture/nvtxpp-capture
need_kib=$((2 * files * ranges * 53 / 1024))
mkdir -p "$work"
free_kib=$(df -Pk "$work" | awk 'NR == 2 {print $4}')
if [ "$free_kib" -lt "$need_kib" ]; then
  echo "merge_bench: $work has $((free_kib / 1024)) MiB free, the run needs about" \
       "$((need_kib / 1024)) MiB: use -d or fewer files/ranges" >&2
  exit 2
fi
trap 'rm -rf "$work"' EXIT
log=$(mktemp)
{
  echo "# nvtxpp-capture merge benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "# machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPU(s)," \
       "$(free -g | awk '/^Mem:/ {print $2}') GiB; disk: $(df -P "$work" | awk 'NR == 2 {print $1}')"
  echo "# commit: $(git -C "$root" rev-parse --short HEAD)"
  echo "# inputs: $files file(s) x $ranges range(s)"
  t0=$(date +%s.%N)
  "$build/bench/nvtxpp_merge_gen" "$work" "$files" "$ranges" >/dev/null
  t1=$(date +%s.%N)
  echo "generate: $(awk "BEGIN {printf \"%.1f\", $t1 - $t0}") s, inputs $(du -sm "$work" | cut -f1) MiB"
  inputs=()
  for ((i = 0; i < files; ++i)); do inputs+=("$work/trace.rank$i.sqlite"); done
  measure() {  # label, then the command
    local label=$1
    shift
    sync
    /usr/bin/time -f "%e %M" -o "$log" "$@" >/dev/null 2>"$work/stderr" || {
      cat "$work/stderr" >&2
      exit 1
    }
    read -r secs kib <"$log"
    local mranges
    mranges=$(awk "BEGIN {printf \"%.2f\", $files * $ranges / $secs / 1000000}")
    echo "$label: $secs s, peak RSS $((kib / 1024)) MiB ($mranges M ranges/s)"
  }
  measure "merge -o .sqlite (with summary)" "$capture" merge -o "$work/m.sqlite" "${inputs[@]}"
  echo "  output $(du -m "$work/m.sqlite" | cut -f1) MiB"
  rm -f "$work/m.sqlite"
  measure "merge -o .sqlite --no-summary" "$capture" merge --no-summary -o "$work/m.sqlite" \
    "${inputs[@]}"
  rm -f "$work/m.sqlite"
  measure "merge --summary-only" "$capture" merge --summary-only "${inputs[@]}"
  files_all=$files
  files=$json_files
  measure "merge -o .json of $json_files input(s) (--no-summary)" "$capture" merge --no-summary \
    -o "$work/m.json" "${inputs[@]:0:$json_files}"
  echo "  output $(du -m "$work/m.json" | cut -f1) MiB"
  files=$files_all
} | tee ${result:+"$result"}
rm -f "$log"
