#!/usr/bin/env bash
# stencil-table.sh — measure the stencil tuning space with flotilla-kernel, robustly on a shared
# machine: every configuration runs back to back with the baseline in each round, and the table
# reports the median gflops and the median of the per-round ratios (ratios of neighbouring runs
# hide most of the load that other processes put on the cores).
#
#   kernels/tools/stencil-table.sh <flotilla-kernel> [rounds] [extra args, e.g. --n 1024 --iters 50]
set -euo pipefail
exe=${1:?usage: stencil-table.sh <path/to/flotilla-kernel> [rounds] [extra args]}
rounds=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
baseline="16 16 1 double"   # the recommended quickstart baseline (docs/kernels.md)
configs=(
  "4 16 1 double" "8 8 1 double" "16 16 1 double" "16 8 1 double" "32 8 1 double" "32 1 1 double"
  "64 4 1 double" "256 1 1 double" "256 4 1 double" "32 8 2 double" "256 1 2 double"
  "32 8 4 double" "128 1 4 double" "256 4 4 double" "256 16 4 double"
  "32 8 1 float" "256 1 1 float" "256 4 4 float"
)

gflops() {  # tile_x tile_y unroll precision -> gflops
  "$exe" stencil --tile-x "$1" --tile-y "$2" --unroll "$3" --precision "$4" "${@:5}" |
    sed -n 's/^flotilla-metric:.* gflops=\([^ ]*\).*/\1/p'
}

samples=$(mktemp)
trap 'rm -f "$samples"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for cfg in "${configs[@]}"; do
    # shellcheck disable=SC2086  # word splitting of the configuration is intended
    base=$(gflops $baseline "$@")
    # shellcheck disable=SC2086
    value=$(gflops $cfg "$@")
    echo "$cfg $value $base" >>"$samples"
  done
done

echo "| tile_x | tile_y | unroll | precision | gflops (median) | vs baseline 16x16 (median ratio) |"
echo "|---:|---:|---:|---|---:|---:|"
for cfg in "${configs[@]}"; do
  # median of a column over this configuration's rounds
  median() { grep "^$cfg " "$samples" | awk "{print $1}" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
  read -r tx ty u p <<<"$cfg"
  printf "| %s | %s | %s | %s | %.2f | %.2fx |\n" "$tx" "$ty" "$u" "$p" "$(median '$5')" "$(median '$5/$6')"
done
