"""bench/scale/slurm_part.py — the Slurm half of bench/scale/run.py (issue 35): flotilla's calls to
slurmctld and a campaign's makespan on a simulated cluster of many slurmd on this host.

Calls are counted by slurmctld itself: `sdiag` before and after a campaign, the difference of the
message types that flotilla's Slurm client sends (FLOTILLA_RPCS). Everything on the test cluster
runs as root, so `sdiag`'s per-user count of root also holds what the jobs do themselves (srun's
step RPCs, slurmd's completion messages); it is reported beside, never as flotilla's. Nothing
else may talk to the cluster meanwhile (a cluster of our own, or an idle one).

The correctness half (exit 1 naming what is wrong): every campaign records each of its tasks once,
ok (h5py), and sdiag's counts parse and moved.
"""
import json
import os
import pathlib
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# What flotilla's clients send (libslurm or the commands): submissions (batch, or allocation at
# once and its release), the one query of all jobs per poll (slurm_load_jobs, squeue --json),
# cancels, and MaxArraySize read once (slurm_load_ctl_conf, scontrol show config).
FLOTILLA_RPCS = ("REQUEST_SUBMIT_BATCH_JOB", "REQUEST_RESOURCE_ALLOCATION", "REQUEST_COMPLETE_JOB_ALLOCATION",
                 "REQUEST_JOB_INFO", "REQUEST_JOB_INFO_SINGLE", "REQUEST_JOB_USER_INFO", "REQUEST_KILL_JOB",
                 "REQUEST_CANCEL_JOB_STEP", "REQUEST_BUILD_INFO")

CALLS_CAMPAIGN = """[campaign]
name = slurmscale
seed = 1
[intent]
objective = score
[space]
param = x: int: 1..1
# The explore job holds the campaign's evaluate array (afterok) in Slurm for `hold` seconds: that
# long, all {jobs} jobs are in Slurm at once.
[explore]
command = sh -c "sleep {hold}; echo flotilla-metric: score=$0" {{x}}
repeats = 1
max_repeats = 1
timeout = 10m
[evaluate]
command = true
shards = {shards}
gate = all
[confirm]
enabled = false
[search]
strategy = grid
budget = 1
batch = 1
[resources]
backend = slurm
partition = {partition}
nodes = 1
ranks_per_node = 1
time_limit = 30m
# One element a node: at most as many jobs run at once as the partition has nodes (93 on 128
# nodes), the rest pend. The host has 2 cores; every running element is an srun and a worker.
sbatch = --exclusive
"""

MAKESPAN_CAMPAIGN = """[campaign]
name = slurmmakespan
seed = 1
[intent]
objective = score
[space]
param = x: int: 1..{tasks}
[explore]
command = sh -c "sleep {duration}; echo flotilla-metric: score=$0" {{x}}
repeats = 1
max_repeats = 1
[confirm]
enabled = false
[search]
strategy = grid
budget = {tasks}
batch = {tasks}
[resources]
backend = slurm
partition = {partition}
nodes = 1
ranks_per_node = {ranks}
time_limit = 30m
"""


def spread(values):
    values = sorted(values)
    return {"median": statistics.median(values), "min": values[0], "max": values[-1], "n": len(values)}


def fail(message):
    print(f"bench/scale: {message}", file=sys.stderr)
    sys.exit(1)


