#!/usr/bin/env bash
# slurm_faults.sh MODE FLOTILLA CONFIG WORKDIR WINNER — the Slurm backend against the real local cluster
# (SLURM_CONF set by ctest), one fault or feature per MODE:
#   hand     `flotilla sbatch` writes the next job's folder; we submit job.sh with sbatch by hand;
#            `flotilla run` follows that job and records its results (no task submitted twice)
#   scancel  a running job of the campaign is cancelled with scancel once it recorded a result:
#            its other tasks come back lost and re-run in a new job, as attempt 1
#   down     the node of a running job is set DOWN (and kept out by a drain, then resumed): the
#            job ends NODE_FAIL and its unreported tasks re-run on the other node of the partition
#   stages   explore jobs on partition debug, evaluate jobs on gb200 with GPUs ([resources.evaluate])
#   arrays   on a private cluster with MaxArraySize=2 (ports from SLURM_LOCAL_*_PORT): each round's
#            evaluate shards go as job arrays cut at MaxArraySize, each afterok on the explore job
#   limit    with resources.max_submit_jobs=1 and one job of ours already queued, the campaign
#            submits its first job only once that job has ended
#   rejected on a private cluster with MaxJobCount=3 (and MinJobAge=2 s): slurmctld refuses
#            submissions (EAGAIN) until finished jobs are purged; flotilla backs off and retries,
#            says so (event slurm_submit_deferred), and the campaign completes
#   nodes2   every job spans both nodes of partition debug (1 rank per node)
#   allocate with resources.slurm_start=allocate every explore job is allocated at once and run by
#            a launcher (DIR/launcher), which releases it: each ends COMPLETED, none lingers
#   fallback the same while another job holds every node of the partition: the first explore job
#            cannot be allocated at once and goes as a batch job (no launcher), and still runs
#   launcher the launcher of a running allocated job is SIGKILLed: flotilla sees it gone, cancels
#            the allocation instead of leaving it to its time limit, and re-runs the unreported tasks
#   interrupt SIGINT of `flotilla run` while a job runs: the run ends (exit 130) saying the job keeps
#            running; the job is not cancelled; the next run re-attaches to it and finishes
#   cancel   `flotilla cancel` while a job runs: the live run obeys its stop request (exit 4),
#            resubmits nothing (no job folder is made after it), and the next run finishes
# Every mode ends with the same checks: the campaign finished, WINNER won verified, no trial key was
# recorded twice (h5py), and no (task, attempt) appears in two job manifests.
set -euo pipefail
mode=$1 flotilla=$2 config=$3 work=$4 winner=$5
here=$(dirname "$0")
py=/usr/bin/python3
rm -rf "$work" && mkdir -p "$work"
h5="$work/campaign.h5"
jobs="$h5.jobs"
name=$(sed -n 's/^name *= *//p' "$config")
down_node="" own_cluster="" pid=""
# The Slurm job of a job folder: its journal names it (the last submitted or allocated line), or
# the slurm_job_id its script wrote when it started (a job submitted by hand).
job_id() {
  local id=""
  [ -f "$1/events" ] && id=$(sed -n 's/^[0-9.]* \(submitted\|allocated\) [a-z]* Slurm \(job\|allocation\) \([0-9]*\).*/\3/p' "$1/events" | tail -1)
  [ -n "$id" ] || id=$(cat "$1/slurm_job_id" 2>/dev/null || true)
  echo "$id"
}
cleanup() {
  # A check that failed while the campaign ran in the background must not leave it running, nor
  # its jobs holding nodes: the next test on the shared cluster would find them busy.
  # Its own names are local: mode down calls it mid-test and goes on reading $id.
  local dir id
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  for dir in "$jobs"/*/; do id=$(job_id "$dir"); [ -n "$id" ] && scancel "$id" >/dev/null 2>&1 || true; done
  [ -z "$down_node" ] || scontrol update nodename="$down_node" state=resume >/dev/null 2>&1 || true
  [ -z "$own_cluster" ] || { "$here/../../scripts/slurm/slurm-local.sh" stop "$own_cluster" >/dev/null 2>&1 || true
                              cp -r "$own_cluster/log" "$work/cluster-log" 2>/dev/null || true  # kept for a failure's reader
                              rm -rf "$own_cluster"; }
}
trap cleanup EXIT
# A private cluster lives under a short path in /tmp: slurmstepd's PMIx socket path, under the
# cluster's directory, must stay within the 107 bytes of a UNIX socket path.
private_cluster() {
  own_cluster=$(mktemp -d /tmp/flotilla-cluster.XXXXXX)
  chmod 755 "$own_cluster"  # munged wants its socket directory reachable by all
}

# The first running job of this campaign with at least one recorded result and at least 3 tasks
# (1.2 s of work) left, so the fault lands mid-job: prints "ID NODE DIR".
running_job_with_result() {
  for _ in $(seq 1 600); do
    for dir in "$jobs"/*/; do
      [ -f "$dir/slurm_job_id" ] && [ -f "$dir/results.h5" ] || continue
      id=$(cat "$dir/slurm_job_id")
      read -r state node < <(squeue -h -j "$id" -o "%T %N" 2>/dev/null || true) || true
      [ "${state:-}" = RUNNING ] || continue
      n=$($py -c 'import h5py,sys; print(len(h5py.File(sys.argv[1],"r",swmr=True)["results"]))' "$dir/results.h5" 2>/dev/null || echo 0)
      total=$($py -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tasks"]))' "$dir/manifest.json")
      [ "$n" -ge 1 ] && [ "$n" -le $((total - 3)) ] && { echo "$id $node $dir"; return 0; }
    done
    sleep 0.1
  done
  echo "no running job with a recorded result" >&2
  return 1
}

extra=()
# Until no job is left on the shared cluster (at most 60 s): the previous test's jobs may still be
# completing, and a mode that needs nodes allocated at once would find them busy.
wait_cluster_free() {
  for _ in $(seq 1 300); do
    [ -z "$(squeue -h -o %i 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  echo "jobs still on the cluster after 60 s:"; squeue
}

run_in_background() {
  "$flotilla" run "$config" --campaign.results="$h5" "${extra[@]}" --no-live >"$work/run.log" 2>&1 &
  pid=$!
}
wait_campaign() {
  wait "$pid" || { echo "flotilla run failed:"; cat "$work/run.log"; exit 1; }
}

case "$mode" in arrays|rejected) ;; *) wait_cluster_free ;; esac  # those two start their own cluster

