#!/usr/bin/env bash
# workdir_env.sh FLOTILLA WORK BACKEND — runs workdir_env.ini from WORK with relative commands and
# env lines on BACKEND (local, mpi, slurm): every trial must succeed, see its variables, and run
# in WORK (on Slurm too, where a job's ranks start in the job's folder). WORK is a git repository:
# the provenance event must name its commit, and each trial the Slurm job it ran in (slurm only);
# a second run after a new commit must warn that the campaign's runs mix commits.
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
git_() { git -c user.name=flotilla-test -c user.email=test@invalid -c commit.gpgsign=false "$@"; }
git_ init -q . && git_ add bench.sh verify.sh && git_ commit -q -m first
export EXPECT_DIR=$work
extra=()
[ "$backend" = slurm ] && extra=(--resources.partition=debug --resources.ranks_per_node=2)
"$flotilla" run "$here/workdir_env.ini" --campaign.results="$work/c.h5" --resources.backend="$backend" "${extra[@]}" \
  --no-live > run.log 2>&1 || { cat run.log; exit 1; }
"$flotilla" results summary "$work/c.h5" --json > summary.json
"$flotilla" results export "$work/c.h5" --table trials --format json -o trials.json
/usr/bin/python3 - "$work/summary.json" "$work/trials.json" "$(git rev-parse HEAD)" "$backend" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
p = s["progress"]
assert p["failed_trials"] == 0 and p["verified"] == 4 and p["rolled_back"] == 0, p
assert s["best"]["config"] == "x=4", s["best"]
prov = s["provenance"]
assert prov["git_commit"] == sys.argv[3] and prov["git_dirty"] is False, prov
assert prov["runs"] == 1 and "BENCH_X={x}" in prov["env"], prov
trials = json.load(open(sys.argv[2]))
jobs = {t["slurm_job"] for t in trials["rows"]}
if sys.argv[4] == "slurm":
    assert all(j and re.fullmatch(r"[0-9]+(_[0-9]+)?", j) for j in jobs), jobs
else:
    assert jobs == {None}, jobs  # not known: outside Slurm
print("workdir_env ok:", p, "commit", prov["git_commit"][:12], "slurm jobs", sorted(map(str, jobs)))
PY
# A new commit, then the campaign run again (it is complete: it records this run and stops).
echo "# changed" >> verify.sh && git_ commit -q -am second
"$flotilla" run "$here/workdir_env.ini" --campaign.results="$work/c.h5" --resources.backend="$backend" "${extra[@]}" \
  --no-live > run2.log 2>&1 || { cat run2.log; exit 1; }
"$flotilla" results summary "$work/c.h5" > summary.txt
grep -q "provenance git $(git rev-parse --short=12 HEAD) in $work" summary.txt || { cat summary.txt; exit 1; }
grep -q "warning: the 2 runs of this campaign ran on different commits" summary.txt || { cat summary.txt; exit 1; }
echo "a second run on a new commit warns"
