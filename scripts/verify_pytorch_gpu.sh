#!/usr/bin/env bash
# Issue 46: PyTorch and torchrun, first-class, on a machine with a GPU (two for `ddp`:
# nvidia-h200-x2). The programs: tests/capture/corpus/torch_train.py in its five modes (eager
# with torch.cuda.nvtx ranges, emit_nvtx, torch.compile, CUDA graphs, DDP under torchrun).
#
#   scripts/verify_pytorch_gpu.sh [OUT_DIR]     (default: $OUT, else out/pytorch-gpu)
# Environment: BUILD_DIR (default build-pytorch-gpu), PARTS (default
# "reports torchrun leave_on cost diff"), ROUNDS (cost rounds, default 5), MODES (default
# "eager emit_nvtx compile graphs"), CONFIGS (the cost part's configurations, default
# "none nvtx ours nsys sample"; also nsys_nvtx, idle, idle_nodrv, idle_bare), SECONDS (a cost
# run's steps, default 6).
# Parts:
#   reports   each mode under Nsight Systems and under nvtxpp-capture, the six reports compared
#             (tests/capture/corpus/compare_corpus.py: rows and counts); CUDA graphs in both
#             graph trace modes; DDP as `nvtxpp-capture -- torchrun` (needs two GPUs).
#   torchrun  both ways of launching: one trace of torchrun and its ranks (each process named
#             by its rank), and `torchrun --no-python nvtxpp-capture` (a file per rank, merged
#             by rank); a job dump of both ranks on one rank's slow step (--dump-scope=job).
#   leave_on  --cuda-sample and the flight recorder with a trigger and a raise on the eager loop
#             (tests/capture/gpu/leave_on_check.py against a full capture).
#   sample_cause  (not by default) the eager loop's steps after a capture window that closed,
#             opened at CUDA's start or later: where the sampled mode's cost comes from
#   cost      each mode's step: no tool, nvtxpp-capture, nsys, --cuda-sample=100ms/1s, in
#             alternated, rotated rounds (bench/sample_cost.py's ratios): the rounds of
#             scripts/verify_launch_cost_gpu.sh, in $OUT/cost/.
#   diff      `nvtxpp-capture diff` of unchanged runs (3 a side) and of a real change (batch
#             16 -> 8).
#   jax       tests/capture/corpus/jax_steps.py (XLA's own NVTX ranges) under Nsight Systems
#             twice and under nvtxpp-capture twice, both tracing graph nodes (XLA runs each
#             step as a CUDA graph), names compared with their digits folded (XLA's ids of the
#             run): ours against nsys, nsys against itself and ours against itself, with XLA's
#             autotuner on and off (JAX_TUNES); the four .sqlite files of the first pair come
#             back (scripts/nvtx_counts.py counts them).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-${OUT:-out/pytorch-gpu}}"
build="${BUILD_DIR:-build-pytorch-gpu}"
parts=" ${PARTS:-reports torchrun leave_on cost diff jax} "
modes="${MODES:-eager emit_nvtx compile graphs}"
rounds="${ROUNDS:-5}"
read -r -a configs <<<"${CONFIGS:-none nvtx ours nsys sample}"
seconds="${SECONDS_A_RUN:-6}"
want() { [[ "$parts" == *" $1 "* ]]; }
. "$(dirname "$0")/gpu_common.sh"  # out, work, nsys, the log, step, check, finish, sqlite_args
export NVTXPP_NSYS="$nsys"

step "configure and build"
check configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNVTXPP_BUILD_EXAMPLES=OFF -DNVTXPP_BUILD_TESTS=OFF -DNVTXPP_BUILD_BENCHMARKS=OFF \
  "${sqlite_args[@]}" >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; finish; }
check build cmake --build "$build" -j "$(nproc)" --target nvtxpp-capture nvtxpp_inject \
  >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; finish; }