case "$mode" in
  hand)
    "$flotilla" sbatch "$config" --campaign.results="$h5" | tee "$work/sbatch.log"
    script=$(sed -n 's/^wrote \([^ ]*job\.sh\) .*/\1/p' "$work/sbatch.log")
    [ -f "$script" ] || { echo "flotilla sbatch wrote no job script"; exit 1; }
    grep -q '^#SBATCH --job-name=' "$script"
    # Asked again before the folder is submitted, it points at the same folder.
    "$flotilla" sbatch "$config" --campaign.results="$h5" | tee "$work/sbatch2.log"
    grep -q "already written, not submitted yet: $script" "$work/sbatch2.log"
    id=$(sbatch --parsable "$script")
    echo "submitted $script by hand as Slurm job $id"
    "$flotilla" run "$config" --campaign.results="$h5" --no-live >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
    [ "$(cat "$(dirname "$script")/slurm_job_id")" = "$id" ] || { echo "hand-submitted job not recorded"; exit 1; }
    [ -f "$(dirname "$script")/results.h5" ] || { echo "hand-submitted job wrote no results"; exit 1; }
    n=$($py -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tasks"]))' "$(dirname "$script")/manifest.json")
    echo "hand-submitted job $id ran $n tasks; flotilla run followed it and recorded them"
    ;;
  scancel)
    run_in_background
    read -r id node dir < <(running_job_with_result)
    scancel "$id"
    echo "cancelled Slurm job $id ($dir) on $node"
    wait_campaign
    "$flotilla" results export "$h5" --table events --format csv | grep "task_requeued" | grep -q "Slurm job $id .*CANCELLED" ||
      { echo "no task re-queued after the cancelled job"; "$flotilla" results export "$h5" --table events --format csv; exit 1; }
    # The round's evaluate array waited (afterok) on the cancelled job: Slurm cancelled it too
    # (dependency never satisfied) instead of leaving it pending, and its shards ran again.
    "$flotilla" results export "$h5" --table events --format csv | grep "task_requeued" | grep -v "Slurm job $id " |
      grep -q "ended CANCELLED" || { echo "the dependent evaluate array was not cancelled and re-run"; exit 1; }
    ;;
  down)
    run_in_background
    read -r id node dir < <(running_job_with_result)
    down_node=$node
    scontrol update nodename="$node" state=down reason=flotilla-test
    # The test cluster has ReturnToService=2, so the live slurmd brings a DOWN node back within
    # ~0.1 s; draining it keeps it out as a broken node would stay out (flotilla's re-run job is
    # submitted at its next poll, 250 ms later at most, well after this).
    scontrol update nodename="$node" state=drain reason=flotilla-test
    echo "set $node DOWN under Slurm job $id ($dir)"
    wait_campaign
    cleanup
    down_node=""
    # flotilla's jobs are --no-requeue: the job ends NODE_FAIL and flotilla re-runs its unreported
    # tasks at once in a new job, on the partition's other node (task_requeued events naming the job).
    # (Were Slurm to requeue it anyway, it would have to complete on another node.)
    read -r state nodes < <(squeue -h -t all -j "$id" -o "%T %N" 2>/dev/null || true) || true
    echo "job $id after the node went down: ${state:-gone} ${nodes:-}"
    if [ "${state:-}" = COMPLETED ]; then
      [ "$nodes" != "$node" ] || { echo "job $id completed on the node that was down"; exit 1; }
    else
      "$flotilla" results export "$h5" --table events --format csv | grep "task_requeued" | grep -q "Slurm job $id " ||
        { echo "no task re-queued after job $id lost its node"; exit 1; }
    fi
    # Every job that ran a re-run task (attempt >= 1) ran on another node.
    for manifest in "$jobs"/*/manifest.json; do
      grep -q '"attempt":[1-9]' "$manifest" || continue
      rerun=$(job_id "$(dirname "$manifest")")
      where=$(squeue -h -t all -j "$rerun" -o "%N" | sort -u | tr '\n' ' ')
      echo "job $rerun re-ran tasks on: $where"
      case " $where " in *" $node "*) echo "re-run job $rerun ran on $node, which was down"; exit 1 ;; esac
    done
    ;;
  stages)
    "$flotilla" run "$config" --campaign.results="$h5" --no-live >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
    $py - "$jobs" "$h5" <<'PY'
import glob, h5py, sys
jobs_dir, h5 = sys.argv[1], sys.argv[2]
kinds = {"explore": 0, "evaluate": 0}
for script in glob.glob(jobs_dir + "/*/job.sh"):
    text = open(script).read()
    kind = "evaluate" if "(evaluate)" in text else "explore"
    kinds[kind] += 1
    want = ["--partition=gb200", "--gpus-per-node=2"] if kind == "evaluate" else ["--partition=debug"]
    for line in want:
        assert "#SBATCH " + line in text, f"{script}: {kind} job lacks {line}"
    if kind == "evaluate":
        assert "srun --mpi=pmix --nodes=1 --ntasks=3 --overcommit --gpus-per-node=2 " in text, f"{script}: dispatcher rank"
    if kind == "explore":
        assert "--gpus-per-node" not in text, f"{script}: explore job asks for GPUs"
