#!/usr/bin/env bash
# Issue 53, item 8 (`nvtxpp-capture top` with GPU detail) on a GPU machine: the PyTorch eager loop
# (tests/capture/corpus/torch_train.py eager) under --cuda-sample, watched live.
#
#   scripts/verify_top_gpu.sh [OUT_DIR]     (default: $OUT, else out/top-gpu)
#
# Environment: BUILD_DIR (default build-top-gpu), SECONDS_A_RUN (default 14).
#  1. `top --json --interval=250ms --window=1s -- python3 torch_train.py eager` under
#     --cuda-sample=200ms/2s: a refresh a quarter second, over the last second. Checked
#     (tests/capture/top_gpu_check.py): the header says `sampled`; refreshes whose window holds a
#     period's GPU records fill the GPU column (the "step" row's GPU time > 0, and the rows under
#     it), the refreshes between periods are marked stale with no GPU time; the step's GPU time
#     never exceeds its own wall time summed over the window.
#  2. `top --once --json PID` attached to the same loop started under --flight-recorder
#     --cuda-sample=200ms/2s by itself: the attach by PID gives the same rows, GPU state sampled.
#  3. Where tmux is installed: the screen at 80x24 (tmux capture-pane) while the loop runs, saved
#     as screen.txt and printed (a real screen for the docs and the closing note).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/top-gpu}}"
build="${BUILD_DIR:-build-top-gpu}"
secs="${SECONDS_A_RUN:-14}"
. "$(dirname "$0")/gpu_common.sh"  # out, work, the log, step, check, finish, sqlite_args

step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF \
  "${sqlite_args[@]}" >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; exit 1; }
grep -i "curses" "$work/configure.log" || echo "(ncurses found: top's screen is the curses one)"
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
  >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
capture="$build/tools/capture/nvtxpp-capture"
train="$root/tests/capture/corpus/torch_train.py"

step "1. top --json, launched, on the eager loop under --cuda-sample=200ms/2s"
check top_json "$capture" top --json --interval=250ms --window=1s --cuda-sample=200ms/2s \
  -o "$out/launched.sqlite" -- python3 "$train" eager --seconds "$secs" >"$out/top.jsonl" \
  2>"$out/top.stderr"
tail -n 5 "$out/top.stderr"
echo "$(wc -l <"$out/top.jsonl") refreshes"
check top_json_gpu python3 "$root/tests/capture/top_gpu_check.py" "$out/top.jsonl" \
  --range step | tee "$out/top-check.txt"

step "2. top --once --json PID, attached to the loop under the flight recorder"
"$capture" --flight-recorder=64MB --cuda-sample=200ms/2s -o "$out/attached.sqlite" -- \
  python3 "$train" eager --seconds "$secs" >"$out/attached-program.txt" 2>&1 &
launcher=$!
child=""
for _ in $(seq 1 200); do  # the program's pid: the launcher's child (a condition, polled)
  child=$(cat "/proc/$launcher/task/$launcher/children" 2>/dev/null | awk '{print $1}')
  [ -n "$child" ] && break
  sleep 0.05
done
# After its warm-up: the "step" ranges run (polled through top itself, 60 s at most).
ok=1
for _ in $(seq 1 60); do
  if "$capture" top --once --json --interval=1s "$child" >"$out/attached.json" 2>"$out/attached.stderr" &&
    grep -q '"name":"step"' "$out/attached.json"; then
    ok=0
    break
  fi
  sleep 1  # not attached yet (the program still starts its recorder) or no step yet
done
cat "$out/attached.stderr"
check attached_step_row test "$ok" = 0
check attached_gpu python3 "$root/tests/capture/top_gpu_check.py" "$out/attached.json" \
  --range step --attached | tee -a "$out/top-check.txt"

step "3. the screen at 80x24 (tmux)"
if command -v tmux >/dev/null 2>&1; then
  tmux kill-session -t nvtxpp-top-gpu 2>/dev/null
  tmux new-session -d -s nvtxpp-top-gpu -x 80 -y 24 \
    "$capture top --interval=500ms --cuda-sample=200ms/2s -o $work/screen.sqlite -- python3 $train eager --seconds $secs"
  shown=1
  for _ in $(seq 1 120); do  # until the step row is on screen (a condition, polled)
    tmux capture-pane -p -t nvtxpp-top-gpu >"$out/screen.txt" 2>/dev/null
    if grep -q "step" "$out/screen.txt" && grep -q "sampled" "$out/screen.txt"; then
      sleep 3  # then three more seconds of the loop, so the screen shows periods and gaps
      tmux capture-pane -p -t nvtxpp-top-gpu >"$out/screen.txt"
      shown=0
      break
    fi
    sleep 0.5
  done
  tmux send-keys -t nvtxpp-top-gpu q
  cat "$out/screen.txt"
  check screen test "$shown" = 0
  tmux kill-session -t nvtxpp-top-gpu 2>/dev/null
else
  echo "no tmux on this machine: the screen is not captured"
fi
wait "$launcher"
finish
