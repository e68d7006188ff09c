#!/usr/bin/env bash
# bench/slurm/run.sh [--cluster SLURM_CONF] [BUILD_DIR] [TASKS] — the same TASKS (1,000) short
# evaluations run five ways, in one run, on a private local Slurm cluster this script starts and
# always stops (by PID), or with --cluster on a running one of scripts/slurm/slurm-local.sh (the
# ctest bench_slurm_runs: the slurm_cluster fixture's, at 20 evaluations):
#   flotilla     `flotilla run` of a campaign whose one batch holds the TASKS evaluations, backend
#                slurm: one job, flotilla-worker under srun on 1 node x 4 ranks, every result
#                recorded in the campaign's HDF5 file (the whole `flotilla run`, start to report);
#                once with batch jobs (resources.slurm_start = batch, the default) and once with
#                the job allocated at once (slurm_start = allocate). Adaptive repeats are off
#                (explore.max_repeats = repeats): every other way runs each evaluation once, and
#                a repeat would be a second job (bench/slurm/RESULTS.md says why)
#   mpirun       the same job's manifest run by flotilla-worker under `mpirun -n 4`, no Slurm
#                (these three take seconds: three rounds, interleaved, medians and every ratio)
#   sbatch       one `sbatch` per evaluation (partition debug, 1 task each), until all have ended
#   array        one `sbatch --array=0-(TASKS-1)`, until all elements have ended
# An evaluation is `sh -c "echo flotilla-metric: score=X"` in each. Makespans are wall clock from
# the first submission (or start) to the last completion, seen by polling squeue every 0.1 s.
# Ends with one JSON line: makespans, flotilla's speedup over sbatch-per-evaluation, its ratios
# to direct mpirun per round, and its job's wait from submission to start (from the slurmctld log).
# The correctness half, or it exits 1 saying what is wrong: every flotilla run recorded each
# evaluation x = 1..TASKS exactly once, ok, with score x, and nothing else; direct mpirun's job
# file holds every task once, ok. The timings are never judged. Full size: no TASKS (1,000,
# about 4 minutes); runs in bench/slurm/RESULTS.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
conf=""
if [ "${1:-}" = --cluster ]; then conf="$(realpath "$2")"; shift 2; fi
build="$(cd "${1:-$root/build}" && pwd)"
tasks="${2:-1000}"
flotilla="$build/bin/flotilla"
worker="$build/bin/flotilla-worker"
[ -x "$flotilla" ] && [ -x "$worker" ] || { echo "build flotilla and flotilla-worker in $build first" >&2; exit 1; }
work="$(mktemp -d /tmp/flotilla-bench-slurm.XXXXXX)"
chmod 755 "$work"  # munged wants its socket directory reachable by all
if [ -n "$conf" ]; then
  cluster="$(dirname "$(dirname "$conf")")"  # slurm-local.sh's DIR: etc/slurm.conf, log/slurmctld.log
  trap 'rm -rf "$work"' EXIT
else
  cluster="$work/cluster"
  export SLURM_LOCAL_CTLD_PORT="${SLURM_LOCAL_CTLD_PORT:-28800}" SLURM_LOCAL_NODE_PORT="${SLURM_LOCAL_NODE_PORT:-28801}"
  trap '"$root/scripts/slurm/slurm-local.sh" stop "$cluster" >/dev/null 2>&1 || true' EXIT
  "$root/scripts/slurm/slurm-local.sh" start "$cluster" >/dev/null
fi
export SLURM_CONF="$cluster/etc/slurm.conf"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
now() { date +%s.%N; }
# Every job of the bench is named slurmbench-...: flotilla's after its campaign, the others by
# --job-name; so on a shared cluster it waits for its own jobs only.
# (grep -c reads all of squeue's output: grep -q would end it early, and under pipefail its
# SIGPIPE would end the wait early too, with 1,000 jobs still queued.)
drain() { while [ "$(squeue -h -u "$(id -un)" -t PD,R,CG -o %j | grep -c '^slurmbench-')" != 0 ]; do sleep 0.1; done; }
fail() { echo "bench/slurm: $*" >&2; exit 1; }

cat > "$work/bench.ini" <<INI
[campaign]
name = slurmbench
[intent]
objective = score
[space]
param = x: int: 1..$tasks
[explore]
command = sh -c "echo flotilla-metric: score=\$0" {x}
repeats = 1
max_repeats = 1
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

