#!/usr/bin/env bash
# bench/gpu.sh — the one prepared script for a machine with an NVIDIA GPU (issue 6): builds with
# CUDA, runs the GPU tests, benchmarks every CUDA twin's naive variant next to its tuned ones at
# the same sizes (each prints its achieved GB/s), verifies the tuned ones on the GPU, and runs the
# Kokkos bench (with its STREAM roofline) on the host. Everything goes to one file, OUT (default
# gpu-figures.txt), ending with one JSON line. Meant to finish well inside 8 minutes on an H200.
# Not yet run on a GPU: no GPU machine has been lent to this project's sessions so far.
#
#   bash bench/gpu.sh [OUT]                        # full size, from the repository root
#   bash bench/gpu.sh --build DIR --quick [OUT]    # DIR's programs as built, small sizes
#
# --build DIR uses DIR's flotilla-kernel and bench/kernels as they are: no configure, no build,
# no `ctest -L gpu`. --quick shrinks every size (and bench/kernels runs --quick either way). The
# ctest bench_gpu_smoke (labels gpu, bench) runs `--build BUILD_DIR --quick`.
# The correctness half: every CUDA variant and verification either runs (exit 0) or is skipped
# (exit 77: no usable GPU, or no CUDA built in), and bench/kernels passes its own checks; any
# other exit is a failure, named in the JSON line's "failures", and the script exits 1. Without a
# usable GPU every CUDA step says why it was skipped and the script exits 77 (ctest's skip) once
# the rest has passed, so it can be checked anywhere.
set -uo pipefail
build=build-gpu prebuilt=0 quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(realpath "$2"); prebuilt=1; shift 2 ;;  # relative to where it was run from
    --quick) quick=1; shift ;;
    *) break ;;
  esac
done
cd "$(dirname "$0")/.." || exit 1
out=$(realpath -m "${1:-gpu-figures.txt}")
: > "$out"
say() { echo "$@" | tee -a "$out"; }
failures=() ran=0
# Sizes: full, or small with --quick (the same variants).
if [ $quick = 1 ]; then
  rms=(--rows 256 --d 1024) mat=(--rows 1024 --cols 1024) att=(--seq-len 2048 --iters 3)
else
  rms=(--rows 4096 --d 8192) mat=(--rows 8192 --cols 8192) att=()
fi

say "== gpu.sh $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$out" ||
  say "nvidia-smi: not available"

if [ $prebuilt = 0 ]; then
  say "== configure and build (CUDA on)"
  if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFLOTILLA_WITH_CUDA=ON >>"$out" 2>&1 ||
     ! cmake --build "$build" -j"$(nproc)" --target flotilla-kernel kernels_test >>"$out" 2>&1; then
    say "build failed: see above"; exit 1
  fi

  say "== GPU tests (ctest -L gpu)"
  ctest --test-dir "$build" -L gpu --output-on-failure 2>&1 | tail -25 | tee -a "$out"
else
  say "== $build as built (--build)"
  [ -x "$build/bin/flotilla-kernel" ] || { say "no $build/bin/flotilla-kernel: build it first"; exit 1; }
fi

# Counts one step's exit: 0 ran, 77 skipped, anything else a failure named KEY.
judge() {
  case $2 in
    0) ran=$((ran + 1)) ;;
    77) ;;
    *) failures+=("$1: rc=$2") ;;
  esac
}

kernel="$build/bin/flotilla-kernel"
declare -A figures
# Runs one variant; keeps its metrics line, or the reason it was skipped or failed.
run() {
  local key=$1; shift
  local text rc
  text=$(timeout 120 "$kernel" "$@" 2>&1); rc=$?
  say "-- $key: flotilla-kernel $*"
  say "$text" | tail -3
  if [ $rc -eq 0 ]; then
    figures[$key]=$(echo "$text" | grep -m1 '^flotilla-metric:' | sed 's/^flotilla-metric: *//')
  else
    figures[$key]="rc=$rc"
  fi
  judge "$key" $rc
}

say "== CUDA twins: best-known variants against the naive ones (same sizes)"
run rmsnorm_separate rmsnorm --device cuda --impl separate "${rms[@]}"
run rmsnorm_fused    rmsnorm --device cuda --impl fused --vec 8 "${rms[@]}"
for w in fp32 bf16; do
  run "gemv_${w}_naive" gemv --device cuda --weights $w --unroll 1 "${mat[@]}"
  run "gemv_${w}_tuned" gemv --device cuda --weights $w --unroll 8 --split-k 4 "${mat[@]}"
  run "gemv_${w}_batch8" gemv --device cuda --weights $w --unroll 8 --batch 8 "${mat[@]}"
done
run attention_1split   attention --device cuda --splits 1 "${att[@]}"
run attention_16splits attention --device cuda --splits 16 "${att[@]}"
run h2d_separate h2d_metadata --impl separate
run h2d_packed   h2d_metadata --impl packed
if command -v mpirun >/dev/null; then
  for impl in separate fused; do
    key="allreduce_nccl_${impl}"
    text=$(timeout 120 mpirun --allow-run-as-root --oversubscribe -n 1 "$kernel" allreduce_norm --device nccl \
           --impl $impl 2>&1); rc=$?
    say "-- $key: $text" | tail -3
    figures[$key]=$([ $rc -eq 0 ] && echo "$text" | grep -m1 '^flotilla-metric:' | sed 's/^flotilla-metric: *//' || echo "rc=$rc")
    judge "$key" $rc
  done
fi

say "== verification of the same variants on the GPU"
for fam in "rmsnorm --impl fused --vec 8" "gemv --weights bf16 --unroll 8 --split-k 4" "attention --splits 16"; do
  # shellcheck disable=SC2086
  text=$(timeout 120 "$kernel" $fam --device cuda --verify 2>&1); rc=$?
  say "-- verify $fam: rc=$rc $(echo "$text" | tail -1)"
  judge "verify $fam" $rc
done

say "== the Kokkos bench on this machine's CPU, for the record (bench/kernels --quick if it has it)"
if [ $prebuilt = 1 ] || cmake --build "$build" -j"$(nproc)" --target kernels_bench >>"$out" 2>&1; then
  if [ -x "$build/bench/kernels" ]; then
    timeout 240 "$build/bench/kernels" --quick >"$out.kernels" 2>&1; rc=$?
    tail -5 "$out.kernels" | tee -a "$out"; rm -f "$out.kernels"
    [ $rc = 0 ] || failures+=("bench/kernels --quick: rc=$rc")
  else
    say "no $build/bench/kernels (FLOTILLA_BUILD_BENCH off): not run"
  fi
fi

json="{\"bench\":\"gpu\",\"quick\":$([ $quick = 1 ] && echo true || echo false),\"cuda_steps_run\":$ran"
for key in $(printf '%s\n' "${!figures[@]}" | sort); do json+=",\"$key\":\"${figures[$key]}\""; done
json+=",\"failures\":["
for i in "${!failures[@]}"; do json+="$([ "$i" = 0 ] || echo ,)\"${failures[$i]}\""; done
say "$json]}"
for f in "${failures[@]}"; do echo "bench/gpu.sh: failed: $f" >&2; done
[ ${#failures[@]} = 0 ] || exit 1
[ $ran -gt 0 ] || { echo "bench/gpu.sh: no CUDA step ran (no usable GPU here): skipped" >&2; exit 77; }