assert kinds["explore"] and kinds["evaluate"], kinds
with h5py.File(h5, "r", swmr=True) as f:
    trials = f["trials"][:]
devices = {0: set(), 1: set(), 2: set(), 3: set()}
for t in trials:
    devices[int(t["kind"])].add(t["device"].decode() if isinstance(t["device"], bytes) else str(t["device"]))
print("jobs per stage:", kinds, "devices per kind (0 explore, 1 evaluate, 2 confirm):", devices)
assert devices[0] == {"cpu"}, "explore trials must run without a GPU (partition debug)"
assert "cpu" not in devices[1], "evaluate trials must each see a GPU of partition gb200"
# gpus_per_node = 2, ranks_per_node = 2: the dispatcher (rank 0) holds no GPU and runs no task;
# ranks 1 and 2 run tasks, one per GPU (before, one GPU sat idle behind the dispatcher).
ranks = {int(t["rank"]) for t in trials if int(t["kind"]) == 1}
assert ranks == {1, 2}, f"evaluate trials must run on task ranks 1 and 2, never the dispatcher: {ranks}"
# The winner's confirmation ran as one task of an explore-shaped job: its pairs ran on partition debug.
assert devices[2] == {"cpu"}, f"confirmation pairs must run where explore does: {devices[2]}"
PY
    ;;
  arrays)
    private_cluster
    SLURM_LOCAL_MAX_ARRAY_SIZE=2 "$here/../../scripts/slurm/slurm-local.sh" start "$own_cluster" >/dev/null
    export SLURM_CONF="$own_cluster/etc/slurm.conf"
    "$flotilla" run "$config" --campaign.results="$h5" --no-live >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
    $py - "$jobs" <<'PY'
