#!/usr/bin/env bash
# Profiles one nvtxpp example under Nsight Systems the way the tutorial "Profiling CUDA using
# Nsight Systems: a Numba example" does, then prints the NVTX range summary (nvtx_sum).
#
#   scripts/profile.sh [-o OUTPUT] [-b BUILD_DIR] EXAMPLE [ARGS...]
#
# EXAMPLE is a program name (reduce_v2, reduce_v3, stream_workers, host_demo, ...), looked up
# under BUILD_DIR (default: build), or a path to an executable. The report is OUTPUT.nsys-rep
# (default: profiles/EXAMPLE[_ARGS]) and its SQLite export OUTPUT.sqlite.
#
# Environment: NSYS, the nsys to run (default: nsys on the PATH); NSYS_GPU_METRICS=0 skips GPU
# metrics sampling.
# Exit status: the example's own status when profiling worked; 2 when no GPU is usable (CUDA
# examples); 3 when nsys is missing or fails; 64 on a bad command line.
set -u

usage() {
  sed -n '5,14p' "$0" | sed 's/^# \{0,1\}//'
}

output=""
build_dir="build"
while [ $# -gt 0 ]; do
  case "$1" in
    -o | --output) [ $# -ge 2 ] || { usage >&2; exit 64; }; output="$2"; shift 2 ;;
    -b | --build-dir) [ $# -ge 2 ] || { usage >&2; exit 64; }; build_dir="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "profile.sh: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ]; then
  echo "profile.sh: name an example to profile" >&2
  usage >&2
  exit 64
fi
example="$1"
shift

# The program: a path, or a name found under the build directory.
if [ -x "$example" ] && [ -f "$example" ]; then
  program="$example"
else
  program=$(find "$build_dir" -type f -name "$example" -perm -u+x 2>/dev/null | head -n 1)
  if [ -z "$program" ]; then
    echo "profile.sh: no executable '$example' under '$build_dir'; build the examples first" >&2
    echo "  (cmake -S . -B $build_dir && cmake --build $build_dir), or pass -b or a path" >&2
    exit 64
  fi
fi
name=$(basename "$program")

nsys="${NSYS:-nsys}"
if ! command -v "$nsys" >/dev/null 2>&1; then
  echo "profile.sh: Nsight Systems (nsys) not found." >&2
  echo "  Install it (https://developer.nvidia.com/nsight-systems) and put nsys on the PATH," >&2
  echo "  or point NSYS at it: NSYS=/path/to/nsys scripts/profile.sh $example" >&2
  exit 3
fi

# host_demo needs no GPU; the CUDA examples do.
traces="cuda,osrt,nvtx"
needs_gpu=1
case "$name" in host_demo*) traces="osrt,nvtx"; needs_gpu=0 ;; esac
if [ "$needs_gpu" = 1 ]; then
  gpu_found=0
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -q '^GPU' && gpu_found=1
  elif ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    gpu_found=1
  fi
  if [ "$gpu_found" = 0 ]; then
    echo "profile.sh: no NVIDIA GPU found on this machine; $name needs one." >&2
    echo "  Profile on a machine with a GPU, or try: scripts/profile.sh host_demo" >&2
    exit 2
  fi
fi

if [ -z "$output" ]; then
  suffix=$(printf '%s' "$*" | tr -c 'A-Za-z0-9' '_' | tr -s '_' | sed 's/^_//; s/_$//')
  output="profiles/${name}${suffix:+_$suffix}"
fi
mkdir -p "$(dirname "$output")"
rm -f "$output.nsys-rep" "$output.sqlite"

common=(profile --trace "$traces" --force-overwrite true --output "$output")
if [ "$needs_gpu" = 1 ]; then
  common+=(--cuda-memory-usage true)
fi

# GPU metrics sampling needs a supported GPU and, on many systems, root or the
# NVreg_RestrictProfilingToAdminUsers=0 driver setting. Try it; without a report, go without.
status=0
report_made=0
if [ "$needs_gpu" = 1 ] && [ "${NSYS_GPU_METRICS:-1}" != 0 ]; then
  # Newer nsys spells the tutorial's --gpu-metrics-device as --gpu-metrics-devices (2025.3 warns
  # that the old spelling is deprecated).
  metrics="--gpu-metrics-device=all"
  if "$nsys" profile --help 2>&1 | grep -q -- '--gpu-metrics-devices'; then
    metrics="--gpu-metrics-devices=all"
  fi
  echo "profile.sh: $nsys ${common[*]} $metrics $program $*"
  "$nsys" "${common[@]}" "$metrics" "$program" "$@"
  status=$?
  [ -s "$output.nsys-rep" ] && report_made=1
  if [ "$report_made" = 0 ]; then
    echo "profile.sh: profiling with GPU metrics made no report (nsys status $status);" \
      "GPU metrics need a supported GPU and profiling rights. Trying again without them." >&2
  fi
fi
if [ "$report_made" = 0 ]; then
  echo "profile.sh: $nsys ${common[*]} $program $*"
  "$nsys" "${common[@]}" "$program" "$@"
  status=$?
  [ -s "$output.nsys-rep" ] && report_made=1
fi
if [ "$report_made" = 0 ]; then
  echo "profile.sh: nsys made no report ($output.nsys-rep); see its messages above." >&2
  exit 3
fi

echo
echo "profile.sh: NVTX range summary of $output.nsys-rep"
if ! "$nsys" stats --report nvtx_sum --force-export true "$output.nsys-rep"; then
  echo "profile.sh: nsys stats failed on $output.nsys-rep" >&2
  exit 3
fi
echo
echo "profile.sh: report $output.nsys-rep, SQLite $output.sqlite"
if [ "$status" != 0 ]; then
  echo "profile.sh: $name exited with status $status" >&2
fi
exit "$status"
