#!/usr/bin/env bash
# slurm_limits.sh FLOTILLA CONFIG WORKDIR — a campaign on a partition whose limits its jobs break,
# or that is not up, on a private 4-node cluster (ports from SLURM_LOCAL_*_PORT) with three more
# partitions over node[1-2]: small (MaxNodes=1, MaxTime=2), closed (State=DOWN), drained
# (State=DRAIN). Each case checks flotilla's exact message (job names, ids and paths replaced):
#   nope      a partition that does not exist: refused at submission, the message lists the
#             partitions and names resources.partition; exit 1
#   maxnodes  nodes = 2 on small: Slurm (EnforcePartLimits=NO, its default) queues the job
#             PENDING for ever; flotilla cancels it and stops naming MaxNodes and resources.nodes
#   maxtime   time_limit = 10m on small: the same with MaxTime and resources.time_limit
#   toomany   evaluate.nodes = 3 on debug (2 nodes): names the evaluate stage's setting
#   down      partition closed is DOWN: the campaign waits (said once a job) and completes once
#             the test sets it UP
#   drain     partition drained refuses submissions: deferred with back-off, said with the
#             partition's state, and the campaign completes once it is UP
# Then the cluster again with EnforcePartLimits=ALL, where slurmctld refuses such jobs at once:
#   enforced  nodes = 2 and time_limit = 10m on small: refused at submission, the same advice
# Every failing case leaves no job of the campaign in Slurm and records no trial.
set -euo pipefail
flotilla=$1 config=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../../scripts/slurm/slurm-local.sh"
rm -rf "$work" && mkdir -p "$work"
# A short path in /tmp: slurmstepd's PMIx socket under the cluster's directory must fit 107 bytes.
cluster=$(mktemp -d /tmp/flotilla-cluster.XXXXXX)
chmod 755 "$cluster"  # munged wants its socket directory reachable by all
trap '"$script" stop "$cluster" >/dev/null 2>&1 || true; cp -r "$cluster/log" "$work/cluster-log" 2>/dev/null || true; rm -rf "$cluster"' EXIT
partitions='PartitionName=small Nodes=node[1-2] MaxNodes=1 MaxTime=2 State=UP
PartitionName=closed Nodes=node[1-2] MaxTime=INFINITE State=DOWN
PartitionName=drained Nodes=node[1-2] State=DRAIN'
SLURM_LOCAL_CONF_EXTRA="$partitions" "$script" start "$cluster" >/dev/null
export SLURM_CONF="$cluster/etc/slurm.conf"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
n=0

# run CASE EXPECTED_EXIT ARGS...: one campaign; its stderr, with job names, ids and paths
# replaced by NAME, ID and DIR, and Slurm's pending reason for a broken limit by REASON (it says
# PartitionConfig first, PartitionNodeLimit or PartitionTimeLimit after its next pass), in $work/CASE.err.
run() {
  local case=$1 want=$2 rc=0; shift 2
  n=$((n + 1))
  timeout 150 "$flotilla" run "$config" --campaign.results="$work/$case.h5" --no-live "$@" \
    >"$work/$case.out" 2>"$work/$case.raw" || rc=$?
  sed -e "s|$work|DIR|g" -e 's/faults-[0-9]*-[0-9]*/NAME/g' -e 's/Slurm job [0-9]*/Slurm job ID/g' \
    -e 's/PENDING (Partition\(Config\|NodeLimit\|TimeLimit\))/PENDING (REASON)/' \
    "$work/$case.raw" >"$work/$case.err"
  [ "$rc" = "$want" ] || { echo "$case: exit $rc, want $want"; cat "$work/$case.raw"; exit 1; }
}
# expect CASE LINE: the exact line is in the case's stderr.
expect() {
  grep -qxF -- "$2" "$work/$1.err" || { echo "$1: no line"; echo "  $2"; echo "in:"; cat "$work/$1.err"; exit 1; }
}
# A case that stopped must leave nothing of its own pending or running, and no trial recorded.
# (Slurm cancels an evaluate array whose afterok job was cancelled at its next scheduling pass.)
left_nothing() {
  local queued
  for _ in $(seq 50); do
    queued=$(squeue -h -t PD,R -o %j | grep -c '^faults-' || true)
    [ "$queued" != 0 ] || break
    sleep 0.2
  done
  [ "$queued" = 0 ] || { echo "$1: $queued job(s) of the campaign still queued"; squeue; exit 1; }
  /usr/bin/python3 -c "import h5py,sys; f=h5py.File(sys.argv[1],'r'); sys.exit(len(f['trials']) != 0)" "$work/$1.h5" ||
    { echo "$1: trials recorded"; exit 1; }
}
# Whatever a stopped case left running (its explore job, when only the evaluate array broke a
# limit) is cancelled before the next case.
clear_queue() { scancel -n "$(squeue -h -o %j | grep '^faults-' | sort -u | paste -sd, -)" 2>/dev/null || true; sleep 0.5; }

