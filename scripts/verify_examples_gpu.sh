#!/usr/bin/env bash
# Builds the examples, runs their tests (GPU ones included), profiles the reduce examples under
# Nsight Systems and checks the exports with verify_nsys.py. Needs a GPU, nvcc and nsys.
#
#   scripts/verify_examples_gpu.sh [OUT_DIR]        (default: out/examples-gpu)
#
# OUT_DIR receives log.txt (everything printed), results.json (the figures verify_nsys.py
# measured) and sqlite.tar.gz (the exports, less their bulky sampling tables).
# Environment: NSYS (the nsys to run), BUILD_DIR (default build-examples-gpu), CMAKE_PREFIX_PATH.
# Exit status: 0 when every test and check passed, 1 otherwise.
set -u
out="${1:-out/examples-gpu}"
build="${BUILD_DIR:-build-examples-gpu}"
prof="$(mktemp -d)"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out" && out="$(cd "$out" && pwd)"
exec > >(tee "$out/log.txt") 2>&1
export PYTHONUNBUFFERED=1
failed=()
step() { echo; echo "=== $*"; }
run() { # run NAME COMMAND...: runs, records a failure under NAME
  local name="$1"; shift
  "$@"; local status=$?
  [ "$status" = 0 ] || failed+=("$name (status $status)")
  return "$status"
}

step "machine"
nvidia-smi -L 2>&1 || true
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || true
nvcc --version | tail -n 2
cmake --version | head -n 1
"${NSYS:-nsys}" --version 2>&1 | tail -n 1

step "configure and build (the examples only: the library's tests and tools are off)"
run configure cmake -S "$here/.." -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_TOOLS=OFF -DNVTXPP_INSTALL=OFF \
  -DNVTXPP_BUILD_EXAMPLES=ON || exit 1
run build cmake --build "$build" -j "$(nproc)" || exit 1

step "ctest (all example tests, the gpu-labelled ones included)"
run ctest ctest --test-dir "$build/examples" -V --timeout 300

step "programs"
for cmd in "reduce_v1" "reduce_v2" "reduce_v3 -s 1" "reduce_v3 -s 8" "reduce_v3 -s 8 --bug" \
  "reduce_v4 -s 8 --bandwidth" "stream_workers" "host_demo"; do
  read -r -a words <<<"$cmd"
  exe=$(find "$build/examples" -type f -name "${words[0]}" -perm -u+x | head -n 1)
  echo "--- $cmd"
  /usr/bin/time -f "(%e s wall)" "$exe" "${words[@]:1}"
  echo "status $?"
done

step "profiles"
profile() { # profile NAME EXAMPLE ARGS...
  local name="$1"; shift
  echo "--- scripts/profile.sh -o $prof/$name $*"
  "$here/profile.sh" -b "$build" -o "$prof/$name" "$@" 2>&1 | tee "$prof/$name.log"
  return "${PIPESTATUS[0]}"
}
run profile_v1 profile v1 reduce_v1
run profile_v2 profile v2 reduce_v2
run profile_v3_s1 profile v3_s1 reduce_v3 -s 1
run profile_v3_s8 profile v3_s8 reduce_v3 -s 8
profile v3_bug reduce_v3 -s 8 --bug  # exits 1 by design: its stream check fires
run profile_v4_s8 profile v4_s8 reduce_v4 -s 8
run profile_stream_workers profile stream_workers stream_workers
run profile_host_demo profile host_demo host_demo

step "verify the exports"
verify() { # verify NAME ARGS...
  local name="$1"; shift
  run "verify_$name" python3 "$here/verify_nsys.py" "$@" --json "$prof/$name.json"
}
verify v1 copies "$prof/v1.sqlite"
verify v2 v2 "$prof/v2.sqlite"
verify v3_s1 v3 "$prof/v3_s1.sqlite" --streams 1
verify v3_s8 v3 "$prof/v3_s8.sqlite" --streams 8
verify v3_bug v3 "$prof/v3_bug.sqlite" --streams 8 --bug --log "$prof/v3_bug.log"
verify v4_s8 v4 "$prof/v4_s8.sqlite" --streams 8
verify stream_workers stream_workers "$prof/stream_workers.sqlite"
python3 - "$prof" "$out/results.json" <<'PY'
import json, pathlib, sys
prof = pathlib.Path(sys.argv[1])
results = {p.stem: json.loads(p.read_text()) for p in sorted(prof.glob("*.json"))}
pathlib.Path(sys.argv[2]).write_text(json.dumps(results, indent=2))
PY

step "independent view: Nsight Compute's NVTX stack of each reduce_v2 kernel"
if command -v ncu >/dev/null 2>&1; then
  timeout 180 ncu --nvtx --nvtx-include "Kernels/" \
    "$(find "$build/examples" -type f -name reduce_v2 | head -n 1)" -n 1000000 >"$prof/ncu.txt" 2>&1
  echo "ncu status $?"
  grep -E -i "nvtx|Kernels|==PROF==|partial_reduce|single_thread_sum|divide_by|Sum:" "$prof/ncu.txt" |
    head -n 60
fi

step "export schema notes"
python3 - "$prof/v3_s8.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
print("tables:", ", ".join(tables))
for t in tables:
    if "STREAM" in t.upper():
        print(t, db.execute(f"SELECT * FROM {t} LIMIT 12").fetchall())
if "NVTX_EVENTS" in tables:
    print("NVTX event types:", db.execute(
        "SELECT eventType, COUNT(*) FROM NVTX_EVENTS GROUP BY eventType").fetchall())
    print("non-range NVTX events:", db.execute(
        "SELECT * FROM NVTX_EVENTS WHERE eventType NOT IN (59, 60) LIMIT 20").fetchall())
PY

step "pack the exports"
for db in "$prof"/*.sqlite; do
  python3 - "$db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
keep = {"StringIds", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "ThreadNames", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_STREAM", "TARGET_INFO_SESSION_START_TIME"}
for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
    if t not in keep and not t.startswith("ENUM_") and "STREAM" not in t.upper() and "NAME" not in t.upper():
        db.execute(f"DROP TABLE IF EXISTS {t}")
db.commit()
db.execute("VACUUM")
PY
done
(cd "$prof" && tar -czf "$out/sqlite.tar.gz" -- *.sqlite *.log)
ls -la "$out"

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "verify_examples_gpu: ALL PASSED"
  exit 0
fi
echo "verify_examples_gpu: FAILED: ${failed[*]}"
exit 1
