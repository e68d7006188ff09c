#!/usr/bin/python3
"""bench/scale/run.py BUILD_DIR — flotilla at scale on one host (issue 35).

Measures, each with its spread (median, min..max) over --repeats:
  store:    a results file of 10^4 candidates x 100 trials (10^6 trials, 2 metrics each) written
            through results::Store with Store::Group (build/bench/store_scale), its size, the
            `results summary` library call and the campaign loop's resume (Ledger::open) on it,
            next to reading the raw trials; and `flotilla results summary FILE` as a user runs it;
  ask:      the default strategy's ask at 10^3 and 10^4 recorded evaluations, told them as a
            resumed campaign is (build/bench/search_ask_cost --prefill, on the one shared space with
            more than 10^4 configurations), next to `random`;
  campaign: flotilla's own CPU per task and its peak RSS for campaigns of empty tasks on the local
            backend (`echo` a metric; grid strategy, so the strategy's ask is not in it): utime+stime
            of the flotilla process alone read from /proc/PID/stat once it has exited but before it
            is reaped, and ru_maxrss of wait4 (flotilla and its tasks; the tasks are `echo`).
  campaign_mpi: the same campaigns on the mpi backend, whose worker ranks run each task (the
            `sleep` kernel with us=0) in-process: flotilla's own CPU per task with no process
            started per task, at --mpi-candidates (10^4 candidates, 10^5 tasks) and a quarter of it.
  slurm:    (only with --only slurm, or --slurm) on a simulated cluster of --slurm-nodes slurmd on
            this host (scripts/slurm/slurm-local.sh, SLURM_LOCAL_NODES; started here and always
            stopped, by PID; or --slurm-conf of one already running, whose slurmctld nothing else
            may use meanwhile): slurmctld's RPCs counted by `sdiag` before and after each campaign
            (the message types flotilla sends: submissions, job queries, cancels, its one config
            read; everything here runs as root, so the per-user count also holds the jobs' srun and
            the slurmd), per minute and per job, for campaigns that keep about 10 and about 1,000
            jobs in Slurm at once (one explore job that holds them for --slurm-hold seconds, and an
            evaluate array of the rest, afterok on it); and the makespan of a campaign of short
            tasks (`sleep 0.01`) in one job against ideal (tasks x 10 ms / the job's task ranks).
            Also the RSS of every slurmd (ps).
Prints one JSON line per measure, then one summary line with issue 35's keys; nodes,
slurm_calls_per_min and makespan_over_ideal are null unless the slurm part ran.

The correctness half (exit 1 naming what is wrong): store_scale and search_ask_cost check their
own (every trial written is read back and summarised, every timed ask returns a new feasible
configuration); each campaign must record every task once, ok, and `results summary --json` must
count them. --quick runs everything at a tiny size (the ctest bench_scale_smoke).
Full size (about 15 minutes on 2 cores): /usr/bin/python3 bench/scale/run.py build
The Slurm part, full size (about 15 minutes on 2 cores):
  /usr/bin/python3 bench/scale/run.py build --only slurm
Figures: bench/scale/RESULTS.md.
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import slurm_part  # noqa: E402  (beside this file)
from slurm_part import fail, spread  # noqa: E402  (one copy of each, shared by both parts)

NOT_MEASURED = "not measured: needs the simulated cluster (--only slurm)"
PARTS = ("store", "ask", "campaign", "campaign_mpi", "slurm")


def run_json(cmd):
    """Runs a bench program, echoes its output, returns its last (JSON) line."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stderr.write("".join(line + "\n" for line in proc.stdout.strip().splitlines()[:-1]))
    if proc.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_store(build, work, args):
    size = ["--candidates", "50", "--explore", "3", "--shards", "1"] if args.quick else \
           ["--candidates", str(args.candidates), "--explore", "96", "--shards", "4"]
    line = run_json([build / "bench" / "store_scale", *size, "--repeats", str(args.repeats), "--dir", str(work), "--keep"])
    file = pathlib.Path(line["file"])
    cli, cli_cpu, cli_rss = [], [], []
    for _ in range(args.repeats):  # what the user runs; its output is the text summary
        start = time.monotonic()
        proc = subprocess.Popen([build / "bin" / "flotilla", "results", "summary", str(file)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        cli.append(time.monotonic() - start)
        cli_cpu.append(usage.ru_utime + usage.ru_stime)
        cli_rss.append(usage.ru_maxrss / 1024)
        if proc.returncode != 0:
            fail(f"flotilla results summary {file} exited {proc.returncode}")
    line["cli_summary_s"] = spread(cli)
    line["cli_summary_cpu_s"] = spread(cli_cpu)
    line["cli_summary_peak_rss_mib"] = spread(cli_rss)
    file.unlink()
    line["file"] = None
    return line


def measure_ask(build, args):
    if args.quick:
        cmd = [build / "bench" / "search_ask_cost", args.source / "tests" / "search" / "data", "--at", "20,40",
               "--repeats", "1", "--prefill"]
    else:
        cmd = [build / "bench" / "search_ask_cost", args.spaces, "--at", "1000,10000", "--repeats", str(args.repeats),
               "--prefill", "--spaces", "dedispersion_A100"]
    line = run_json(cmd)
    line["bench"] = "search_ask_cost --prefill"
    return line


CAMPAIGN = """[campaign]
name = scale
seed = 1

[intent]
objective = {objective}
direction = minimize

[space]
param = x: int: 1..{candidates}

[explore]
command = {explore}
repeats = {repeats}
max_repeats = {repeats}

[confirm]
enabled = false

[evaluate]
command = {evaluate}
shards = {shards}
gate = all

[search]
strategy = grid
budget = {candidates}
batch = {batch}

[resources]
backend = {backend}
slots = 2
pin = false
"""

# What each backend's campaign runs: on the local backend each task is a process (`echo` a metric,
# `true`); on the mpi backend each is the built-in `sleep` kernel with us=0, which the worker ranks
# run in-process, so the scheduler's own cost per task is what is left to measure.
TASKS = {
    "local": {"explore": "echo flotilla-metric: t={x}", "evaluate": "true", "objective": "t"},
    "mpi": {"explore": "flotilla-kernel sleep --us 0",
            "evaluate": "flotilla-kernel sleep --us 0 --verify --shard {shard} --shards {shards}",
            "objective": "time_s"},
}


def stat_cpu_s(pid):
    """utime+stime of the process (all its threads, not its children), from /proc/PID/stat."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_campaign(build, work, candidates, repeats, shards, batch, backend="local"):
    dir_ = pathlib.Path(tempfile.mkdtemp(prefix="campaign-", dir=work))
    ini = dir_ / "scale.ini"
    ini.write_text(CAMPAIGN.format(candidates=candidates, repeats=repeats, shards=shards, batch=batch, backend=backend,
                                   **TASKS[backend]))
    results = dir_ / "scale.h5"
    start = time.monotonic()
    env = dict(os.environ, PATH=f"{build / 'bin'}:{os.environ.get('PATH', '')}")  # flotilla-worker, flotilla-kernel
    proc = subprocess.Popen([build / "bin" / "flotilla", "run", ini, f"--campaign.results={results}"], cwd=dir_,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    hwm_kib = 0
    while True:  # wait for its exit without reaping it, so /proc/PID/stat still holds its own times
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is not None:
            break
        try:
            for line in pathlib.Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    hwm_kib = max(hwm_kib, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    cpu_s = stat_cpu_s(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read()
    tasks = candidates * (repeats + shards)
    if proc.returncode != 0:
        fail(f"flotilla run {ini} exited {proc.returncode}: {err.strip()[-2000:]}")
    check_campaign(build, results, candidates, repeats, shards)
    shutil.rmtree(dir_)
    return {"tasks": tasks, "candidates": candidates, "wall_s": wall, "cpu_s": cpu_s, "cpu_us_per_task": 1e6 * cpu_s / tasks,
            "ru_maxrss_mib": usage.ru_maxrss / 1024, "vm_hwm_mib": hwm_kib / 1024,
            "tasks_cpu_s": usage.ru_utime + usage.ru_stime - cpu_s}


def check_campaign(build, results, candidates, repeats, shards):
    """The correctness half: every task recorded once, ok (read from /trials with h5py), and
    `results summary --json` counts them all, every candidate verified."""
    import h5py  # Debian's python3-h5py
    with h5py.File(results, "r") as f:
        trials = f["trials"][...]
    keys = {(int(t["candidate"]), int(t["kind"]), int(t["index"])) for t in trials}
    bad = [t for t in trials if int(t["status"]) != 0]
    tasks = candidates * (repeats + shards)
    if len(trials) != tasks or len(keys) != tasks or bad:
        fail(f"{results}: {len(trials)} trials recorded ({len(keys)} distinct, {len(bad)} not ok), {tasks} tasks run")
    proc = subprocess.run([build / "bin" / "flotilla", "results", "summary", "--json", str(results)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        fail(f"results summary --json {results} exited {proc.returncode}: {proc.stderr.strip()}")
    progress = json.loads(proc.stdout)["progress"]
    if progress["trials"] != tasks or progress["candidates"] != candidates or progress["verified"] != candidates:
        fail(f"{results}: results summary counts {progress['trials']} trials, {progress['candidates']} candidates, "
             f"{progress['verified']} verified; {tasks}, {candidates} and {candidates} expected")


def measure_campaigns(build, work, args, backend="local"):
    largest = args.campaign_candidates if backend == "local" else args.mpi_candidates
    sizes = [(20, 3, 1)] if args.quick else [(largest // 4, 8, 2), (largest, 8, 2)]
    lines = []
    for candidates, repeats, shards in sizes:
        runs = [run_campaign(build, work, candidates, repeats, shards, batch=64, backend=backend)
                for _ in range(args.repeats if (candidates, repeats, shards) == sizes[-1] else 1)]
        line = {"bench": f"campaign_{backend}", "tasks": runs[0]["tasks"], "candidates": candidates,
                "tasks_per_candidate": repeats + shards, "repeats": len(runs)}
        for key in ("wall_s", "cpu_s", "cpu_us_per_task", "ru_maxrss_mib", "vm_hwm_mib", "tasks_cpu_s"):
            line[key] = spread([r[key] for r in runs])
        print(json.dumps(line), flush=True)
        lines.append(line)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=10000, help="store: candidates of 100 trials")
    parser.add_argument("--campaign-candidates", type=int, default=2000, help="campaign: candidates of 10 tasks")
    parser.add_argument("--mpi-candidates", type=int, default=10000,
                        help="campaign_mpi: candidates of 10 in-process tasks (10^5 tasks)")
    parser.add_argument("--spaces", type=pathlib.Path, default=None, help="default: ../shared/data/spaces")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repeat (the ctest smoke)")
    parser.add_argument("--only", default=",".join(p for p in PARTS if p != "slurm"), help=f"parts: {', '.join(PARTS)}")
    parser.add_argument("--slurm", action="store_true", help="add the slurm part to --only's")
    parser.add_argument("--slurm-nodes", type=int, default=None, help="slurm: slurmd of the cluster (128; --quick 8)")
    parser.add_argument("--slurm-conf", default=None, help="slurm: a running cluster's slurm.conf, idle otherwise")
    parser.add_argument("--slurm-jobs", default=None, help="slurm: jobs at once in each calls campaign (10,1000)")
    parser.add_argument("--slurm-hold", type=float, default=None, help="slurm: seconds they stay (30; --quick 2)")
    parser.add_argument("--slurm-tasks", type=int, default=None, help="slurm: tasks of 10 ms for the makespan (10000)")
    parser.add_argument("--slurm-task-ranks", type=int, default=2, help="slurm: task ranks of the makespan job")
    parser.add_argument("--slurm-partition", default="scale")
    args = parser.parse_args()
    args.build = args.build.resolve()
    args.source = pathlib.Path(__file__).resolve().parents[2]
    args.spaces = args.spaces or args.source.parent / "shared" / "data" / "spaces"
    if args.quick:
        args.repeats = 1
    only = args.only.split(",") + (["slurm"] if args.slurm else [])
    unknown = set(only) - set(PARTS)
    if unknown:
        parser.error(f"--only: unknown part(s) {', '.join(sorted(unknown))} (known: {', '.join(PARTS)})")
    defaults = {"slurm_nodes": (8, 128), "slurm_jobs": ("4,16", "10,1000"), "slurm_hold": (2, 30),
                "slurm_tasks": (200, 10000)}
    for key, (quick, full) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else full)
    args.slurm_jobs = [int(j) for j in str(args.slurm_jobs).split(",")]
    summary = {"bench": "scale", "quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="flotilla-scale-") as tmp:
        work = pathlib.Path(tmp)
        if "store" in only:
            line = measure_store(build=args.build, work=work, args=args)
            print(json.dumps(line), flush=True)
            summary["trials"] = line["trials"]
            summary["file_mib"] = line["file_mib"]
            summary["summary_s_at_1m"] = line["cli_summary_s"]
            summary["summary_call_s_at_1m"] = line["summary_s"]
            summary["resume_s_at_1m"] = line["resume_s"]
            summary["summary_cpu_s_at_1m"] = line["cli_summary_cpu_s"]
            summary["resume_cpu_s_at_1m"] = line["cpu"]["resume_s"]
            summary["summary_peak_rss_mib_at_1m"] = line["cli_summary_peak_rss_mib"]
        if "ask" in only:
            line = measure_ask(args.build, args)
            print(json.dumps(line), flush=True)
            at = line["at"]
            for n, key in ((at[0], "ask_ms_at_1k"), (at[-1], "ask_ms_at_10k")):
                cell = line["all"][str(n)]
                summary[key] = {"median": cell["median_ms"], "min": cell["min_ms"], "max": cell["max_ms"],
                                "mean5_median": cell["mean5_median_ms"], "at": n}
            summary["ask_costliest_ms"] = line["all"]["run_max"]
        for part, backend, suffix in (("campaign", "local", ""), ("campaign_mpi", "mpi", "_mpi")):
            if part not in only:
                continue
            lines = measure_campaigns(args.build, work, args, backend=backend)
            big = lines[-1]
            summary["mpi_tasks" if suffix else "tasks"] = big["tasks"]
            summary["cpu_us_per_task" + suffix] = big["cpu_us_per_task"]
            if not suffix:
                summary["peak_rss_mib"] = big["ru_maxrss_mib"]  # with the tasks, which are `echo` here
            summary["flotilla_vm_hwm_mib" + suffix] = big["vm_hwm_mib"]
            summary[f"cpu_us_per_task{suffix}_by_tasks"] = {str(l["tasks"]): l["cpu_us_per_task"]["median"] for l in lines}
        if "slurm" in only:
            slurm_part.measure_slurm(args.build, work, args, summary)
    if "slurm" not in only:
        for key in ("nodes", "slurm_calls_per_min", "makespan_over_ideal"):
            summary[key] = None
        summary["note"] = f"nodes, slurm_calls_per_min, makespan_over_ideal: {NOT_MEASURED}"
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
