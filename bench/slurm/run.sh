#!/usr/bin/env bash
# bench/slurm/run.sh [BUILD_DIR] [TASKS] — the same TASKS (1,000) short evaluations run four ways,
# in one run, on a private local Slurm cluster this script starts and always stops (by PID):
#   flotilla     `flotilla run` of a campaign whose one batch holds the TASKS evaluations, backend
#                slurm: one job, flotilla-worker under srun on 1 node x 4 ranks, every result
#                recorded in the campaign's HDF5 file (the whole `flotilla run`, start to report)
#   mpirun       the same job's manifest run by flotilla-worker under `mpirun -n 4`, no Slurm
#   sbatch       one `sbatch` per evaluation (partition debug, 1 task each), until all have ended
#   array        one `sbatch --array=0-(TASKS-1)`, until all elements have ended
# An evaluation is `sh -c "echo flotilla-metric: score=X"` in each. Makespans are wall clock from
# the first submission (or start) to the last completion, seen by polling squeue every 0.1 s.
# Ends with one JSON line: makespans, flotilla's speedup over sbatch-per-evaluation, its ratio
# to direct mpirun, and its job's wait from submission to start (from the slurmctld log).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
tasks="${2:-1000}"
flotilla="$build/bin/flotilla"
worker="$build/bin/flotilla-worker"
[ -x "$flotilla" ] && [ -x "$worker" ] || { echo "build flotilla and flotilla-worker in $build first" >&2; exit 1; }
work="$(mktemp -d /tmp/flotilla-bench-slurm.XXXXXX)"
chmod 755 "$work"  # munged wants its socket directory reachable by all
cluster="$work/cluster"
export SLURM_LOCAL_CTLD_PORT="${SLURM_LOCAL_CTLD_PORT:-28800}" SLURM_LOCAL_NODE_PORT="${SLURM_LOCAL_NODE_PORT:-28801}"
trap '"$root/scripts/slurm/slurm-local.sh" stop "$cluster" >/dev/null 2>&1 || true' EXIT
"$root/scripts/slurm/slurm-local.sh" start "$cluster" >/dev/null
export SLURM_CONF="$cluster/etc/slurm.conf"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
now() { date +%s.%N; }
# Waits until none of the user's jobs is pending, running or completing.
drain() { while [ -n "$(squeue -h -u "$(id -un)" -t PD,R,CG -o %i | head -1)" ]; do sleep 0.1; done; }

cat > "$work/bench.ini" <<INI
[campaign]
name = bench
[intent]
objective = score
[space]
param = x: int: 1..$tasks
[explore]
command = sh -c "echo flotilla-metric: score=\$0" {x}
repeats = 1
[search]
strategy = grid
budget = $tasks
batch = $tasks
[resources]
backend = slurm
partition = debug
nodes = 1
ranks_per_node = 4
INI

echo "flotilla on Slurm: $tasks evaluations in one job (1 node x 4 ranks)" >&2
t0=$(now)
"$flotilla" run "$work/bench.ini" --campaign.results="$work/bench.h5" --no-live >"$work/flotilla.log" 2>&1
t_flotilla=$(echo "$(now) - $t0" | bc)
recorded=$(/usr/bin/python3 -c 'import h5py,sys; t=h5py.File(sys.argv[1],"r")["trials"][:]; print((t["status"]==0).sum())' "$work/bench.h5")
[ "$recorded" = "$tasks" ] || { echo "flotilla recorded $recorded ok trials, not $tasks" >&2; cat "$work/flotilla.log" >&2; exit 1; }

# The job's wait from submission to start, from the slurmctld log (millisecond timestamps): the
# scheduling pass that starts it runs at the next once-a-second tick (docs/slurm.md, benchmark).
job_id=$(cat "$work"/bench.h5.jobs/*/slurm_job_id 2>/dev/null | head -1 || true)
t_wait=$(/usr/bin/python3 - "$cluster/log/slurmctld.log" "$job_id" <<'PY'
import datetime, re, sys
log, job = sys.argv[1], sys.argv[2]
sub = start = None
for line in open(log, errors="replace"):
    t = line[1:24]
    if sub is None and re.search(rf"_slurm_rpc_submit_batch_job: JobId={job} ", line):
        sub = datetime.datetime.fromisoformat(t)
    elif start is None and re.search(rf"(Started|Allocate) JobId={job} ", line):
        start = datetime.datetime.fromisoformat(t)
print(f"{(start - sub).total_seconds():.3f}" if job and sub and start else "nan")
PY
) || t_wait=nan

echo "directly under mpirun: the same manifest, 4 ranks, no Slurm" >&2
manifest=$(ls "$work"/bench.h5.jobs/*/manifest.json | head -1)
/usr/bin/python3 - "$manifest" "$work/mpirun.json" "$work/mpirun-results.h5" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["output"] = sys.argv[3]
json.dump(m, open(sys.argv[2], "w"))
PY
t0=$(now)
mpirun -n 4 --oversubscribe "$worker" "$work/mpirun.json" >"$work/mpirun.log" 2>&1
t_mpirun=$(echo "$(now) - $t0" | bc)

echo "job array: sbatch --array=0-$((tasks - 1))" >&2
drain
t0=$(now)
sbatch --quiet --partition=debug --ntasks=1 --array=0-$((tasks - 1)) --output=/dev/null \
  --wrap 'sh -c "echo flotilla-metric: score=$0" $SLURM_ARRAY_TASK_ID'
drain
t_array=$(echo "$(now) - $t0" | bc)

echo "one sbatch per evaluation: $tasks x sbatch" >&2
t0=$(now)
for i in $(seq 1 "$tasks"); do
  sbatch --quiet --partition=debug --ntasks=1 --output=/dev/null --wrap "sh -c \"echo flotilla-metric: score=\$0\" $i"
done
t_submit=$(echo "$(now) - $t0" | bc)
drain
t_sbatch=$(echo "$(now) - $t0" | bc)

/usr/bin/python3 - "$tasks" "$t_flotilla" "$t_mpirun" "$t_array" "$t_sbatch" "$t_submit" "$t_wait" <<'PY'
import json, sys
tasks = int(sys.argv[1])
flotilla, mpirun, array, sbatch, submit, wait = map(float, sys.argv[2:])
rows = [("flotilla run, backend slurm (one job, 1 node x 4 ranks)", flotilla),
        ("flotilla-worker directly under mpirun -n 4 (no Slurm)", mpirun),
        (f"one job array of {tasks}", array),
        (f"one sbatch per evaluation ({submit:.1f} s to submit)", sbatch)]
for i, (name, t) in enumerate(rows):
    print(f"{name:<58} {t:8.2f} s  {tasks / t:8.1f} evaluations/s")
    if i == 0:
        print(f"{'  of which its job waited from submission to start':<58} {wait:8.2f} s")
print(json.dumps({"bench": "slurm", "evaluations": tasks, "flotilla_slurm_s": round(flotilla, 3),
                  "direct_mpirun_s": round(mpirun, 3), "job_array_s": round(array, 3),
                  "slurm_submit_to_start_s": None if wait != wait else round(wait, 3),
                  "sbatch_per_evaluation_s": round(sbatch, 3),
                  "speedup_vs_sbatch_per_evaluation": round(sbatch / flotilla, 2),
                  "speedup_vs_job_array": round(array / flotilla, 2),
                  "ratio_to_direct_mpirun": round(flotilla / mpirun, 3),
                  "target_speedup_vs_sbatch_ge_5": sbatch / flotilla >= 5,
                  "target_within_1_3x_of_mpirun": flotilla / mpirun <= 1.3}))
PY