# The job's wait from submission to start, from the slurmctld log (millisecond timestamps): the
# scheduling pass that starts a batch job runs at the next once-a-second tick (docs/slurm.md).
submit_to_start() {
  /usr/bin/python3 - "$cluster/log/slurmctld.log" "$1" <<'PY'
import datetime, re, sys
log, job = sys.argv[1], sys.argv[2]
sub = start = None
for line in open(log, errors="replace"):
    t = line[1:24]
    if re.search(rf"_slurm_rpc_allocate_resources JobId={job} NodeList=", line):
        sub = start = datetime.datetime.fromisoformat(t)  # allocated inside its own RPC
    if sub is None and re.search(rf"_slurm_rpc_submit_batch_job: JobId={job} ", line):
        sub = datetime.datetime.fromisoformat(t)
    elif start is None and re.search(rf"(Started|Allocate) JobId={job} ", line):
        start = datetime.datetime.fromisoformat(t)
print(f"{(start - sub).total_seconds():.3f}" if job and sub and start else "nan")
PY
}

# One `flotilla run` of the campaign with resources.slurm_start=$1 into results file $2; prints
# "SECONDS WAIT ALLOCATED" (ALLOCATED: 1 when its job was allocated at once and run by a launcher).
flotilla_run() {
  local start=$1 h5=$2 t0 t
  drain
  t0=$(now)
  "$flotilla" run "$work/bench.ini" --campaign.results="$h5" --resources.slurm_start="$start" --no-live \
    >"$h5.log" 2>&1 || { cat "$h5.log" >&2; exit 1; }
  t=$(echo "$(now) - $t0" | bc)
  /usr/bin/python3 - "$h5" "$tasks" <<'PY' || { cat "$h5.log" >&2; fail "$h5: not every evaluation recorded once"; }
import collections, h5py, sys
# Not a count of ok trials (1,001 of 1,000 would be an adaptive repeat, and a lost evaluation
# plus a doubled one would count right): each score x once, an ok explore trial, and nothing else.
with h5py.File(sys.argv[1], "r") as f:
    trials, tasks = f["trials"][:], int(sys.argv[2])
kinds = {v: k for k, v in h5py.check_enum_dtype(trials.dtype["kind"]).items()}
ok = [t for t in trials if t["status"] == 0 and kinds[int(t["kind"])] == "explore"]
got = collections.Counter(float(t["objective"]) for t in ok)
want = collections.Counter(float(x) for x in range(1, tasks + 1))
if got != want or len(ok) != len(trials):
    sys.exit(f"{len(trials)} trials recorded, {len(trials) - len(ok)} of them failed or not explore; scores missing "
             f"{sorted((want - got).elements())[:10]}, doubled or foreign {sorted((got - want).elements())[:10]}; "
             f"want score x once for each x in 1..{tasks}")
PY
  local job_id allocated=0
  job_id=$(cat "$h5".jobs/*/slurm_job_id 2>/dev/null | head -1 || true)
  ls "$h5".jobs/*/launcher >/dev/null 2>&1 && allocated=1
  echo "$t $(submit_to_start "$job_id" || echo nan) $allocated"
}

# Three rounds of the three ways that take seconds, interleaved (the machine is shared and noisy):
# flotilla with batch jobs (the default), flotilla with jobs allocated at once, direct mpirun.
echo "flotilla on Slurm ($tasks evaluations in one job, 1 node x 4 ranks) and directly under mpirun, 3 rounds" >&2
manifest=""
rows=()
for round in 1 2 3; do
  read -r batch_s batch_wait _ < <(flotilla_run batch "$work/batch-$round.h5")
  read -r alloc_s alloc_wait allocated < <(flotilla_run allocate "$work/allocate-$round.h5")
  if [ -z "$manifest" ]; then
    manifest=$(ls "$work"/batch-1.h5.jobs/*/manifest.json | head -1)
    /usr/bin/python3 - "$manifest" "$work/mpirun.json" "$work/mpirun-results.h5" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["output"] = sys.argv[3]
json.dump(m, open(sys.argv[2], "w"))
PY
  fi
  drain
  rm -f "$work/mpirun-results.h5"
  t0=$(now)
  mpirun -n 4 --oversubscribe "$worker" "$work/mpirun.json" >"$work/mpirun.log" 2>&1 || { cat "$work/mpirun.log" >&2; fail "direct mpirun failed"; }
  mpirun_s=$(echo "$(now) - $t0" | bc)
  /usr/bin/python3 - "$work/mpirun-results.h5" "$tasks" <<'PY' || fail "direct mpirun: not every task ran once"
import h5py, sys
with h5py.File(sys.argv[1], "r") as f:
    records = f["results"][:]
ids = [int(r["id"]) for r in records if r["status"] == 0]
if len(records) != int(sys.argv[2]) or len(set(ids)) != int(sys.argv[2]):
    sys.exit(f"{sys.argv[1]}: {len(records)} records, {len(set(ids))} distinct ok tasks; want {sys.argv[2]}")
PY
  echo "  round $round: batch ${batch_s}s (waited ${batch_wait}s), allocate ${alloc_s}s (allocated at once: $allocated), mpirun ${mpirun_s}s" >&2
  rows+=("$batch_s $batch_wait $alloc_s $alloc_wait $allocated $mpirun_s")
done

echo "job array: sbatch --array=0-$((tasks - 1))" >&2
drain
t0=$(now)
sbatch --quiet --job-name=slurmbench-array --partition=debug --ntasks=1 --array=0-$((tasks - 1)) --output=/dev/null \
  --wrap "sh -c 'echo flotilla-metric: score=\$0' \$SLURM_ARRAY_TASK_ID"
drain
t_array=$(echo "$(now) - $t0" | bc)

echo "one sbatch per evaluation: $tasks x sbatch" >&2
t0=$(now)
for i in $(seq 1 "$tasks"); do
  sbatch --quiet --job-name=slurmbench-sbatch --partition=debug --ntasks=1 --output=/dev/null --wrap "sh -c 'echo flotilla-metric: score=\$0' $i"
done
t_submit=$(echo "$(now) - $t0" | bc)
drain
t_sbatch=$(echo "$(now) - $t0" | bc)

/usr/bin/python3 - "$tasks" "$t_array" "$t_sbatch" "$t_submit" "${rows[@]}" <<'PY'
import json, statistics, sys
tasks = int(sys.argv[1])
array, sbatch, submit = map(float, sys.argv[2:5])
rounds = [[float(x) for x in row.split()] for row in sys.argv[5:]]
batch = [r[0] for r in rounds]
allocate = [r[2] for r in rounds]
mpirun = [r[5] for r in rounds]
ratio_batch = [r[0] / r[5] for r in rounds]
ratio_allocate = [r[2] / r[5] for r in rounds]
med = statistics.median
rows = [("flotilla run, Slurm batch job (default), median of 3", med(batch)),
        ("flotilla run, Slurm job allocated at once, median of 3", med(allocate)),
        ("flotilla-worker directly under mpirun -n 4, median of 3", med(mpirun)),
        (f"one job array of {tasks}", array),
        (f"one sbatch per evaluation ({submit:.1f} s to submit)", sbatch)]
for name, t in rows:
    print(f"{name:<58} {t:8.2f} s  {tasks / t:8.1f} evaluations/s")
print("per round, flotilla / mpirun: batch " + " ".join(f"{x:.2f}" for x in ratio_batch) +
      " (batch job waited " + " ".join(f"{r[1]:.2f}" for r in rounds) + " s to start); allocate " +
      " ".join(f"{x:.2f}" for x in ratio_allocate))
nan_to_none = lambda x: None if x != x else round(x, 3)
print(json.dumps({"bench": "slurm", "evaluations": tasks,
                  "flotilla_slurm_batch_s": [round(x, 3) for x in batch],
                  "flotilla_slurm_allocate_s": [round(x, 3) for x in allocate],
                  "direct_mpirun_s": [round(x, 3) for x in mpirun],
                  "batch_submit_to_start_s": [nan_to_none(r[1]) for r in rounds],
                  "allocate_submit_to_start_s": [nan_to_none(r[3]) for r in rounds],
                  "allocated_at_once": [bool(r[4]) for r in rounds],
                  "job_array_s": round(array, 3), "sbatch_per_evaluation_s": round(sbatch, 3),
                  "speedup_vs_sbatch_per_evaluation": round(sbatch / med(batch), 2),
                  "speedup_vs_job_array": round(array / med(batch), 2),
                  "ratio_batch_to_direct_mpirun": [round(x, 3) for x in ratio_batch],
                  "ratio_allocate_to_direct_mpirun": [round(x, 3) for x in ratio_allocate],
                  "target_speedup_vs_sbatch_ge_5": sbatch / max(batch) >= 5,
                  "target_within_1_3x_of_mpirun_batch": max(ratio_batch) <= 1.3,
                  "target_within_1_3x_of_mpirun_allocate": max(ratio_allocate) <= 1.3}))
PY
