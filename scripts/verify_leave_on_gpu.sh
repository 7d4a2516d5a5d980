#!/usr/bin/env bash
# Issue 45: every leave-it-on mode on programs whose GPU work comes from libraries nobody here
# wrote, on a machine with a GPU. The corpus, each program in "step" ranges:
#   blas   tests/capture/corpus/blas_steps.cu: C++ linked with cuBLAS and cuBLASLt (about
#          104 KiB of static TLS on every thread's stack: our threads' stacks must hold it);
#   torch  tests/capture/corpus/torch_steps.py: a PyTorch training loop (AdamW);
#   numba  tests/capture/corpus/numba_steps.py: Numba's JIT kernels through the driver API.
# Each mode against a full capture of the same program (tests/capture/gpu/leave_on_check.py):
#   sample  --cuda-sample=100ms/1s: periods, every kept launch in one, the kernels under each
#           step inside them;
#   raise   --flight-recorder --cuda-sample=20ms/2s --cuda-raise=1s --trigger='step>3x' over a
#           slow step: the trigger's dump holds it, the raised dump the raised steps' kernels;
#   job     the same with --dump-scope=job over two ranks (Open MPI's rank variables and one
#           NVTXPP_JOB_ID), the slow step on rank 1: each rank's dump with its kernels;
#   window  --capture-range=nvtx --nvtx-capture=step --capture-range-end=none --duration=1 (the
#           window opens at the first step, the timer closes it), and for
#           the C++ program --delay=3.5 --duration=1 too: the window's steps with their kernels.
# Any "could not start" from our threads fails the run.
#
#   scripts/verify_leave_on_gpu.sh [OUT_DIR]     (default: $OUT, else out/leave-on-gpu)
# Environment: BUILD_DIR (default build-leave-on-gpu), PROGRAMS (default "blas torch numba").
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/leave-on-gpu}}"
build="${BUILD_DIR:-build-leave-on-gpu}"
programs="${PROGRAMS:-blas torch numba}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, the log, step, check, finish, sqlite_args

step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF \
  "${sqlite_args[@]}" >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; finish; }
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
  >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; finish; }
capture="$build/tools/capture/nvtxpp-capture"
corpus="$root/tests/capture/corpus"
checker="$root/tests/capture/gpu/leave_on_check.py"
check nvcc nvcc -O2 -std=c++17 -I"$root/include" -I"$corpus" -o "$work/blas_steps" \
  "$corpus/blas_steps.cu" -lcublas -lcublasLt || finish
check nvtx_lib g++ -O2 -shared -fPIC -I/usr/local/cuda/include -o "$work/libcorpus_nvtx.so" \
  "$corpus/nvtx_ctypes.cpp" -ldl || finish
readelf -lW "$work/blas_steps" >/dev/null 2>&1 &&
  echo "blas_steps links: $(ldd "$work/blas_steps" | grep -oE 'libcublas(Lt)?\.so[^ ]*' | tr '\n' ' ')"
results="$out/results.txt"
: >"$results"

command_of() { # command_of NAME: the program's command line
  case "$1" in
    blas) echo "$work/blas_steps" ;;
    torch) echo "python3 $corpus/torch_steps.py" ;;
    numba) echo "python3 $corpus/numba_steps.py $work/libcorpus_nvtx.so" ;;
  esac
}
quiet_threads() { # quiet_threads LABEL FILE: fails when a thread of ours could not start
  if grep -q "could not start" "$2"; then
    failed+=("$1: a thread of ours could not start"); grep "could not start" "$2"
  fi
}
lo() { # lo LABEL ARGS...: the checker, its lines into the results
  local label="$1"; shift
  python3 "$checker" "$@" --label "$label" | tee -a "$results"
  [ "${PIPESTATUS[0]}" = 0 ] || failed+=("$label")
}

for name in $programs; do
  read -r -a cmd <<<"$(command_of "$name")"
  p="$out/$name"
  step "$name: full capture (the reference)"
  check "$name full" "$capture" --no-summary -o "$p-full.json" -- "${cmd[@]}" --seconds 2 \
    >"$p-full.txt" 2>&1
  quiet_threads "$name full" "$p-full.txt"

  step "$name: --cuda-sample=100ms/1s"
  check "$name sample run" "$capture" -o "$p-sampled.json" --cuda-sample=100ms/1s -- \
    "${cmd[@]}" --seconds 4 >"$p-sampled.txt" 2>&1
  quiet_threads "$name sample" "$p-sampled.txt"
  grep -E "GPU detail was sampled|CUPTI's switches" "$p-sampled.txt" | tee -a "$results"
  lo "$name sample" sample "$p-full.json" "$p-sampled.json"

  step "$name: the flight recorder, a trigger and a raise"
  check "$name raise run" "$capture" --flight-recorder=30s --cuda-sample=20ms/2s \
    --cuda-raise=1s --trigger='step>3x' -o "$p-flight.json" -- "${cmd[@]}" --seconds 6 \
    --slow-at 2.5 >"$p-flight.txt" 2>&1
  quiet_threads "$name raise" "$p-flight.txt"
  grep -E "dump [0-9]" "$p-flight.txt" | head -n 4
  lo "$name raise" raise "$p-full.json" "$p-flight.dump1.json" "$p-flight.dump2.json"

  step "$name: --dump-scope=job over two ranks, the slow step on rank 1"
  job="leave-on-$name-$$"
  pids=()
  for r in 0 1; do
    slow=(); [ "$r" = 1 ] && slow=(--slow-at 2.5)
    OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 NVTXPP_JOB_ID="$job" \
      "$capture" --flight-recorder=30s --dump-scope=job --cuda-sample=20ms/2s --cuda-raise=1s \
      --trigger='step>3x' -o "$p-job.json" -- "${cmd[@]}" --seconds 6 "${slow[@]}" \
      >"$p-job-rank$r.txt" 2>&1 &
    pids+=("$!")
  done
  for k in "${!pids[@]}"; do
    wait "${pids[k]}" || failed+=("$name job rank $k (status $?)")
    quiet_threads "$name job rank $k" "$p-job-rank$k.txt"
    grep -E "dump [0-9]" "$p-job-rank$k.txt" | head -n 3
  done
  lo "$name job" job "$p-full.json" "$p-job.rank0.dump1.json" "$p-job.rank0.dump2.json" \
    "$p-job.rank1.dump1.json" "$p-job.rank1.dump2.json"

  step "$name: capture windows"
  check "$name window run" "$capture" --no-summary --capture-range=nvtx --nvtx-capture=step \
    --capture-range-end=none --duration=1 -o "$p-range.json" -- "${cmd[@]}" --seconds 3 >"$p-range.txt" 2>&1
  quiet_threads "$name window" "$p-range.txt"
  lo "$name window (capture range, --duration=1)" window "$p-full.json" "$p-range.json" \
    --duration 1
  if [ "$name" = blas ]; then
    check "$name delay run" "$capture" --no-summary --delay=3.5 --duration=1 \
      -o "$p-delay.json" -- "${cmd[@]}" --seconds 5 >"$p-delay.txt" 2>&1
    quiet_threads "$name delay" "$p-delay.txt"
    lo "$name window (--delay=3.5 --duration=1)" window "$p-full.json" "$p-delay.json" \
      --duration 1
  fi
done
echo
cat "$results"
# The traces stay behind (large); the results and the logs come back.
rm -f "$out"/*.json
finish
