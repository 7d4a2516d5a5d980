#!/usr/bin/env bash
# Issue 20 (output names, ranks, capture windows, kernel names) on a GPU machine:
#  1. configure: without libsqlite3's headers a CMake WARNING; with
#     -DNVTXPP_CAPTURE_REQUIRE_SQLITE=ON a configure error; with the headers (the .deb trick of
#     .gpu-tools) and the option: success; the toolkit's demangler (libcufilt) found;
#  2. nvtxpp_kernel_names_test with __cu_demangle;
#  3. a cudaProfilerStart/Stop capture range around part of a CUDA program
#     (tests/capture/gpu/window_gpu.cu), under nvtxpp-capture --capture-range=cudaProfilerApi and
#     under nsys -c cudaProfilerApi: the same kernels (by demangled name and count), NVTX ranges
#     inside only; nsys's six stats reports on both files (scripts/compare_nsys.py, demangled
#     kernel names; times loose: this checks rows, counts and names);
#  4. two ranks without MPI (OMPI_COMM_WORLD_RANK/SIZE set by hand, run at once, one -o name):
#     two .sqlite files, each readable by nsys stats, each with its own rank's process;
#  5. kernel names side by side with nsys on reduce_v3 -s 8 (SIDE_BY_SIDE="reduce_v2;reduce_v3
#     -s 8;stream_workers" for all three; compare_nsys.py --kernel-names demangled, all six
#     reports; times loose). The full timed side-by-side stays verify_capture_gpu.sh's (with
#     COMPARE_ARGS="--kernel-names demangled").
#
#   scripts/verify_ranks_gpu.sh            (writes under $OUT, default out/ranks-gpu)
#
# Environment: NSYS (default .gpu-tools/nsys when present, else nsys), OUT, BUILD_DIR,
# SIDE_BY_SIDE (programs of step 5, separated by ';').
# $OUT receives log.txt, results.md, window.sqlite, window.json, ranks.rank0.sqlite,
# ranks.rank1.sqlite, compare.md (at most 8 files).
# Exit status: 0 when every check passed, 1 otherwise.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${OUT:-out/ranks-gpu}"
build="${BUILD_DIR:-$root/build-ranks-gpu}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, machine
results="$out/results.md"
: >"$results"

nvcc --version | tail -n 1

step "1. configure: SQLite warning, NVTXPP_CAPTURE_REQUIRE_SQLITE, libcufilt"
sq_args=()
if ls "$root"/.gpu-tools/libsqlite3-dev_*.deb >/dev/null 2>&1; then
  dpkg -x "$root"/.gpu-tools/libsqlite3-dev_*.deb "$work/sq"
  sqlib=$(ls /lib/x86_64-linux-gnu/libsqlite3.so.0 /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
    2>/dev/null | head -n 1)
  sq_args=(-DSQLite3_INCLUDE_DIR="$work/sq/usr/include" -DSQLite3_LIBRARY="$sqlib")
fi
if [ ! -f /usr/include/sqlite3.h ]; then
  # No headers on this host: a plain configure warns; with the option it fails.
  cmake -S "$root" -B "$work/nosq" -G Ninja -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF \
    -DNVTXPP_BUILD_TESTS=OFF >"$work/nosq.log" 2>&1
  if grep -q "CMake Warning" "$work/nosq.log" && grep -q "libsqlite3 (headers and library) not found" \
    "$work/nosq.log"; then
    echo "without headers: a CMake warning (ok)"; echo "- configure without SQLite headers: CMake Warning: ok" >>"$results"
  else
    failed+=("no warning without SQLite"); grep -n -i sqlite "$work/nosq.log"
  fi
  if cmake -S "$root" -B "$work/nosq2" -G Ninja -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF \
    -DNVTXPP_CAPTURE_REQUIRE_SQLITE=ON >"$work/nosq2.log" 2>&1; then
    failed+=("REQUIRE_SQLITE=ON configured without SQLite")
  else
    grep -q "NVTXPP_CAPTURE_REQUIRE_SQLITE is ON" "$work/nosq2.log" &&
      echo "- configure with NVTXPP_CAPTURE_REQUIRE_SQLITE=ON and no SQLite: fails, saying why: ok" >>"$results" ||
      failed+=("REQUIRE_SQLITE error message")
  fi
else
  echo "this host has sqlite3.h: the no-SQLite configure checks are skipped"
fi
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DNVTXPP_BUILD_BENCHMARKS=OFF -DNVTXPP_CAPTURE_REQUIRE_SQLITE=ON \
  "${sq_args[@]}" >"$work/configure.log" 2>&1 || { tail -n 40 "$work/configure.log"; exit 1; }
