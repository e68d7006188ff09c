#!/usr/bin/env bash
# long_run.sh — the long fuzzing runs of docs/verification.md ("## Fuzzing"), one target after
# another, each for RUNS executions under the build's ASan+UBSan (a FLOTILLA_FUZZ=ON build).
#   tests/fuzz/long_run.sh BUILD_DIR WORK_DIR RUNS [TARGET...]    (default: every fuzz_* target)
# Each target fuzzes over WORK_DIR/NAME/corpus (kept, so a second run goes on from the first),
# seeded like its ctest test: tests/fuzz/fuzz_NAME/{corpus,regressions} and, for the HDF5
# targets, BUILD_DIR/tests/fuzz/h5_seeds. A crash, leak, hang (-timeout) or an input that needs
# more than 2 GiB stops the target with its input in WORK_DIR/NAME/artifacts/. One line per
# target on stdout: name, outcome, executions, seconds, executions per second, corpus size.
# ASan's quarantine is cut from 256 to 16 MiB: the HDF5 targets run 1.5x faster, and a use after
# free is still caught within the next 16 MiB of frees.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "$1" && pwd)"
work="$2"
runs="$3"
shift 3
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(ini settings space recorded_space metrics slurm manifest reports job_file store)
fi
printf '%-16s %-8s %10s %8s %8s %s\n' target outcome execs seconds exec/s corpus
for name in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$name"
  dir="$work/$name"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  args=(-runs="$runs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/artifacts/")
  [ -f "$here/fuzz_$name/fuzz_$name.dict" ] && args+=(-dict="$here/fuzz_$name/fuzz_$name.dict")
  inputs=("$dir/corpus")
  for d in "$here/fuzz_$name/corpus" "$here/fuzz_$name/regressions"; do [ -d "$d" ] && inputs+=("$d"); done
  case $name in store | job_file) inputs+=("$build/tests/fuzz/h5_seeds") ;; esac
  start=$(date +%s.%N)
  ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=16}" "$bin" "${args[@]}" "${inputs[@]}" >"$dir/log" 2>&1
  rc=$?
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  corpus=$(grep -o 'corp: [0-9]*/[0-9a-zA-Z]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  outcome=clean
  [ $rc -ne 0 ] && outcome="rc=$rc"
  ls "$dir/artifacts" | grep -q . && outcome="$outcome,artifacts"
  printf '%-16s %-8s %10s %8.0f %8.0f %s\n' "$name" "$outcome" "${execs:-?}" "$seconds" \
    "$(awk -v n="${execs:-0}" -v s="$seconds" 'BEGIN { print n / s }')" "${corpus:-?}"
done
