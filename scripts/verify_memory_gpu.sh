#!/usr/bin/env bash
# NVTX memory annotations on a GPU machine (issue #28): builds examples/memory_pool (an arena over
# one cudaMalloc, annotated with nvtxpp/memory.hpp, annotations switchable with --no-annotate),
# runs it under compute-sanitizer with and without the annotations, runs the memory tests and the
# GPU-labelled tests of the example, records the arena under nvtxpp-capture (the heap's
# bytes-in-use track, JSON and SQLite) and under Nsight Systems (what nsys makes of the calls).
#
#   scripts/verify_memory_gpu.sh [OUT_DIR]      (default: $OUT, else out/memory-gpu)
#
# Environment: NSYS (default .gpu-tools/nsys when present, else nsys), BUILD_DIR (default
# build-memory-gpu), SANITIZER (default compute-sanitizer on the PATH, else
# /usr/local/cuda/bin/compute-sanitizer).
# OUT_DIR receives log.txt (everything printed; one PASS or FAIL line per check, with the
# evidence), sanitizer/*.txt (each compute-sanitizer run's full output), capture.json,
# capture_summary.txt, nsys_tables.txt.
# Exit status: 0 when every check passed, 1 otherwise.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/memory-gpu}}"
build="${BUILD_DIR:-build-memory-gpu}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, machine

sanitizer="${SANITIZER:-}"
if [ -z "$sanitizer" ]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
fi
"$sanitizer" --version 2>&1 | tail -n 2
nvcc --version | tail -n 2
mkdir -p "$out/sanitizer"

verdict() { # verdict NAME OK EVIDENCE: prints PASS/FAIL NAME with the evidence, records a failure
  local name="$1" ok="$2" evidence="$3"
  if [ "$ok" = 1 ]; then echo "PASS $name"; else echo "FAIL $name"; failed+=("$name"); fi
  printf '%s\n' "$evidence" | sed 's/^/    | /'
}
errors_of() { # the N of "ERROR SUMMARY: N errors" in a sanitizer output file (-1: none found)
  local n
  n=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$1" | tail -n 1 | grep -Eo '[0-9]+$')
  echo "${n:--1}"
}
evidence_of() { # the lines that say what was found, at most 25
  local what='Invalid|Address|allocation|region|named|not (writable|readable)|Unused|unused'
  grep -E "$what|ERROR SUMMARY|Uninitialized|========= +(at|by) " "$1" | head -n 25
}
sanitize() { # sanitize NAME SANITIZER-ARGS... -- PROGRAM-ARGS...: runs into $out/sanitizer/NAME.txt
  local name="$1"; shift
  local sargs=()
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do sargs+=("$1"); shift; done
  shift
  echo "--- $sanitizer ${sargs[*]} memory_pool $*"
  "$sanitizer" "${sargs[@]}" "$app" "$@" >"$out/sanitizer/$name.txt" 2>&1
  local status=$?
  echo "    (exit status $status, $(errors_of "$out/sanitizer/$name.txt") errors;" \
    "full output: sanitizer/$name.txt)"
}

step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=ON -DNVTXPP_BUILD_BENCHMARKS=OFF "${sqlite_args[@]}" >/dev/null || exit 1
check build cmake --build "$build" -j "$(nproc)" --target memory_pool nvtxpp-capture \
  nvtxpp_inject test_memory test_memory_cuda nvtxpp_capture_app nvtxpp_capture_nvtxpp_app \
  >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log"; exit 1; }
app=$(find "$build/examples" -type f -name memory_pool -perm -u+x | head -n 1)
capture="$build/tools/capture/nvtxpp-capture"
[ -x "$app" ] || { echo "FAIL build: no memory_pool binary"; exit 1; }

step "tests: the memory unit tests, the capture's heap track, the example's GPU tests"
check ctest ctest --test-dir "$build" -R 'test_memory|capture\.heaps|memory_pool' \
  --output-on-failure --timeout 300
"$app" --bug none  # warm-up (JIT cache) and the plain outcome

step "1. off-by-one write past 'output' (into the pool's padding before its neighbour)"
sanitize oob_plain --tool memcheck --show-backtrace no -- --bug off-by-one --no-annotate
sanitize oob_annotated --tool memcheck --show-backtrace no -- --bug off-by-one
sanitize oob_annotated_nvtx_yes --tool memcheck --nvtx yes --show-backtrace no -- --bug off-by-one
sanitize oob_annotated_nvtx_no --tool memcheck --nvtx no --show-backtrace no -- --bug off-by-one
verdict "under compute-sanitizer the arena's heap and regions were registered (a tool listens)" \
  "$(grep -q 'regions registered' "$out/sanitizer/oob_annotated.txt" && echo 1)" \
  "$(grep -E '^memory_pool:' "$out/sanitizer/oob_annotated.txt")"