run nope 1 --resources.partition=nope
expect nope "flotilla run: Slurm refused job NAME (DIR/nope.h5.jobs/NAME/manifest.json): slurm_submit_batch_job: Invalid partition name specified (errno 2000). partition nope does not exist on this cluster (it has debug, gb200, small, closed, drained): set resources.partition (resources.explore.partition for explore jobs)"
left_nothing nope

run maxnodes 1 --resources.partition=small --resources.nodes=2 --resources.time_limit=2m
expect maxnodes "flotilla run: Slurm job ID (NAME) can never start: Slurm holds it PENDING (REASON): partition small allows at most 1 node a job (MaxNodes); the job asks for 2: lower resources.nodes (resources.explore.nodes for explore jobs), or choose another partition with resources.partition (resources.explore.partition for explore jobs). flotilla cancelled it; run again once the setting is fixed"
left_nothing maxnodes

run maxtime 1 --resources.partition=small --resources.time_limit=10m
expect maxtime "flotilla run: Slurm job ID (NAME) can never start: Slurm holds it PENDING (REASON): partition small allows at most 00:02:00 a job (MaxTime); the job asks for 00:10:00: lower resources.time_limit (resources.explore.time_limit for explore jobs), or choose another partition with resources.partition (resources.explore.partition for explore jobs). flotilla cancelled it; run again once the setting is fixed"
left_nothing maxtime

run toomany 1 --resources.partition=debug --resources.evaluate.nodes=3
expect toomany "flotilla run: Slurm job ID (NAME) can never start: Slurm holds it PENDING (REASON): partition debug has 2 nodes; the job asks for 3: lower resources.nodes (resources.evaluate.nodes for evaluate jobs), or choose another partition with resources.partition (resources.evaluate.partition for evaluate jobs). flotilla cancelled it; run again once the setting is fixed"
clear_queue

# The partition comes up 6 s after the campaign starts: a poll (2 s) has seen its job wait by then.
(sleep 6; scontrol update partitionname=closed state=up) &
run down 0 --resources.partition=closed
wait
expect down "flotilla: Slurm job ID (NAME) waits: its partition closed is down (PartitionDown); the campaign goes on once it is up"

(sleep 6; scontrol update partitionname=drained state=up) &
run drain 0 --resources.partition=drained
wait
expect drain "flotilla: Slurm refused job NAME for now (slurm_submit_batch_job: Required partition not available (inactive or drain) (errno 2070)); partition drained is DRAIN: wait for it to be UP (flotilla tries again), or choose another with resources.partition (resources.explore.partition for explore jobs); trying again in 1 s"
for case in down drain; do
  /usr/bin/python3 - "$work/$case.h5" <<'PY' || { echo "$case: the campaign did not complete"; exit 1; }
import h5py, sys
# slurm_faults.ini: 8 candidates of 2 explore repeats each, all ok (their evaluation fails for x > 6).
with h5py.File(sys.argv[1], "r") as f:
    trials = f["trials"][...]
kinds = {v: k for k, v in h5py.check_enum_dtype(trials.dtype["kind"]).items()}
explore = [t for t in trials if kinds[int(t["kind"])] == "explore" and int(t["status"]) == 0]
sys.exit(0 if len(explore) == 16 else 1)
PY
done

# With EnforcePartLimits=ALL slurmctld refuses the same jobs at submission.
"$script" stop "$cluster" >/dev/null
SLURM_LOCAL_CONF_EXTRA="EnforcePartLimits=ALL
$partitions" "$script" start "$cluster" >/dev/null
run enforced_nodes 1 --resources.partition=small --resources.nodes=2 --resources.time_limit=2m
expect enforced_nodes "flotilla run: Slurm refused job NAME (DIR/enforced_nodes.h5.jobs/NAME/manifest.json): slurm_submit_batch_job: Node count specification invalid (errno 2006). partition small allows at most 1 node a job (MaxNodes); the job asks for 2: lower resources.nodes (resources.explore.nodes for explore jobs), or choose another partition with resources.partition (resources.explore.partition for explore jobs)"
left_nothing enforced_nodes
run enforced_time 1 --resources.partition=small --resources.time_limit=10m --resources.slurm_client=sbatch
expect enforced_time "flotilla run: Slurm refused job NAME (DIR/enforced_time.h5.jobs/NAME/manifest.json): sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit). partition small allows at most 00:02:00 a job (MaxTime); the job asks for 00:10:00: lower resources.time_limit (resources.explore.time_limit for explore jobs), or choose another partition with resources.partition (resources.explore.partition for explore jobs)"
left_nothing enforced_time
echo "slurm_limits: $n cases, each message as expected"
