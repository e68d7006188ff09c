#!/usr/bin/python3
"""bench/chaos: a deterministic campaign on the real local Slurm cluster under seeded random faults.

usage: sudo bench/chaos/run.py BUILD_DIR [--faults N] [--seed S] [--keep DIR]

Starts a private Slurm cluster (scripts/slurm/slurm-local.sh: munged, slurmctld, 4 slurmd) under
/tmp, runs the campaign once without faults (the reference), then runs it again and again while
injecting faults drawn from the seed, at random moments, until N faults have been injected:

  kill_scheduler   SIGKILL of `flotilla run`, then run the same command again (resume)
  kill_twice       the same, and SIGKILL of the resumed run within its first second
  kill_rank        SIGKILL of one flotilla-worker rank of a running job
  scancel          `scancel` of a running job of the campaign
  node_down        a node of a running job set DOWN, then RESUMEd a few seconds later
  ctld_restart     slurmctld stopped and started again while jobs run
  disk_full        the results directory (a tmpfs) filled to below flotilla's 1 MiB reserve,
                   so flotilla stops; then freed, and the campaign run again

After every fault the campaign is run (again) until it completes. When it has, an invariant
checker reads the HDF5 file with h5py and the cluster's state:

  no trial key (candidate, kind, index, attempt) twice;
  no task lost: the same (candidate, kind, index) set as the fault-free run, nothing pending;
  the same verified winner as the fault-free run with the same seed;
  no Slurm job of the campaign left pending or running;
  no stray process: no flotilla-worker, no run-allocation launcher, nothing carrying the
  campaign's FLOTILLA_CAMPAIGN tag.

Ends with one JSON line: faults injected per kind, campaigns completed, the number of violations
and each one's text (`violation_texts`, with the faults its campaign had been through, in order).
A run with violations keeps its work folder (its path is in the JSON line) so the campaign's
file and log can be read, and exits 1: the correctness half is zero violations.
Needs root (tmpfs mounts, Slurm's daemons as this user) and the packages of install-deps.sh;
without root it says so and exits 77 (ctest's skip). The cluster's ports are 18817 and 18818..21
unless SLURM_LOCAL_CTLD_PORT and SLURM_LOCAL_NODE_PORT say otherwise. Full size: the default
--faults 56; runs in bench/chaos/RESULTS.md. The ctest bench_chaos_no_violations runs --faults 2.
"""
import argparse
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SLURM_LOCAL = os.path.join(ROOT, "scripts", "slurm", "slurm-local.sh")
KINDS = ["kill_scheduler", "kill_twice", "kill_rank", "scancel", "node_down", "ctld_restart", "disk_full"]

CAMPAIGN = """[campaign]
name = chaos
seed = 11

[intent]
objective = score
baseline = x=1

[space]
param = x: int: 1..10

[explore]
command = sh -c "sleep 0.25; echo flotilla-metric: score=$0" {x}
repeats = 2
timeout = 60s

[evaluate]
command = sh -c "sleep 0.1; test $0 -le 7" {x}
shards = 2
gate = all

[search]
strategy = grid
budget = 9
batch = 3

[resources]
backend = slurm
partition = debug
ranks_per_node = 2
max_attempts = 20
"""


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class Cluster:
    def __init__(self, env):
        self.dir = tempfile.mkdtemp(prefix="flotilla-chaos.", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.env = env

    def start(self):
        out = subprocess.run([SLURM_LOCAL, "start", self.dir], env=self.env, capture_output=True, text=True, check=True)
        self.env["SLURM_CONF"] = os.path.join(self.dir, "etc", "slurm.conf")
        return out

    def stop(self):
        subprocess.run([SLURM_LOCAL, "stop", self.dir], env=self.env, capture_output=True)

    def restart_ctld(self):
        pid = int(open(os.path.join(self.dir, "run", "slurmctld.pid")).read())
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            if not os.path.exists(f"/proc/{pid}"):
                break
            time.sleep(0.1)
        subprocess.run([SLURM_LOCAL, "start", self.dir], env=self.env, capture_output=True, check=True)

    def jobs(self, prefix):
        out = subprocess.run(["squeue", "-h", "-o", "%i %j %T %N"], env=self.env, capture_output=True, text=True).stdout
        jobs = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1].startswith(prefix):
                jobs.append({"id": parts[0], "name": parts[1], "state": parts[2], "node": parts[3] if len(parts) > 3 else ""})
        return jobs