n=$(errors_of "$out/sanitizer/oob_plain.txt")
verdict "memcheck: the off-by-one goes unreported without annotations" \
  "$([ "$n" = 0 ] && echo 1)" "$(evidence_of "$out/sanitizer/oob_plain.txt")"
n=$(errors_of "$out/sanitizer/oob_annotated.txt")
verdict "memcheck: the off-by-one is reported with annotations (default options)" \
  "$([ "$n" -gt 0 ] 2>/dev/null && grep -q 'Invalid __global__ write' "$out/sanitizer/oob_annotated.txt" && echo 1)" \
  "$(evidence_of "$out/sanitizer/oob_annotated.txt")"
# The out-of-bounds report gives the region it hit by address and size, not by name (seen on
# the H100 with CUDA 13.0: names appear in leak and unused-memory reports, checked below): the
# region is 'output' when its address is the one the program printed for 'output'.
output_at=$(sed -n 's/^memory_pool: buffer output at \(0x[0-9a-f]*\) .*/\1/p' \
  "$out/sanitizer/oob_annotated.txt")
verdict "memcheck: the report points at 'output' (the region at its address, of its 4,000 bytes)" \
  "$([ -n "$output_at" ] && grep -E '^=+' "$out/sanitizer/oob_annotated.txt" |
    grep -q "nearest allocation at $output_at of size 4,000 bytes" && echo 1)" \
  "$(grep -E '^memory_pool: buffer' "$out/sanitizer/oob_annotated.txt"; grep -E '^=+' \
    "$out/sanitizer/oob_annotated.txt" | grep -E "nearest allocation" | head -n 2)"
# Names: a leaked buffer is reported by the name its region was given.
sanitize leak_annotated --tool memcheck --leak-check full --show-backtrace no -- --bug leak
verdict "memcheck --leak-check full: each leaked buffer named ('input', 'output', 'lookup')" \
  "$(l=$(grep -E '^=+ +Leaked' "$out/sanitizer/leak_annotated.txt"); for b in input output lookup; do
    grep -q "called $b\$" <<<"$l" || exit 0; done; echo 1)" \
  "$(grep -E '^=+ +(Leaked|LEAK)' "$out/sanitizer/leak_annotated.txt" | head -n 6)"
sanitize leak_plain --tool memcheck --leak-check full --show-backtrace no -- --bug leak --no-annotate
echo "INFO memcheck --leak-check full without annotations: the pool as one unnamed allocation"
grep -E '^=+ +(Leaked|LEAK)' "$out/sanitizer/leak_plain.txt" | head -n 4 | sed 's/^/    | /'
n=$(errors_of "$out/sanitizer/oob_annotated_nvtx_yes.txt")
verdict "memcheck --nvtx yes: reported too" "$([ "$n" -gt 0 ] 2>/dev/null && echo 1)" \
  "$(evidence_of "$out/sanitizer/oob_annotated_nvtx_yes.txt" | head -n 6)"
n=$(errors_of "$out/sanitizer/oob_annotated_nvtx_no.txt")
echo "INFO memcheck --nvtx no: $n errors (the annotations ignored: expected 0; shows the option" \
  "is what makes the difference)"

step "2. no false positives: the correct program, annotated"
sanitize clean_annotated --tool memcheck --show-backtrace no -- --bug none
n=$(errors_of "$out/sanitizer/clean_annotated.txt")
verdict "memcheck: 0 errors for the correct annotated program" "$([ "$n" = 0 ] && echo 1)" \
  "$(evidence_of "$out/sanitizer/clean_annotated.txt")"

step "3. a write to a read-only region (nvtxpp::cuda_access_scope, access::read)"
sanitize ro_plain --tool memcheck --show-backtrace no -- --bug read-only --no-annotate
sanitize ro_annotated --tool memcheck --show-backtrace no -- --bug read-only
n=$(errors_of "$out/sanitizer/ro_plain.txt")
verdict "memcheck: the write to 'lookup' goes unreported without annotations" \
  "$([ "$n" = 0 ] && echo 1)" "$(evidence_of "$out/sanitizer/ro_plain.txt")"
n=$(errors_of "$out/sanitizer/ro_annotated.txt")
verdict "memcheck: the write to the read-only 'lookup' is reported with annotations" \
  "$([ "$n" -gt 0 ] 2>/dev/null && echo 1)" "$(evidence_of "$out/sanitizer/ro_annotated.txt")"

