#!/usr/bin/env bash
# workdir_env.sh FLOTILLA WORK BACKEND — runs workdir_env.ini from WORK with relative commands and
# env lines on BACKEND (local, mpi, slurm): every trial must succeed, see its variables, and run
# in WORK (on Slurm too, where a job's ranks start in the job's folder).
set -euo pipefail
flotilla=$1 work=$2 backend=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
cat > bench.sh <<'SH'
#!/bin/sh
[ "$(pwd)" = "$EXPECT_DIR" ] || { echo "ran in $(pwd), not $EXPECT_DIR"; exit 3; }
[ "$BENCH_LABEL" = "x is $BENCH_X" ] || { echo "BENCH_LABEL='$BENCH_LABEL'"; exit 4; }
echo "flotilla-metric: score=$BENCH_X"
SH
cat > verify.sh <<'SH'
#!/bin/sh
[ "$(pwd)" = "$EXPECT_DIR" ] || { echo "ran in $(pwd), not $EXPECT_DIR"; exit 3; }
case "$VERIFY_SHARD" in 0|1) ;; *) echo "VERIFY_SHARD='$VERIFY_SHARD'"; exit 4 ;; esac
SH
chmod +x bench.sh verify.sh
export EXPECT_DIR=$work
extra=()
[ "$backend" = slurm ] && extra=(--resources.partition=debug --resources.ranks_per_node=2)
"$flotilla" run "$here/workdir_env.ini" --campaign.results="$work/c.h5" --resources.backend="$backend" "${extra[@]}" \
  --no-live > run.log 2>&1 || { cat run.log; exit 1; }
"$flotilla" results summary "$work/c.h5" --json > summary.json
/usr/bin/python3 - "$work/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
p = s["progress"]
assert p["failed_trials"] == 0 and p["verified"] == 4 and p["rolled_back"] == 0, p
assert s["best"]["config"] == "x=4", s["best"]
print("workdir_env ok:", p)
PY
