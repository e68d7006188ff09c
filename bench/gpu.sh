#!/usr/bin/env bash
# bench/gpu.sh — the one prepared script for a machine with an NVIDIA GPU (issue 6): builds with
# CUDA, runs the GPU tests, benchmarks every CUDA twin's naive variant next to its tuned ones at
# the same sizes (each prints its achieved GB/s), verifies the tuned ones on the GPU, and runs the
# Kokkos bench (with its STREAM roofline) on the host. Everything goes to one file, OUT (default
# gpu-figures.txt), ending with one JSON line. Meant to finish well inside 8 minutes on an H200.
# Not yet run on a GPU: no GPU machine has been lent to this project's sessions so far.
#
#   bash bench/gpu.sh [OUT]        # from the repository root
#
# Without a usable GPU it still builds, and every step says why it was skipped (exit code 77 of
# flotilla-kernel), so the script can be checked anywhere.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-gpu-figures.txt}")
build=build-gpu
: > "$out"
say() { echo "$@" | tee -a "$out"; }

say "== gpu.sh $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$out" ||
  say "nvidia-smi: not available"

say "== configure and build (CUDA on)"
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFLOTILLA_WITH_CUDA=ON >>"$out" 2>&1 ||
   ! cmake --build "$build" -j"$(nproc)" --target flotilla-kernel kernels_test >>"$out" 2>&1; then
  say "build failed: see above"; exit 1
fi

say "== GPU tests (ctest -L gpu)"
ctest --test-dir "$build" -L gpu --output-on-failure 2>&1 | tail -25 | tee -a "$out"

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
}

say "== CUDA twins: best-known variants against the naive ones (same sizes)"
run rmsnorm_separate rmsnorm --device cuda --impl separate --rows 4096 --d 8192
run rmsnorm_fused    rmsnorm --device cuda --impl fused --vec 8 --rows 4096 --d 8192
for w in fp32 bf16; do
  run "gemv_${w}_naive" gemv --device cuda --weights $w --unroll 1 --rows 8192 --cols 8192
  run "gemv_${w}_tuned" gemv --device cuda --weights $w --unroll 8 --split-k 4 --rows 8192 --cols 8192
  run "gemv_${w}_batch8" gemv --device cuda --weights $w --unroll 8 --batch 8 --rows 8192 --cols 8192
done
run attention_1split   attention --device cuda --splits 1
run attention_16splits attention --device cuda --splits 16
run h2d_separate h2d_metadata --impl separate
run h2d_packed   h2d_metadata --impl packed
if command -v mpirun >/dev/null; then
  for impl in separate fused; do
    key="allreduce_nccl_${impl}"
    text=$(timeout 120 mpirun --allow-run-as-root --oversubscribe -n 1 "$kernel" allreduce_norm --device nccl \
           --impl $impl 2>&1); rc=$?
    say "-- $key: $text" | tail -3
    figures[$key]=$([ $rc -eq 0 ] && echo "$text" | grep -m1 '^flotilla-metric:' | sed 's/^flotilla-metric: *//' || echo "rc=$rc")
  done
fi

say "== verification of the same variants on the GPU"
for fam in "rmsnorm --impl fused --vec 8" "gemv --weights bf16 --unroll 8 --split-k 4" "attention --splits 16"; do
  # shellcheck disable=SC2086
  text=$(timeout 120 "$kernel" $fam --device cuda --verify 2>&1); say "-- verify $fam: rc=$? $(echo "$text" | tail -1)"
done

say "== the Kokkos bench on this machine's CPU, for the record (bench/kernels --quick if it has it)"
if cmake --build "$build" -j"$(nproc)" --target kernels_bench >>"$out" 2>&1; then
  timeout 240 "$build/bench/kernels" --quick 2>&1 | tail -5 | tee -a "$out"
fi

json="{\"bench\":\"gpu\""
for key in $(printf '%s\n' "${!figures[@]}" | sort); do json+=",\"$key\":\"${figures[$key]}\""; done
say "$json}"
