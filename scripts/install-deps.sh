#!/usr/bin/env bash
# Installs what nvtxpp's build, tests and demo need, from Debian packages, when missing.
# The CUDA toolkit (NVTX3 headers; nvcc for the CUDA examples) is not a Debian package here:
# it must already be installed (default /usr/local/cuda).
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in cmake ninja-build g++ clang libclang-rt-dev libfmt-dev catch2 libbenchmark-dev \
  libsqlite3-dev sqlite3 python3 openmpi-bin libopenmpi-dev \
  zlib1g-dev libncurses-dev tmux; do
  # Open MPI: the capture tests of real multi-rank launches (mpirun -np 4)
  # zlib: the no-rebuild annotation tests call into it
  # ncurses: `nvtxpp-capture top`'s screen; tmux: its tests drive that screen as a terminal
  have_pkg "$pkg" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "nvtxpp: installing ${need[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi

cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
if [ ! -f "$cuda_root/include/nvtx3/nvToolsExt.h" ]; then
  echo "nvtxpp: the NVTX3 headers were not found under $cuda_root/include/nvtx3." >&2
  echo "        Install the CUDA toolkit (or set CUDAToolkit_ROOT) and run this again." >&2
  exit 2
fi
if ! command -v nvcc >/dev/null 2>&1 && [ -x "$cuda_root/bin/nvcc" ]; then
  echo "nvtxpp: note: $cuda_root/bin is not on PATH; add it to build the CUDA examples."
fi
