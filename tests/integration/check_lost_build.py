#!/usr/bin/python3
"""check_lost_build.py FLOTILLA INI WORK — a build job lost with its node (the real local Slurm
cluster, SLURM_CONF from ctest). tests/integration/build_stage.ini's builds run as Slurm jobs of
their own (build.on = auto); while the baseline's build job runs, its node is set DOWN, so the
job ends NODE_FAIL and its build comes back lost. Expected:

  1. the campaign finishes with the outcome of an undisturbed run (v=good2 x=2 wins verified, the
     two v=broken candidates are build_failed);
  2. the lost build is built again, as its next attempt (a build trial of attempt 1 for the
     baseline, and its key appears twice in builds.log), in a new Slurm job;
  3. no other build ran twice, and no trial key is recorded twice.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import h5py

flotilla, ini, work = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
h5 = os.path.join(work, "lost.h5")
builds_dir = h5 + ".jobs/builds"
log = os.path.join(work, "builds.log")

with open(ini) as f:
    command = next(line.split("=", 1)[1].strip() for line in f if line.startswith("command = sh -c "))
slow = command.replace(' echo "$2" >> builds.log;', ' echo "$2" >> builds.log; sleep 4;', 1)
assert slow != command
args = [flotilla, "run", ini, f"--campaign.results={h5}", f"--campaign.workdir={work}", "--no-live",
        "--resources.backend=slurm", "--resources.partition=debug", f"--build.command={slow}"]
run = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def squeue(job):
    out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T %N"], capture_output=True, text=True).stdout.split()
    return out if len(out) == 2 else None


down = None
try:
    deadline = time.time() + 120
    while down is None and time.time() < deadline:  # the baseline's build job, running, its build started
        time.sleep(0.1)
        if not os.path.exists(log) or not os.path.isdir(builds_dir):
            continue
        for folder in sorted(os.listdir(builds_dir)):
            id_file = os.path.join(builds_dir, folder, "slurm_job_id")
            if os.path.exists(id_file):
                state = squeue(open(id_file).read().strip())
                if state and state[0] == "RUNNING":
                    down = state[1]
                    break
    if down is None:
        run.kill()
        sys.exit("no running build job with its build started within 120 s")
    subprocess.run(["scontrol", "update", f"nodename={down}", "state=down", "reason=flotilla-test"], check=True)
    # The test cluster has ReturnToService=2: a live slurmd brings a DOWN node back at once;
    # draining keeps it out, as a broken node would stay out (as slurm_faults.sh does).
    subprocess.run(["scontrol", "update", f"nodename={down}", "state=drain", "reason=flotilla-test"], check=True)
    out, _ = run.communicate(timeout=300)
finally:
    if down:
        subprocess.run(["scontrol", "update", f"nodename={down}", "state=resume"])
if run.returncode != 0:
    sys.exit(f"flotilla run: exit {run.returncode}\n{out}")

summary = json.loads(subprocess.run([flotilla, "results", "summary", h5, "--json"], check=True,
                                    capture_output=True, text=True).stdout)
if summary["best"]["config"] != "v=good2 x=2" or summary["progress"]["build_failed"] != 2 \
        or summary["best"]["status"] != "verified":
    sys.exit(f"not the undisturbed outcome: best {summary['best']}, progress {summary['progress']}")
with h5py.File(h5, "r") as f:
    trials = f["trials"][:]
BUILD = 4  # TrialKind::build (docs/results-schema.md)
builds = [(int(t["candidate"]), int(t["attempt"]), int(t["status"])) for t in trials if int(t["kind"]) == BUILD]
keys = [(int(t["candidate"]), int(t["kind"]), int(t["index"]), int(t["attempt"])) for t in trials]
if len(keys) != len(set(keys)):
    sys.exit("a trial key was recorded twice")
if not any(c == 0 and a >= 1 and s == 0 for c, a, s in builds):
    sys.exit(f"the baseline's lost build was not built again as a later attempt: build trials {builds}")
with open(log) as f:
    logged = f.read().split()
if logged.count("good1") != 2 or logged.count("good2") != 1 or logged.count("broken") != 1:
    sys.exit(f"builds run: {logged}; expected good1 twice (lost, then again) and the others once")
print(f"ok: node {down} set DOWN under the baseline's build job; the build ran again as attempt 1 "
      f"(builds.log {logged}); the campaign ended as an undisturbed one")