def sdiag(env):
    """sdiag's RPC counts: ({message type: count}, {user: count})."""
    proc = subprocess.run(["sdiag"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        fail(f"sdiag exited {proc.returncode}: {proc.stderr.strip()}")
    types, users, section = {}, {}, None
    for line in proc.stdout.splitlines():
        if "by message type" in line:
            section = types
        elif "by user" in line:
            section = users
        elif line.startswith("Pending RPC"):
            section = None
        elif section is not None and (m := re.match(r"\s+(\S+)\s+\(\s*\d+\)\s+count:(\d+)", line)):
            section[m.group(1)] = int(m.group(2))
    if not types or not users:
        fail(f"sdiag printed no RPC statistics by message type and by user:\n{proc.stdout[-2000:]}")
    return types, users


def delta(before, after):
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


class Cluster:
    """A private simulated cluster (slurm-local.sh with SLURM_LOCAL_NODES), or one given."""

    def __init__(self, args, work):
        self.script = args.source / "scripts" / "slurm" / "slurm-local.sh"
        self.own = args.slurm_conf is None
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        if self.own:
            self.dir = work / "cluster"
            # Ports away from the default cluster's (16817, 17001..), from ctest's per-build
            # ranges (20000..27999) and below Linux's ephemeral ports (32768..), where a slurmd
            # may find its port taken; the environment's SLURM_LOCAL_*_PORT win.
            self.env.setdefault("SLURM_LOCAL_CTLD_PORT", "30817")
            self.env.setdefault("SLURM_LOCAL_NODE_PORT", "31001")
            self.env["SLURM_LOCAL_NODES"] = str(args.slurm_nodes)
        else:
            self.dir = pathlib.Path(args.slurm_conf).resolve().parents[1]
        self.env["SLURM_CONF"] = str(self.dir / "etc" / "slurm.conf")

    def __enter__(self):
        if self.own:
            start = time.monotonic()
            proc = subprocess.run([self.script, "start", self.dir], env=self.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            if proc.returncode != 0:
                self.__exit__()
                fail(f"slurm-local.sh start {self.dir} exited {proc.returncode}: {proc.stdout.strip()[-2000:]}")
            self.start_s = time.monotonic() - start
        return self

    def __exit__(self, *exc):
        if self.own:
            subprocess.run([self.script, "stop", self.dir], env=self.env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)

    def nodes(self):
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], env=self.env, stdout=subprocess.PIPE, text=True).stdout
        return len(set(out.split()))

    def daemon_rss_kib(self):
        """RSS of each slurmd of the cluster (their pid files), and of its slurmctld."""
        def rss(pid_file):
            pid = pid_file.read_text().strip()
            out = subprocess.run(["ps", "-o", "rss=", "-p", pid], stdout=subprocess.PIPE, text=True).stdout.strip()
            return int(out) if out else None
        slurmd = [r for r in (rss(f) for f in sorted((self.dir / "run").glob("slurmd-*.pid"))) if r is not None]
        return slurmd, rss(self.dir / "run" / "slurmctld.pid")


def check_trials(results, tasks):
    import h5py  # Debian's python3-h5py
    with h5py.File(results, "r") as f:
        trials = f["trials"][...]
    keys = {(int(t["candidate"]), int(t["kind"]), int(t["index"])) for t in trials}
    bad = [t for t in trials if int(t["status"]) != 0]
    if len(trials) != tasks or len(keys) != tasks or bad:
        fail(f"{results}: {len(trials)} trials recorded ({len(keys)} distinct, {len(bad)} not ok), {tasks} tasks run")


def run_campaign(build, cluster, work, name, text, tasks):
    """One `flotilla run` with sdiag around it: its wall time and the RPCs slurmctld counted."""
    dir_ = pathlib.Path(tempfile.mkdtemp(prefix=f"{name}-", dir=work))
    dir_.chmod(0o755)
    ini = dir_ / f"{name}.ini"
    ini.write_text(text)
    results = dir_ / f"{name}.h5"
    types0, users0 = sdiag(cluster.env)
    start = time.monotonic()
    err = dir_ / "stderr"
    with open(err, "w") as err_file:
        proc = subprocess.Popen([build / "bin" / "flotilla", "run", ini, f"--campaign.results={results}", "--no-live"],
                                cwd=dir_, env=cluster.env, stdout=subprocess.DEVNULL, stderr=err_file)
        # ru_maxrss of flotilla and what it waited for: with batch jobs it starts no process of its own.
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    types1, users1 = sdiag(cluster.env)
    if os.waitstatus_to_exitcode(status) != 0:
        fail(f"flotilla run {ini} exited {os.waitstatus_to_exitcode(status)}: {err.read_text().strip()[-2000:]}")
    check_trials(results, tasks)
    types, users = delta(types0, types1), delta(users0, users1)
    calls = {k: v for k, v in types.items() if k in FLOTILLA_RPCS}
    if not calls.get("REQUEST_SUBMIT_BATCH_JOB") and not calls.get("REQUEST_RESOURCE_ALLOCATION"):
        fail(f"sdiag counted no submission during {ini}: {types}")
    shutil.rmtree(dir_)
    return {"wall_s": wall, "flotilla_calls": sum(calls.values()), "flotilla_rpcs": calls,
            "all_rpcs_as_root": sum(users.values()), "flotilla_peak_rss_mib": usage.ru_maxrss / 1024,
            "flotilla_cpu_s": usage.ru_utime + usage.ru_stime}


def measure_calls(build, cluster, work, args):
    lines = []
    for jobs in args.slurm_jobs:
        text = CALLS_CAMPAIGN.format(jobs=jobs, hold=args.slurm_hold, shards=jobs - 1, partition=args.slurm_partition)
        runs = [run_campaign(build, cluster, work, "slurmscale", text, tasks=jobs) for _ in range(args.repeats)]
        for r in runs:
            r["calls_per_min"] = 60 * r["flotilla_calls"] / r["wall_s"]
            r["calls_per_job"] = r["flotilla_calls"] / jobs
        line = {"bench": "slurm_calls", "jobs_at_once": jobs, "hold_s": args.slurm_hold, "repeats": len(runs),
                "partition": args.slurm_partition}
        for key in ("wall_s", "flotilla_calls", "calls_per_min", "calls_per_job", "all_rpcs_as_root",
                    "flotilla_peak_rss_mib", "flotilla_cpu_s"):
            line[key] = spread([r[key] for r in runs])
        line["flotilla_rpcs_last_run"] = runs[-1]["flotilla_rpcs"]
        print(json.dumps(line), flush=True)
        lines.append(line)
    return lines


def measure_makespan(build, cluster, work, args):
    ranks = args.slurm_task_ranks + 1  # rank 0 dispatches (docs/worker.md)
    duration = 0.01
    text = MAKESPAN_CAMPAIGN.format(tasks=args.slurm_tasks, duration=duration, partition=args.slurm_partition,
                                    ranks=ranks)
    ideal = args.slurm_tasks * duration / args.slurm_task_ranks
    runs = [run_campaign(build, cluster, work, "slurmmakespan", text, tasks=args.slurm_tasks)
            for _ in range(args.repeats)]
    line = {"bench": "slurm_makespan", "tasks": args.slurm_tasks, "task_s": duration,
            "task_ranks": args.slurm_task_ranks, "ideal_s": ideal, "repeats": len(runs),
            "makespan_s": spread([r["wall_s"] for r in runs]),
            "makespan_over_ideal": spread([r["wall_s"] / ideal for r in runs]),
            "flotilla_calls": spread([r["flotilla_calls"] for r in runs]),
            "flotilla_peak_rss_mib": spread([r["flotilla_peak_rss_mib"] for r in runs]),
            "flotilla_cpu_s": spread([r["flotilla_cpu_s"] for r in runs])}
    print(json.dumps(line), flush=True)
    return line


def measure_slurm(build, work, args, summary):
    work.chmod(0o755)  # munged wants its socket's directory reachable by all
    # A SIGTERM (a ctest timeout) unwinds through the cluster's `with`, which stops its daemons.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with Cluster(args, work) as cluster:
        slurmd, ctld = cluster.daemon_rss_kib()
        nodes = cluster.nodes()
        line = {"bench": "slurm_cluster", "nodes": nodes, "own": cluster.own,
                "start_s": getattr(cluster, "start_s", None),
                "slurmd_rss_kib": spread(slurmd) if slurmd else None,
                "slurmd_rss_total_mib": sum(slurmd) / 1024, "slurmctld_rss_kib": ctld,
                "load": os.getloadavg()[0]}
        print(json.dumps(line), flush=True)
        calls = measure_calls(build, cluster, work, args)
        makespan = measure_makespan(build, cluster, work, args)
        slurmd, ctld = cluster.daemon_rss_kib()
        print(json.dumps({"bench": "slurm_cluster_after", "slurmd_rss_kib": spread(slurmd) if slurmd else None,
                          "slurmctld_rss_kib": ctld, "load": os.getloadavg()[0]}), flush=True)
    summary["nodes"] = nodes
    summary["slurm_calls_per_min"] = {str(l["jobs_at_once"]): l["calls_per_min"] for l in calls}
    summary["slurm_calls_per_job"] = {str(l["jobs_at_once"]): l["calls_per_job"] for l in calls}
    low, high = calls[0]["calls_per_min"]["median"], calls[-1]["calls_per_min"]["median"]
    summary["slurm_calls_per_min_ratio"] = high / low if low else None
    summary["makespan_over_ideal"] = makespan["makespan_over_ideal"]
    summary["makespan_tasks"] = makespan["tasks"]