import collections, glob, json, os, re, sys
jobs_dir = sys.argv[1]
arrays = collections.Counter()
for script in sorted(glob.glob(jobs_dir + "/*/job.sh")):
    text = open(script).read()
    if "(evaluate)" not in text:
        assert "--array" not in text, f"{script}: an explore job is not an array"
        continue
    spec = re.search(r"^#SBATCH --array=(\S+)$", text, re.M).group(1)
    arrays[spec] += 1
    folder = os.path.dirname(script)
    elements = sorted(int(m.group(1)) for f in os.listdir(folder) if (m := re.match(r"manifest-(\d+)\.json$", f)))
    assert max(elements) < 2, f"{script}: array index {max(elements)} >= MaxArraySize 2"
    results = [f for f in os.listdir(folder) if re.match(r"results-\d+\.h5$", f)]
    assert len(results) == len(elements), f"{folder}: {len(results)} result files for {len(elements)} elements"
    # each element's worker ran the tasks of one shard
    for e in elements:
        tasks = json.load(open(f"{folder}/manifest-{e}.json"))["tasks"]
        assert len({t["id"] & ((1 << 23) - 1) for t in tasks}) == 1, f"{folder}/manifest-{e}.json mixes shards"
dependent = sum("--dependency=afterok:" in open(s).read() for s in glob.glob(jobs_dir + "/*/job.sh"))
print("evaluate arrays by spec:", dict(arrays), "; jobs with afterok:", dependent)
assert arrays["0-1"] and arrays["0"], "3 shards with MaxArraySize 2 must give arrays 0-1 and 0"
assert dependent, "no evaluate array waited for its explore job"
PY
    ;;
  limit)
    other=$(sbatch --parsable --partition=debug --job-name=occupies-the-limit --output=/dev/null --wrap "sleep 4")
    "$flotilla" run "$config" --campaign.results="$h5" --resources.max_submit_jobs=1 --no-live >"$work/run.log" 2>&1 ||
      { cat "$work/run.log"; exit 1; }
    $py - "$jobs" "$other" <<'PY'
import glob, json, subprocess, sys
jobs_dir, other = sys.argv[1], int(sys.argv[2])
listing = {j["job_id"]: j for j in json.loads(subprocess.run(["squeue", "--json"], check=True, capture_output=True,
                                                             text=True).stdout)["jobs"]}
ours = sorted(int(open(p).read()) for p in glob.glob(jobs_dir + "/*/slurm_job_id"))
ended = listing[other]["end_time"]
first = listing[ours[0]]["submit_time"]
print(f"job {other} (not the campaign's) ended at {ended}; the campaign's first job {ours[0]} was submitted at {first}")
assert first >= ended, "the campaign submitted a job while the user's MaxSubmitJobs=1 was taken"
# One job at a time: each of the campaign's jobs was submitted after the previous one ended.
for a, b in zip(ours, ours[1:]):
    assert listing[b]["submit_time"] >= listing[a]["end_time"], f"jobs {a} and {b} were queued together"