grep "nvtxpp-capture:" "$work/configure.log"
if grep -q "kernel names from the toolkit's demangler" "$work/configure.log"; then
  echo "- libcufilt found: kernel names from __cu_demangle" >>"$results"
else
  failed+=("libcufilt not found by CMake")
fi
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
  nvtxpp_kernel_names_test reduce_v2 reduce_v3 stream_workers >"$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log"; exit 1; }
capture="$build/tools/capture/nvtxpp-capture"
check window_gpu_build nvcc -O2 -std=c++17 -arch=sm_90 -I"$(dirname "$(command -v nvcc)")/../include" \
  "$root/tests/capture/gpu/window_gpu.cu" -o "$work/window_gpu" || exit 1

step "2. kernel names with the toolkit's demangler"
check kernel_names_test "$build/tests/capture/nvtxpp_kernel_names_test" &&
  echo "- nvtxpp_kernel_names_test with __cu_demangle: passed" >>"$results"

step "3. cudaProfilerStart/Stop capture range"
"$work/window_gpu" >/dev/null 2>&1  # warm-up (JIT cache)
check capture_window "$capture" --capture-range=cudaProfilerApi -o "$out/window.sqlite" -- \
  "$work/window_gpu" 3 5 2
"$capture" --no-summary --capture-range=cudaProfilerApi -o "$out/window.json" -- \
  "$work/window_gpu" 3 5 2
"$nsys" profile -t cuda,nvtx -c cudaProfilerApi --force-overwrite true -o "$work/window-nsys" \
  "$work/window_gpu" 3 5 2 >/dev/null 2>&1
"$nsys" export --type sqlite --force-overwrite true -o "$work/window-nsys.sqlite" \
  "$work/window-nsys.nsys-rep" >/dev/null 2>&1
cat >"$work/window_check.py" <<'PY'
import sqlite3, sys
def kernels(path):
    db = sqlite3.connect(path)
    rows = db.execute("SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                      "ON k.demangledName = s.id GROUP BY s.value ORDER BY s.value").fetchall()
    nvtx = db.execute("SELECT COALESCE(e.text, s.value) FROM NVTX_EVENTS e LEFT JOIN StringIds s "
                      "ON e.textId = s.id WHERE e.eventType = 59 ORDER BY 1").fetchall()
    try:
        memsets = db.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMSET").fetchone()[0]
    except sqlite3.OperationalError:
        memsets = 0
    return dict(rows), [r[0] for r in nvtx], memsets
ours, theirs = kernels(sys.argv[1]), kernels(sys.argv[2])
print("ours: ", ours)
print("nsys: ", theirs)
want = {"reduce::partial_reduce(const float *, unsigned long, float *)": 5,
        "<unnamed>::scale_add(float *, const float *, float)": 5}
ok = ours[0] == want and ours[1] == ["profiled"] and ours[2] == 0
print("ours as expected (5 of each kernel, nsys's spelling, NVTX 'profiled' only, no memset):", ok)
same = ours[0] == theirs[0] and ours[1] == theirs[1]
print("ours equal nsys's kernels and NVTX ranges:", same)
sys.exit(0 if ok and same else 1)
PY
check window_vs_nsys python3 "$work/window_check.py" "$out/window.sqlite" "$work/window-nsys.sqlite" &&
  echo "- cudaProfilerApi window: 5+5 kernels inside, nsys's names, NVTX 'profiled' only, same as nsys -c cudaProfilerApi" >>"$results"
: >"$out/compare.md"
{ echo "## window_gpu 3 5 2, --capture-range=cudaProfilerApi (rows, counts, names; times loose)"; echo; } >>"$out/compare.md"
python3 "$here/compare_nsys.py" "$out/window.sqlite" "$work/window-nsys.sqlite" --nsys "$nsys" \
  --kernel-names demangled --lenient cuda_api_sum --tolerance 10 --floor-ns 1000000 \
  >"$work/cmp.txt" 2>&1
status=$?; cat "$work/cmp.txt" >>"$out/compare.md"; tail -n 20 "$work/cmp.txt"
[ "$status" = 0 ] || failed+=("compare window (status $status)")

step "3b. an NVTX capture range (--capture-range=nvtx --nvtx-capture=profiled) against nsys -c nvtx"
check capture_nvtx_window "$capture" --no-summary --capture-range=nvtx --nvtx-capture=profiled \
  -o "$work/nvtxwin.sqlite" -- "$work/window_gpu" 3 5 2
# nsys matches registered strings only unless told otherwise (its documentation's variable).
NSYS_NVTX_PROFILER_REGISTER_ONLY=0 "$nsys" profile -t cuda,nvtx -c nvtx -p profiled \
  --force-overwrite true -o "$work/nvtxwin-nsys" "$work/window_gpu" 3 5 2 >/dev/null 2>&1
"$nsys" export --type sqlite --force-overwrite true -o "$work/nvtxwin-nsys.sqlite" \
  "$work/nvtxwin-nsys.nsys-rep" >/dev/null 2>&1
check nvtx_window_vs_nsys python3 "$work/window_check.py" "$work/nvtxwin.sqlite" \
  "$work/nvtxwin-nsys.sqlite" &&
  echo "- NVTX window on 'profiled': the same kernels and ranges as nsys -c nvtx -p profiled" >>"$results"

step "4. two ranks without MPI (rank variables by hand), one -o name"
rm -f "$out"/ranks*.sqlite
before_ranks=${#failed[@]}
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$capture" --no-summary -o "$out/ranks.sqlite" -- \
  "$work/window_gpu" 1 4 1 >"$work/rank0.txt" 2>&1 &
p0=$!
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$capture" --no-summary -o "$out/ranks.sqlite" -- \
  "$work/window_gpu" 1 2 1 >"$work/rank1.txt" 2>&1 &
p1=$!
wait $p0; s0=$?; wait $p1; s1=$?
cat "$work/rank0.txt" "$work/rank1.txt"
[ "$s0" = 0 ] && [ "$s1" = 0 ] || failed+=("two ranks: exit $s0 $s1")
for r in 0 1; do
  f="$out/ranks.rank$r.sqlite"
  if [ -f "$f" ]; then
    "$nsys" stats --force-export=false --report cuda_gpu_kern_sum "$f" 2>&1 | tail -n 6
    n=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0])" "$f")
    want=$([ "$r" = 0 ] && echo 12 || echo 8)
    echo "rank $r: $n kernels (want $want)"
    [ "$n" = "$want" ] || failed+=("rank $r kernels $n, want $want")
  else
    failed+=("no $f")
  fi