class Chaos:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.flotilla = os.path.join(os.path.abspath(args.build), "bin", "flotilla")
        # Ports of its own, clear of the test fixture's cluster (scripts/slurm/slurm-local.sh).
        self.env = dict(os.environ, PATH=os.path.join(os.path.abspath(args.build), "bin") + ":" + os.environ["PATH"],
                        SLURM_LOCAL_CTLD_PORT=os.environ.get("SLURM_LOCAL_CTLD_PORT", "18817"),
                        SLURM_LOCAL_NODE_PORT=os.environ.get("SLURM_LOCAL_NODE_PORT", "18818"),
                        OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        self.work = args.keep or tempfile.mkdtemp(prefix="flotilla-chaos-work.")
        os.makedirs(self.work, exist_ok=True)
        self.ini = os.path.join(self.work, "chaos.ini")
        with open(self.ini, "w") as f:
            f.write(CAMPAIGN)
        self.cluster = Cluster(self.env)
        self.faults = {k: 0 for k in KINDS}
        self.violations = []
        self.completed = 0
        self.history = {}  # campaign results file -> the faults injected into it, in order

    # --- running the campaign ------------------------------------------------------------------
    def results_dir(self, n):
        d = os.path.join(self.work, f"c{n}")
        os.makedirs(d, exist_ok=True)
        return d

    def start(self, h5):
        return subprocess.Popen([self.flotilla, "run", self.ini, f"--campaign.results={h5}", "--no-live"], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=open(h5 + ".log", "a"), start_new_session=False)

    def finish(self, h5, limit=600):
        """Runs the campaign until it completes (exit 0, or 3: nothing verified)."""
        for _ in range(20):
            p = self.start(h5)
            try:
                rc = p.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                self.violations.append(f"{h5}: a run did not finish in {limit} s")
                return False
            if rc in (0, 3):
                return True
            time.sleep(1)  # e.g. stopped for a full disk that is free again now
        self.violations.append(f"{h5}: the campaign never completed")
        return False

    def running_job(self, prefix, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            running = [j for j in self.cluster.jobs(prefix) if j["state"] == "RUNNING"]
            if running:
                return self.rng.choice(running)
            time.sleep(0.2)
        return None

    # --- faults ----------------------------------------------------------------------------------
    def inject(self, kind, h5, proc, prefix):
        if kind in ("kill_scheduler", "kill_twice"):
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            if kind == "kill_twice":
                again = self.start(h5)
                time.sleep(self.rng.uniform(0.05, 1.0))
                again.send_signal(signal.SIGKILL)
                again.wait()
            return True
        if kind == "kill_rank":
            # This cluster's ranks only: a flotilla-worker of another campaign or test on the
            # machine is not this bench's to kill.
            conf = f"SLURM_CONF={self.env['SLURM_CONF']}".encode()
            workers = [pid for pid in self.processes_with(conf) if self.comm(pid) == "flotilla-worker"]
            if not workers:
                return False
            os.kill(self.rng.choice(sorted(workers)), signal.SIGKILL)
            return True
        if kind == "scancel":
            job = self.running_job(prefix, timeout=5)
            if not job:
                return False
            subprocess.run(["scancel", job["id"]], env=self.env, capture_output=True)
            return True
        if kind == "node_down":
            job = self.running_job(prefix, timeout=5)
            if not job or not job["node"]:
                return False
            node = job["node"].split(",")[0].replace("[", "").split("-")[0]
            subprocess.run(["scontrol", "update", f"nodename={node}", "state=down", "reason=chaos"], env=self.env,
                           capture_output=True)
            time.sleep(self.rng.uniform(1, 4))
            subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"], env=self.env, capture_output=True)
            return True
        if kind == "ctld_restart":
            self.cluster.restart_ctld()
            return True
        if kind == "disk_full":
            d = os.path.dirname(h5)
            st = os.statvfs(d)
            free = st.f_bavail * st.f_frsize
            filler = os.path.join(d, "filler")
            with open(filler, "wb") as f:
                f.write(b"\0" * max(0, free - 512 * 1024))
            try:
                proc.wait(timeout=60)  # flotilla stops below its reserve
            except subprocess.TimeoutExpired:
                pass
            os.remove(filler)
            return True
        return False

    def chaos_campaign(self, n, budget):
        d = self.results_dir(n)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16M", "tmpfs", d], capture_output=True).returncode == 0
        h5 = os.path.join(d, "chaos.h5")
        prefix = "chaos-"
        injected = 0
        proc = self.start(h5)
        while injected < budget:
            time.sleep(self.rng.uniform(0.5, 4.0))
            if proc.poll() is not None:
                if proc.returncode in (0, 3):
                    break
                proc = self.start(h5)
                continue
            kind = self.rng.choice(KINDS if mounted else [k for k in KINDS if k != "disk_full"])
            if self.inject(kind, h5, proc, prefix):
                self.faults[kind] += 1
                injected += 1
                self.history.setdefault(h5, []).append(kind)
                log(f"campaign {n}: fault {injected} {kind}")
            if proc.poll() is not None and proc.returncode not in (0, 3):
                proc = self.start(h5)
        if proc.poll() is None:
            proc.wait(timeout=600)
        if self.finish(h5):
            self.completed += 1
            self.check(h5, prefix)
        if mounted:
            shutil.copy(h5, os.path.join(self.work, f"c{n}.h5"))
            if os.path.exists(h5 + ".log"):
                shutil.copy(h5 + ".log", os.path.join(self.work, f"c{n}.h5.log"))
            subprocess.run(["umount", "-l", d], capture_output=True)
        return injected

    # --- invariants ------------------------------------------------------------------------------
    def trial_keys(self, h5):
        with h5py.File(h5, "r", swmr=True) as f:
            trials = f["trials"][:]
            kinds = {v: k for k, v in h5py.check_enum_dtype(trials.dtype["kind"]).items()}
        keys = [(int(t["candidate"]), kinds[int(t["kind"])], int(t["index"]), int(t["attempt"])) for t in trials
                if t["start"] != 0 or t["end"] != 0]
        return keys

    def summary(self, h5):
        out = subprocess.run([self.flotilla, "results", "summary", h5, "--json"], env=self.env, capture_output=True,
                             text=True, check=True).stdout
        return json.loads(out)

    @staticmethod
    def processes_with(entry):
        """Live (not zombie) processes whose environment holds `entry` (bytes NAME=VALUE)."""
        found = []
        for env in glob.glob("/proc/[0-9]*/environ"):
            try:
                if entry in open(env, "rb").read().split(b"\0"):
                    pid = int(env.split("/")[2])
                    state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
                    if state not in ("Z", "X"):
                        found.append(pid)
            except OSError:
                pass
        return found

    @staticmethod
    def comm(pid):
        try:
            return open(f"/proc/{pid}/comm").read().strip()
        except OSError:
            return "?"

    @staticmethod
    def cmdline(pid):
        try:
            return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return ""

    def describe(self, pid):
        """pid, command line, parent and age: enough to tell which task left it."""
        try:
            stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            ppid = int(stat[1])
            age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(stat[19]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            ppid, age = -1, -1
        return f"pid {pid} ({self.cmdline(pid)[:200]}), parent {ppid} ({self.comm(ppid)}), {age:.0f} s old"

    def check(self, h5, prefix):
        keys = self.trial_keys(h5)
        if len(keys) != len(set(keys)):
            self.violations.append(f"{h5}: a trial key recorded twice")
        tasks = {(c, k, i) for c, k, i, _ in keys if k in ("explore", "evaluate")}
        if tasks != self.reference_tasks:
            self.violations.append(f"{h5}: tasks lost or added: {sorted(self.reference_tasks ^ tasks)[:5]}")
        s = self.summary(h5)
        if s["progress"]["pending"] != 0:
            self.violations.append(f"{h5}: {s['progress']['pending']} candidates pending")
        if (s["best"] or {}).get("config") != self.reference_winner or not s["best_verified"]:
            self.violations.append(f"{h5}: winner {(s['best'] or {}).get('config')} != {self.reference_winner}")
        time.sleep(2)  # Slurm's completing jobs
        left = [j for j in self.cluster.jobs(prefix) if j["state"] in ("PENDING", "RUNNING", "CONFIGURING")]
        if left:
            self.violations.append(f"{h5}: Slurm jobs left: {left}")
        # Only this cluster's processes: a flotilla-pairs of another campaign on the machine (a
        # test suite running beside the bench) is none of this campaign's business.
        conf = f"SLURM_CONF={self.env['SLURM_CONF']}".encode()
        for pid in self.processes_with(conf):
            name = self.comm(pid)
            if name in ("flotilla-worker", "flotilla-pairs") or "run-allocation" in self.cmdline(pid):
                self.violations.append(f"{h5}: a {name} process is left: {self.describe(pid)}")
        tag = f"FLOTILLA_CAMPAIGN={os.path.abspath(h5)}".encode()
        for env in glob.glob("/proc/[0-9]*/environ"):
            try:
                if tag in open(env, "rb").read().split(b"\0"):
                    state = open(env.replace("environ", "stat")).read().rsplit(")", 1)[1].split()[0]
                    if state not in ("Z", "X"):
                        self.violations.append(f"{h5}: stray process {env.split('/')[2]}")
            except OSError:
                pass

    # --- the run ---------------------------------------------------------------------------------
    def run(self):
        started = time.time()
        self.cluster.start()
        try:
            ref = os.path.join(self.results_dir(0), "chaos.h5")
            if not self.finish(ref):
                sys.exit("the fault-free run did not complete")
            self.reference_tasks = {(c, k, i) for c, k, i, _ in self.trial_keys(ref) if k in ("explore", "evaluate")}
            s = self.summary(ref)
            self.reference_winner = s["best"]["config"]
            log(f"reference: {len(self.reference_tasks)} tasks, winner {self.reference_winner}")
            total, n = 0, 1
            while total < self.args.faults:
                total += self.chaos_campaign(n, min(8, self.args.faults - total))
                n += 1
        finally:
            self.cluster.stop()
            shutil.rmtree(self.cluster.dir, ignore_errors=True)
        texts = []
        for v in self.violations:
            h5 = v.split(": ", 1)[0]
            texts.append(f"{v} (after faults: {', '.join(self.history.get(h5, [])) or 'none'})")
            log("VIOLATION:", texts[-1])
        print(json.dumps({"bench": "chaos", "faults": self.faults, "faults_total": sum(self.faults.values()),
                          "campaigns": n - 1, "completed": self.completed, "violations": len(self.violations),
                          "violation_texts": texts, "kept": self.work if self.violations or self.args.keep else None,
                          "seed": self.args.seed, "seconds": round(time.time() - started, 1)}))
        if not self.args.keep and not self.violations:
            shutil.rmtree(self.work, ignore_errors=True)
        return 1 if self.violations else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--faults", type=int, default=56)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", help="keep the campaign files here")
    args = parser.parse_args()
    if os.geteuid() != 0:
        log("bench/chaos: needs root (tmpfs mounts, Slurm's daemons); skipped")
        return 77
    return Chaos(args).run()


if __name__ == "__main__":
    sys.exit(main())