PY
    ;;
  rejected)
    private_cluster
    SLURM_LOCAL_MAX_JOB_COUNT=3 SLURM_LOCAL_MIN_JOB_AGE=2 "$here/../../scripts/slurm/slurm-local.sh" start "$own_cluster" >/dev/null
    export SLURM_CONF="$own_cluster/etc/slurm.conf"
    run_in_background
    wait_campaign
    refused=$(grep -c "MaxJobCount limit from slurm.conf reached" "$own_cluster/log/slurmctld.log" || true)
    [ "$refused" -ge 1 ] || { echo "slurmctld refused no submission: the test did not test a rejection"; exit 1; }
    deferred=$("$flotilla" results export "$h5" --table events --format csv | grep -c "slurm_submit_deferred" || true)
    echo "slurmctld refused $refused submissions (MaxJobCount); flotilla deferred $deferred and retried"
    [ "$deferred" -ge 1 ] || { echo "no slurm_submit_deferred event"; exit 1; }
    grep -q "Slurm refused job .* for now" "$work/run.log" || { echo "the back-off was not reported"; exit 1; }
    ;;
  nodes2)
    # The test cluster's nodes are four slurmd on this one host. Open MPI's shared-memory
    # transport then hangs or crashes between ranks that PMIx places on different nodes of the
    # same host, so this test's ranks talk over TCP (docs/slurm.md, pitfalls).
    export OMPI_MCA_btl=self,tcp
    extra=(--resources.nodes=2 --resources.ranks_per_node=1)
    run_in_background
    wait_campaign
    $py - "$jobs" <<'PY'
import glob, os, subprocess, sys
jobs_dir = sys.argv[1]
ids = []
for script in sorted(glob.glob(jobs_dir + "/*/job.sh")):
    text = open(script).read()
    assert "#SBATCH --nodes=2" in text and "srun --mpi=pmix --nodes=2 --ntasks-per-node=1 " in text, script
    ids.append(open(os.path.dirname(script) + "/slurm_job_id").read().strip())
out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %N", "-j", ",".join(ids)], check=True,
                     capture_output=True, text=True).stdout
nodes = {line.split()[1] for line in out.splitlines()}
print("jobs:", len(ids), "node lists:", nodes)
assert nodes == {"node[1-2]"}, "every job must span both nodes of partition debug"
PY
    ;;
  allocate|fallback)
    extra=(--resources.slurm_start=allocate)
    # Jobs of earlier tests may still be ending on the partition's nodes: start on idle nodes.
    for _ in $(seq 1 600); do [ -z "$(squeue -h -u "$(id -un)" -t PD,R,CG -o %i | head -1)" ] && break; sleep 0.1; done
    if [ "$mode" = fallback ]; then
      # Holds every node of the partition until the campaign's first job has been submitted.
      blocker=$(sbatch --parsable --partition=debug --nodes=2 --exclusive --job-name=holds-the-partition --output=/dev/null --wrap "sleep 120")
      for _ in $(seq 1 300); do [ "$(squeue -h -j "$blocker" -o %T)" = RUNNING ] && break; sleep 0.1; done
      [ "$(squeue -h -j "$blocker" -o %T)" = RUNNING ] || { echo "the blocking job did not start"; scancel "$blocker"; exit 1; }
    fi
    run_in_background
    if [ "$mode" = fallback ]; then
      for _ in $(seq 1 300); do grep -qs " submitted " "$jobs"/*/events && break; sleep 0.1; done
      scancel "$blocker"
    fi
    wait_campaign
    $py - "$jobs" "$mode" <<'PY'
import glob, os, subprocess, sys, time
jobs_dir, mode = sys.argv[1], sys.argv[2]
allocated, batch = [], []
for script in sorted(glob.glob(jobs_dir + "/*/job.sh")):
    folder, text = os.path.dirname(script), open(script).read()
    job = int(open(folder + "/slurm_job_id").read())
    if "(explore)" not in text:
        assert not os.path.exists(folder + "/launcher"), f"{folder}: an evaluate array was allocated"
        continue
    (allocated if os.path.exists(folder + "/launcher") else batch).append(job)
    if os.path.exists(folder + "/launcher"):
        assert "allocated at once as Slurm job" in text, f"{script} does not say it was allocated"
print("explore jobs allocated at once:", allocated, "submitted as batch jobs:", batch)
if mode == "allocate":
    assert allocated and not batch, "with free nodes every explore job must be allocated at once"
else:
    assert batch, "the first explore job was allocated although the partition was full"
# Every allocated job is released by its launcher with its script's status: COMPLETED, soon.
for _ in range(100):
    states = dict(l.split() for l in subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %T", "-j",
                  ",".join(map(str, allocated + batch))], check=True, capture_output=True, text=True).stdout.splitlines())
    if all(states.get(str(j)) == "COMPLETED" for j in allocated + batch):
        break
    time.sleep(0.1)
