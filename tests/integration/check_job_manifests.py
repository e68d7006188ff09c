#!/usr/bin/env python3
"""check_job_manifests.py JOBS_DIR — no (task, attempt) in two job manifests of a Slurm jobs folder,
and every submitted job's journal (DIR/events, jobs/include/flotilla/jobs/JobPhase.h) whole.

A restarted or recovering scheduler must re-attach to its jobs, not submit their tasks again.
After a campaign has finished, each job it submitted has a journal that starts with its
submission (or allocation) and ends in retired, ended or cancelled: nobody owns a job that is
still queued or running.
"""
import collections
import glob
import json
import os
import sys

PHASES = {"written", "queued", "running", "orphaned", "retired", "ended", "cancelled"}
EVENTS = {"submitted", "allocated", "deferred", "launching", "seen_pending", "seen_running", "seen_ended",
          "all_reported", "launcher_lost", "cancelled", "detached", "reattached"}

seen = collections.Counter()
problems = []
journals = 0
for manifest in glob.glob(sys.argv[1] + "/*/manifest.json"):
    for task in json.load(open(manifest))["tasks"]:
        seen[(task["id"], task.get("attempt", 0))] += 1
    folder = os.path.dirname(manifest)
    path = os.path.join(folder, "events")
    # Submitted: its journal says so (flotilla's own jobs), or its script wrote its id (by hand).
    journalled = os.path.exists(path) and any(line.split()[1:2] in (["submitted"], ["allocated"]) for line in open(path))
    if not journalled and not os.path.exists(os.path.join(folder, "slurm_job_id")):
        continue  # written by `flotilla sbatch`, never submitted
    if not os.path.exists(path):
        problems.append(f"{path}: a submitted job without a journal")
        continue
    journals += 1
    lines = [line.split() for line in open(path).read().splitlines() if line.strip()]
    bad = [i + 1 for i, f in enumerate(lines) if len(f) < 3 or f[1] not in EVENTS or f[2] not in PHASES]
    if bad:
        problems.append(f"{path}: lines {bad} are not job events")
        continue
    submissions = [f[1] for f in lines if f[1] in ("submitted", "allocated")]
    if len(submissions) != 1:
        problems.append(f"{path}: {len(submissions)} submissions")
    if lines[-1][2] not in ("retired", "ended", "cancelled"):
        problems.append(f"{path}: the campaign ended with this job {lines[-1][2]}")
twice = [k for k, n in seen.items() if n > 1]
print(f"{len(seen)} tasks in job manifests; submitted twice: {twice[:5]}; {journals} journals; problems: {problems[:5]}")
sys.exit(1 if twice or problems else 0)
