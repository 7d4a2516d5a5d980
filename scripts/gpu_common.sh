# Sourced by the scripts/verify_*_gpu.sh checks, after they set `out` (their output folder): the
# output folder made absolute with its log (everything printed goes to $out/log.txt too), a
# scratch folder `work`, the nsys to run (NSYS, else .gpu-tools/nsys beside the checkout, else
# nsys on the PATH), `failed` with step/check to record what did not pass, and the machine's
# description at the top of the log.
gpu_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nsys="${NSYS:-}"
if [ -z "$nsys" ]; then
  if [ -x "$gpu_root/.gpu-tools/nsys" ]; then nsys="$gpu_root/.gpu-tools/nsys"; else nsys=nsys; fi
fi
mkdir -p "$out" && out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
exec > >(tee "$out/log.txt") 2>&1
export PYTHONUNBUFFERED=1
failed=()
step() { echo; echo "=== $*"; }
check() { # check NAME COMMAND...: runs, records a failure under NAME
  local name="$1"; shift
  "$@"; local status=$?
  [ "$status" = 0 ] || failed+=("$name (status $status)")
  return "$status"
}

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || true
lscpu | grep -E "Model name|^CPU\(s\)" || true
"$nsys" --version 2>&1 | tail -n 1

# `sqlite_args`: CMake arguments for libsqlite3's headers on a machine that has the library only
# (the GPU machine's Ubuntu): the headers of .gpu-tools/libsqlite3-dev_*.deb, unpacked into
# $work. Empty where the headers are installed or the package is not there.
sqlite_args=()
if [ ! -e /usr/include/sqlite3.h ]; then
  gpu_sqlite_deb=$(ls "$gpu_root"/.gpu-tools/libsqlite3-dev_*.deb 2>/dev/null | head -n 1)
  gpu_sqlite_lib=$(ls /lib/x86_64-linux-gnu/libsqlite3.so.0 /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
    2>/dev/null | head -n 1)
  if [ -n "$gpu_sqlite_deb" ] && [ -n "$gpu_sqlite_lib" ]; then
    dpkg -x "$gpu_sqlite_deb" "$work/sq"
    sqlite_args=(-DSQLite3_INCLUDE_DIR="$work/sq/usr/include" -DSQLite3_LIBRARY="$gpu_sqlite_lib")
  fi
fi

# `finish`: the closing step every script ends with: ALL PASSED and exit 0, or the failures and
# exit 1.
finish() {
  step "summary"
  if [ ${#failed[@]} -eq 0 ]; then
    echo "ALL PASSED"
    exit 0
  fi
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
}
