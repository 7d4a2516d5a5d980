#!/usr/bin/env bash
# The README's demo command: installs missing dependencies, builds the host-only example and
# shows what it annotates. With nvtxpp-capture built, the example runs under it: a Chrome trace
# (build/demo/host_demo_trace.json, open it in https://ui.perfetto.dev) and an nvtx_sum-style
# table. Without it, the example prints the events its in-process recorder saw.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs="${NVTXPP_JOBS:-$(nproc)}"
cmake -S . -B build/demo -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVTXPP_BUILD_TESTS=OFF >/dev/null
cmake --build build/demo -j "$jobs" --target host_demo
demo=build/demo/examples/host_demo/host_demo
if cmake --build build/demo -j "$jobs" --target nvtxpp-capture >/dev/null 2>&1; then
  capture=$(find build/demo -type f -name nvtxpp-capture -perm -u+x | head -n 1)
  echo "== host_demo under nvtxpp-capture"
  "$capture" -o build/demo/host_demo_trace.json -- "$demo"
  echo "== trace written to build/demo/host_demo_trace.json (open it in ui.perfetto.dev)"
else
  "$demo"
fi