done
[ -f "$out/ranks.sqlite" ] && failed+=("a file under the plain name")
[ "${#failed[@]}" = "$before_ranks" ] &&
  echo "- two GPU ranks at once, one -o name: ranks.rank0.sqlite (12 kernels), ranks.rank1.sqlite (8); nsys stats reads both" >>"$results"

step "5. kernel names side by side with nsys (all six reports, demangled names; times loose)"
exe() { find "$build/examples" -type f -name "$1" -perm -u+x | head -n 1; }
IFS=';' read -r -a programs <<<"${SIDE_BY_SIDE:-reduce_v3 -s 8}"
for cmd in "${programs[@]}"; do
  read -r -a w <<<"$cmd"
  name=$(echo "$cmd" | tr ' ' '_')
  prog=$(exe "${w[0]}")
  "$prog" "${w[@]:1}" >/dev/null 2>&1
  "$capture" --no-summary -o "$work/$name.sqlite" -- "$prog" "${w[@]:1}" >/dev/null 2>&1
  "$nsys" profile -t cuda,nvtx --force-overwrite true -o "$work/$name-nsys" "$prog" "${w[@]:1}" \
    >/dev/null 2>&1
  "$nsys" export --type sqlite --force-overwrite true -o "$work/$name-nsys.sqlite" \
    "$work/$name-nsys.nsys-rep" >/dev/null 2>&1
  { echo; echo "## $cmd (demangled kernel names; times loose)"; echo; } >>"$out/compare.md"
  python3 "$here/compare_nsys.py" "$work/$name.sqlite" "$work/$name-nsys.sqlite" --nsys "$nsys" \
    --kernel-names demangled --lenient cuda_api_sum --tolerance 10 --floor-ns 1000000 \
    >"$work/cmp.txt" 2>&1
  status=$?
  cat "$work/cmp.txt" >>"$out/compare.md"
  echo "--- $cmd: compare status $status"; sed -n '/^## Summary/,$p' "$work/cmp.txt"
  if [ "$status" = 0 ]; then
    echo "- $cmd: all six reports agree row for row with demangled kernel names" >>"$results"
  else
    failed+=("compare $cmd (status $status)")
  fi
done

step "summary"
cat "$results"
rm -rf "$work"
if [ ${#failed[@]} -eq 0 ]; then
  echo "ALL PASSED"; echo "ALL PASSED" >>"$results"
  exit 0
fi
printf 'FAILED: %s\n' "${failed[@]}" | tee -a "$results"
exit 1