step "4. initcheck --track-unused-memory: the pool's unused memory"
sanitize unused_plain --tool initcheck --track-unused-memory --show-backtrace no -- \
  --bug none --no-annotate
sanitize unused_annotated --tool initcheck --track-unused-memory --show-backtrace no -- \
  --bug none
sanitize unused_free_first --tool initcheck --track-unused-memory --show-backtrace no -- \
  --bug none --free-before-unregister
echo "INFO with annotations, the pool freed before its heap is unregistered:" \
  "$(errors_of "$out/sanitizer/unused_free_first.txt") errors"
evidence_of "$out/sanitizer/unused_free_first.txt" | sed 's/^/    | /'
echo "INFO without annotations (the 1 MiB pool is mostly unused, expected reported):"
evidence_of "$out/sanitizer/unused_plain.txt" | sed 's/^/    | /'
n=$(errors_of "$out/sanitizer/unused_annotated.txt")
verdict "initcheck --track-unused-memory: no unused pool memory reported with annotations" \
  "$([ "$n" = 0 ] && ! grep -E '^=+' "$out/sanitizer/unused_annotated.txt" | grep -qi 'unused' \
    && echo 1)" \
  "$(evidence_of "$out/sanitizer/unused_annotated.txt")"

step "5. nvtxpp-capture: the arena's bytes in use as a counter track (JSON, SQLite)"
check capture_json "$capture" -o "$out/capture.json" -- "$app" --bug none \
  >"$out/capture_summary.txt" 2>&1
cat "$out/capture_summary.txt"
track=$(python3 - "$out/capture.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
vals = [e["args"]["value"] for e in t["traceEvents"]
        if e.get("ph") == "C" and e.get("name") == "arena bytes in use"]
print(vals)
PY
)
verdict "capture JSON: 'arena bytes in use' goes 0, 4000, 8000, 12000, 8000, 4000, 0, 0" \
  "$([ "$track" = "[0, 4000, 8000, 12000, 8000, 4000, 0, 0]" ] && echo 1)" "track: $track"
if check capture_sqlite "$capture" --no-summary -o "$work/pool.sqlite" -- "$app" --bug none; then
  rows=$(python3 - "$work/pool.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print([r[0] for r in db.execute(
    "SELECT d.intVal FROM GENERIC_EVENTS e JOIN GENERIC_EVENT_TYPES t USING (typeId) "
    "JOIN StringIds n ON n.id = t.nameId JOIN GENERIC_EVENT_DATA d "
    "ON d.genericEventId = e.genericEventId AND d.fieldIdx = 0 "
    "WHERE n.value = 'arena bytes in use' ORDER BY e.timestamp, e.genericEventId")])
PY
)
  verdict "capture SQLite: the same track in GENERIC_EVENTS" \
    "$([ "$rows" = "$track" ] && echo 1)" "rows: $rows"
fi

step "6. Nsight Systems: what it records of the memory calls (for the docs; not a check)"
if "$nsys" profile --trace=cuda,nvtx --force-overwrite=true -o "$work/pool" "$app" --bug none \
  >"$work/nsys.log" 2>&1 && "$nsys" export --type sqlite --force-overwrite=true \
  -o "$work/pool.sqlite3" "$work/pool.nsys-rep" >>"$work/nsys.log" 2>&1; then
  python3 - "$work/pool.sqlite3" <<'PY' | tee "$out/nsys_tables.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
print("tables:", ", ".join(sorted(tables)))
for t in sorted(tables):
    if any(k in t.upper() for k in ("NVTX", "MEM", "GENERIC", "HEAP", "REGION")):
        print(f"{t}: {db.execute(f'SELECT count(*) FROM {t}').fetchone()[0]} rows")
if "NVTX_EVENTS" in tables:
    print("NVTX_EVENTS by eventType:", db.execute(
        "SELECT eventType, count(*) FROM NVTX_EVENTS GROUP BY eventType").fetchall())
PY
  "$nsys" stats --force-export=true --report nvtx_sum "$work/pool.nsys-rep" 2>&1 | tail -n 15 | tee -a "$out/nsys_tables.txt"
else
  echo "INFO nsys profile did not run:"; tail -n 20 "$work/nsys.log"
fi

step "result"
ls -la "$out" "$out/sanitizer"
grep -E '^(PASS|FAIL|INFO) ' "$out/log.txt"
if [ "${#failed[@]}" -ne 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "ALL PASSED"
