#!/usr/bin/env python3
"""check_job_manifests.py JOBS_DIR — no (task, attempt) in two job manifests of a Slurm jobs folder.

A restarted or recovering scheduler must re-attach to its jobs, not submit their tasks again.
"""
import collections
import glob
import json
import sys

seen = collections.Counter()
for manifest in glob.glob(sys.argv[1] + "/*/manifest.json"):
    for task in json.load(open(manifest))["tasks"]:
        seen[(task["id"], task.get("attempt", 0))] += 1
twice = [k for k, n in seen.items() if n > 1]
print(f"{len(seen)} tasks in job manifests; submitted twice: {twice[:5]}")
sys.exit(1 if twice else 0)