print("states:", states)
assert all(states.get(str(j)) == "COMPLETED" for j in allocated + batch), "a job was not released as COMPLETED"
PY
    ;;
  launcher)
    extra=(--resources.slurm_start=allocate)
    run_in_background
    read -r id node dir < <(running_job_with_result)
    [ -f "$dir/launcher" ] || { echo "job $id was not allocated at once"; exit 1; }
    read -r _ launcher < "$dir/launcher"
    kill -9 "$launcher"
    echo "killed launcher $launcher of Slurm job $id ($dir)"
    wait_campaign
    "$flotilla" results export "$h5" --table events --format csv | grep "task_requeued" |
      grep -q "Slurm job $id .*CANCELLED (its launcher died" ||
      { echo "no task re-queued after the launcher died"; "$flotilla" results export "$h5" --table events --format csv; exit 1; }
    [ "$(squeue -h -t all -j "$id" -o %T)" = CANCELLED ] || { echo "job $id was left $(squeue -h -t all -j "$id" -o %T)"; exit 1; }
    ;;
  interrupt)
    run_in_background
    read -r id node dir < <(running_job_with_result)
    kill -INT "$pid"
    set +e; wait "$pid"; rc=$?; set -e
    [ "$rc" -eq 130 ] || { echo "expected exit 130 after SIGINT, got $rc"; cat "$work/run.log"; exit 1; }
    grep -q "Slurm job(s) keep running, and the next run takes them up again" "$work/run.log" ||
      { echo "the interrupted run did not say its jobs keep running"; cat "$work/run.log"; exit 1; }
    state=$(squeue -h -t all -j "$id" -o %T)
    case "$state" in RUNNING|COMPLETING|COMPLETED) ;; *) echo "job $id was $state after SIGINT"; exit 1 ;; esac
    echo "after SIGINT Slurm job $id is $state"
    grep -q " detached \(queued\|running\) " "$dir/events" || { echo "the job's journal does not say it was detached"; cat "$dir/events"; exit 1; }
    "$flotilla" run "$config" --campaign.results="$h5" --no-live >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
    [ "$(squeue -h -t all -j "$id" -o %T)" = COMPLETED ] || { echo "job $id did not complete"; exit 1; }
    # The next run followed it again, or found it ended: its journal says which.
    grep -q " reattached \| seen_ended .*seen on restart" "$dir/events" || { echo "no re-attach in the journal"; cat "$dir/events"; exit 1; }
    # retired (its results taken) or ended in its journal; "done" when the journal is behind and
    # Slurm says every element completed (jobs::job_view).
    "$flotilla" status "$config" --campaign.results="$h5" | grep -E "^ +$id .* (retired|ended|done) " ||
      { echo "flotilla status does not show job $id retired, ended or done"; "$flotilla" status "$config" --campaign.results="$h5"; exit 1; }
    ;;
  cancel)
    run_in_background
    read -r id node dir < <(running_job_with_result)
    asked=$(date +%s.%N)
    "$flotilla" cancel "$config" --campaign.results="$h5" | tee "$work/cancel.log"
    grep -q "asked the running campaign to stop" "$work/cancel.log"
    set +e; wait "$pid"; rc=$?; set -e
    [ "$rc" -eq 4 ] || { echo "expected exit 4 after flotilla cancel, got $rc"; cat "$work/run.log"; exit 1; }
    grep -q "cancelled by \`flotilla cancel\`: .* nothing was resubmitted" "$work/run.log" || { cat "$work/run.log"; exit 1; }
    # Nothing the cancel ended was run again by the live run: no task re-queued after it asked.
    "$flotilla" results export "$h5" --table events --format json | $py -c '
import json, sys
asked = float(sys.argv[1])
late = [e for e in json.load(sys.stdin)["rows"] if e["kind"] == "task_requeued" and e["time"] >= asked]
assert not late, f"re-queued after flotilla cancel: {late}"' "$asked"
    [ ! -e "$h5.stop" ] || { echo "the obeyed stop request was left behind"; exit 1; }
    "$flotilla" run "$config" --campaign.results="$h5" --no-live >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac

grep -q "budget of .* spent\|exhausted" "$work/run.log" || { echo "campaign did not finish"; cat "$work/run.log"; exit 1; }
$py "$here/check_campaign.py" "$h5"
$py "$here/expect_summary.py" "$flotilla" "$h5" best_config="$winner" best_verified
$py "$here/check_job_manifests.py" "$jobs"
echo "slurm $mode ok"
