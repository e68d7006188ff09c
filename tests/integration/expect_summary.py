#!/usr/bin/python3
"""expect_summary.py FLOTILLA FILE.h5 CHECK... — asserts on `flotilla results summary --json`.
Checks: best_config=TEXT, best_verified, gain_gt=X, rolled_back=N, candidates=N, verdict=WORDS (the
top-level verdict, underscores for spaces: verdict=confirmed_faster), confirmed_interval (a
confirmed winner's interval lies above 1 + the minimum effect and holds its ratio)."""
import json
import subprocess
import sys

flotilla, h5, *checks = sys.argv[1:]
summary = json.loads(subprocess.run([flotilla, "results", "summary", h5, "--json", "--top", "100"],
                                    check=True, capture_output=True, text=True).stdout)
best = summary["best"] or {}
for check in checks:
    name, _, value = check.partition("=")
    if name == "best_config":
        ok = best.get("config") == value
    elif name == "best_verified":
        ok = summary["best_verified"] and best.get("status") == "verified"
    elif name == "gain_gt":
        ok = summary["gain_over_baseline"] is not None and summary["gain_over_baseline"] > float(value)
    elif name == "rolled_back":
        ok = len(summary["rolled_back"]) == int(value)
    elif name == "candidates":
        ok = summary["progress"]["candidates"] == int(value)
    elif name == "verdict":
        ok = summary["verdict"] == value.replace("_", " ")
    elif name == "confirmed_interval":
        c = best.get("confirmation") or {}
        interval = summary["gain_interval"] or {}
        ok = (summary["best_confirmed"] and c.get("verdict") == "faster"
              and interval.get("low", 0) > 1 + c["min_effect"]
              and interval["low"] <= summary["gain_over_baseline"] <= interval["high"])
    else:
        sys.exit(f"unknown check {name}")
    if not ok:
        sys.exit(f"check {check} failed; summary: {json.dumps(summary, indent=1)[:3000]}")
    print(f"ok: {check}")