capture="$(cd "$build" && pwd)/tools/capture/nvtxpp-capture"
train="$root/tests/capture/corpus/torch_train.py"
torchrun=(python3 -m torch.distributed.run --standalone --nproc-per-node=2)
gpus=$(nvidia-smi -L 2>/dev/null | grep -c GPU)
python3 -c 'import torch; print("torch", torch.__version__, "GPUs", torch.cuda.device_count())'
results="$out/results.txt"
: >"$results"
compare="$root/tests/capture/corpus/compare_corpus.py"
cmp_dir="$work/compare"

if want reports; then
  step "reports: ours against Nsight Systems, six reports"
  for mode in $modes; do
    if [ "$mode" = graphs ]; then
      for trace in node graph; do
        check "reports graphs $trace" python3 "$compare" "torch_graphs_$trace" --capture "$capture" \
          --out "$cmp_dir" --nsys-arg=--cuda-graph-trace=$trace \
          --capture-arg=--cuda-graph-trace=$trace -- python3 "$train" graphs --steps 20 \
          >"$work/cmp-graphs-$trace.txt" 2>&1
        echo "- graphs (--cuda-graph-trace=$trace): status $?" | tee -a "$results"
      done
      continue
    fi
    check "reports $mode" python3 "$compare" "torch_$mode" --capture "$capture" --out "$cmp_dir" \
      -- python3 "$train" "$mode" --steps 20 >"$work/cmp-$mode.txt" 2>&1
    echo "- $mode: status $?" | tee -a "$results"
  done
  if [ "$gpus" -ge 2 ]; then
    check "reports ddp" python3 "$compare" torch_ddp --capture "$capture" --out "$cmp_dir" \
      -- "${torchrun[@]}" "$train" ddp --steps 20 >"$work/cmp-ddp.txt" 2>&1
    echo "- ddp (torchrun, 2 ranks, NCCL): status $?" | tee -a "$results"
  else
    echo "- ddp: skipped ($gpus GPU; needs 2)" | tee -a "$results"
  fi
  (cd "$cmp_dir" && tar czf "$out/reports.tgz" ./*.md ./*.json 2>/dev/null)
  grep -hE "^\| (nvtx_|cuda_)|mismatch|status" "$work"/cmp-*.txt | head -n 80
fi

if want torchrun && [ "$gpus" -ge 2 ]; then
  step "torchrun: one trace of the launcher and its ranks"
  check "torchrun one trace" "$capture" --no-summary -o "$out/ddp-one.json" -- \
    "${torchrun[@]}" "$train" ddp --steps 20 >"$work/ddp-one.txt" 2>&1
  python3 - "$out/ddp-one.json" <<'PY' | tee -a "$results"
import json, sys
t = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted(e["args"]["name"] for e in t if e.get("name") == "process_name")
ranked = [n for n in names if n.startswith(("rank 0: ", "rank 1: "))]
steps = {e["pid"] for e in t if e.get("ph") == "X" and e.get("name") == "step"}
ok = len(ranked) == 2 and len(steps) == 2
print(f"- one trace of torchrun: {len(names)} processes, ranks named: {ranked}; steps in "
      f"{len(steps)} processes" + ("" if ok else "  FAIL"))
sys.exit(0 if ok else 1)
PY
  [ "${PIPESTATUS[0]}" = 0 ] || failed+=("torchrun one trace: ranks named")

  step "torchrun --no-python nvtxpp-capture: a file per rank, merged by rank"
  check "torchrun per rank" "${torchrun[@]}" --no-python "$capture" --no-summary \
    -o "$out/ddp.json" -- python3 "$train" ddp --steps 20 >"$work/ddp-per-rank.txt" 2>&1
  grep "rank [01] of 2" "$work/ddp-per-rank.txt" | tee -a "$results"
  "$capture" merge -o "$work/ddp-merged.json" "$out/ddp.rank0.json" "$out/ddp.rank1.json" \
    >"$work/merge.txt" 2>&1
  n=$(grep -c "(from RANK)" "$work/merge.txt")
  echo "- merge of the two ranks' files: $n rank(s) from RANK" | tee -a "$results"
  [ "$n" = 2 ] || { failed+=("merge by RANK"); cat "$work/merge.txt"; }

  step "torchrun: a job dump of both ranks on a slow step"
  check "torchrun job" "${torchrun[@]}" --no-python "$capture" --flight-recorder=30s \
    --dump-scope=job --trigger='step>3x' --cuda-sample=20ms/2s --cuda-raise=1s \
    -o "$out/ddp-job.json" -- python3 "$train" ddp --seconds 8 --slow-at 100 \
    >"$work/ddp-job.txt" 2>&1
  grep -E "rank [01]: dump [12] " "$work/ddp-job.txt" | cut -c1-220 | tee -a "$results"
  for r in 0 1; do
    [ -f "$out/ddp-job.rank$r.dump1.json" ] || failed+=("job dump 1 of rank $r")
    [ -f "$out/ddp-job.rank$r.dump2.json" ] || failed+=("raised dump 2 of rank $r")
  done
  grep -q "could not start" "$work"/ddp-*.txt && failed+=("a thread of ours could not start")
  cp "$work/ddp-job.txt" "$out/ddp-job-stderr.txt"
  rm -f "$out"/ddp*.json
fi

if want leave_on; then
  step "leave it on: the eager loop sampled, triggered and raised"
  check "eager full" "$capture" --no-summary -o "$work/eager-full.json" -- \
    python3 "$train" eager --steps 40 >/dev/null 2>&1
  check "eager sampled" "$capture" -o "$work/eager-sampled.json" --cuda-sample=100ms/1s -- \
    python3 "$train" eager --seconds 4 >"$work/eager-sampled.txt" 2>&1
  python3 "$root/tests/capture/gpu/leave_on_check.py" sample "$work/eager-full.json" \
    "$work/eager-sampled.json" --label "eager sample" | tee -a "$results"
  [ "${PIPESTATUS[0]}" = 0 ] || failed+=("eager sample")
  check "eager flight" "$capture" --no-summary --flight-recorder=30s --cuda-sample=20ms/2s \
    --cuda-raise=1s --trigger='step>3x' -o "$work/eager-flight.json" -- \
    python3 "$train" eager --seconds 6 --slow-at 150 >"$work/eager-flight.txt" 2>&1
  python3 "$root/tests/capture/gpu/leave_on_check.py" raise "$work/eager-full.json" \
    "$work/eager-flight.dump1.json" "$work/eager-flight.dump2.json" --label "eager raise" |
    tee -a "$results"
  [ "${PIPESTATUS[0]}" = 0 ] || { failed+=("eager raise"); grep dump "$work/eager-flight.txt"; }
fi

if want cost; then
  # The rounds themselves are scripts/verify_launch_cost_gpu.sh's (the same configurations and
  # more: idle_keep, raised, late, late_keep), with this build.
  step "cost: $rounds alternated, rotated rounds a mode: ${configs[*]}"
  PARTS=rounds BUILD_DIR="$build" MODES="$modes" ROUNDS="$rounds" SECONDS_A_RUN="$seconds" \
    CONFIGS="${configs[*]}" bash "$here/verify_launch_cost_gpu.sh" "$out/cost" >"$work/cost.txt" 2>&1
  status=$?
  cat "$work/cost.txt"
  [ "$status" = 0 ] || failed+=("cost (status $status)")
fi

if want sample_cause; then
  # Why steps outside --cuda-sample's periods cost what a full capture costs on the eager loop
  # (docs/pytorch.md): CUPTI switched on once at CUDA's start and off (early: a window of the
  # first 5 s), against switched on later on a live context and off again (late: a window from
  # 8 s to 11 s after the launch); the steps after either window, against no tool, same rounds.
  step "sample_cause: the steps after a capture window, early and late"
  for r in $(seq 1 "$rounds"); do
    for c in none early late; do
      case "$c" in
        none) tool=() ;;
        early) tool=("$capture" --summary-only --duration=5 --) ;;
        late) tool=("$capture" --summary-only --delay=8 --duration=3 --) ;;
      esac
      line=$("${tool[@]}" python3 "$train" eager --seconds 14 --after 13 2>/dev/null |
        grep -E "^(steps|after)=" | tr '\n' ' ')
      echo "round=$r config=$c $line" | tee -a "$out/sample-cause.txt"
    done
  done
fi

if want diff; then
  step "diff: unchanged runs, and a real change (batch 16 -> 8)"
  for side in a b c; do
    "$capture" --no-summary -o "$work/base-$side.sqlite" -- python3 "$train" eager --steps 40 \
      >/dev/null 2>&1
    "$capture" --no-summary -o "$work/same-$side.sqlite" -- python3 "$train" eager --steps 40 \
      >/dev/null 2>&1
    "$capture" --no-summary -o "$work/half-$side.sqlite" -- python3 "$train" eager --steps 40 \
      --batch 8 >/dev/null 2>&1
  done
  "$capture" diff "$work"/base-*.sqlite --vs "$work"/same-*.sqlite >"$out/diff-unchanged.txt" 2>&1
  "$capture" diff "$work"/base-*.sqlite --vs "$work"/half-*.sqlite >"$out/diff-batch.txt" 2>&1
  echo "- unchanged: $(grep -cE ' (slower|faster|more|fewer) ' "$out/diff-unchanged.txt") row(s) with a verdict" |
    tee -a "$results"
  echo "- batch 16 -> 8: $(grep -cE ' (slower|faster) ' "$out/diff-batch.txt") row(s) slower or faster" |
    tee -a "$results"
fi

if want jax; then
  step "jax: XLA's own NVTX ranges, ours against Nsight Systems, each against itself"
  jax_prog=(python3 "$root/tests/capture/corpus/jax_steps.py" --steps 30)
  # XLA runs each step as a CUDA graph (its command buffers): both tools trace the graphs' nodes
  # (nsys's default, --cuda-graph-trace=graph, keeps one record a graph launch and no kernels).
  for tune in ${JAX_TUNES:-on off}; do
    flags=""
    [ "$tune" = off ] && flags="--xla_gpu_autotune_level=0"
    XLA_FLAGS="$flags" check "reports jax autotune $tune" python3 "$compare" "jax_$tune" \
      --capture "$capture" --out "$cmp_dir" --nsys-runs 2 --nsys-arg=--cuda-graph-trace=node \
      --capture-arg=--cuda-graph-trace=node --compare-arg=--fold-digits -- "${jax_prog[@]}" \
      >"$work/cmp-jax-$tune.txt" 2>&1
    echo "- jax (autotuner $tune): status $?" | tee -a "$results"
    XLA_FLAGS="$flags" "$capture" --no-summary --cuda-graph-trace=node \
      -o "$cmp_dir/jax_$tune-ours2.sqlite" -- \
      "${jax_prog[@]}" >/dev/null 2>&1
    grep -E "^\| (nvtx_|cuda_)|noise|Rows" "$work/cmp-jax-$tune.txt" | head -n 20
    python3 "$root/scripts/compare_nsys.py" "$cmp_dir/jax_$tune-ours2.sqlite" \
      "$cmp_dir/jax_$tune-ours.sqlite" --nsys "$nsys" --reports gpu --counts-only --fold-digits \
      >"$work/jax-$tune-ours-ours.txt" 2>&1
    echo "  ours against ours:"; grep -E "^\| (nvtx_|cuda_)" "$work/jax-$tune-ours-ours.txt"
  done
  for f in jax_on-ours.sqlite jax_on-nsys.sqlite jax_on-nsys2.sqlite jax_on-ours2.sqlite; do
    [ -f "$cmp_dir/$f" ] && gzip -c "$cmp_dir/$f" >"$out/$f.gz"
  done
  cp "$work"/cmp-jax-*.txt "$out/" 2>/dev/null
fi

echo
cat "$results"
finish
