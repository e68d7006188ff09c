#!/usr/bin/python3
"""check_baseline_failure.py FLOTILLA ROLLBACK.INI WORKDIR — a broken baseline ends the campaign.

rollback.ini's verification fails for x > 6 and its explore command prints x as the objective.
1. baseline x=8: explored, rolled back, and the campaign stops at once with exit 3 and the
   baseline's reason; nothing else is proposed.
2. an explore command that fails: the baseline fails to explore; the same stop.
3. intent.on_baseline_failure = continue: the search goes on past the rolled-back baseline.
4. resuming the stopped campaign of 1 stops again, with no task run again."""
import json
import os
import shutil
import subprocess
import sys

flotilla, ini, work = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(name, *overrides):
    h5 = os.path.join(work, name + ".h5")
    p = subprocess.run([flotilla, "run", ini, f"--campaign.results={h5}", "--no-live", *overrides],
                       capture_output=True, text=True, timeout=100)
    summary = json.loads(subprocess.run([flotilla, "results", "summary", h5, "--json"], check=True,
                                        capture_output=True, text=True).stdout)
    return p, summary


def expect(ok, what, p):
    if not ok:
        sys.exit(f"FAIL: {what}\nexit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    print(f"ok: {what}")


p, s = run("verify", "--intent.baseline=x=8 y=a")
expect(p.returncode == 3, "a rolled-back baseline exits 3", p)
expect("stopped: the baseline (x=8 y=a) failed verification: shard 0/3: exit code 1" in p.stdout,
       "the report names the baseline and its failing shard", p)
expect("intent.on_baseline_failure = continue" in p.stdout, "the report says how to search anyway", p)
expect(s["progress"]["candidates"] == 1, "nothing but the baseline was proposed", p)
trials = s["progress"]["trials"]

p, s = run("verify", "--intent.baseline=x=8 y=a")
expect(p.returncode == 3 and "failed verification" in p.stdout, "a resume stops again", p)
expect(s["progress"]["candidates"] == 1 and s["progress"]["trials"] == trials, "and runs nothing again", p)

p, s = run("explore", "--intent.baseline=x=2 y=a", "--explore.command=sh -c 'echo no such tool >&2; exit 127' {x} {y}")
expect(p.returncode == 3, "a baseline that fails to explore exits 3", p)
expect("stopped: the baseline (x=2 y=a) failed to explore: repeat 0: exit code 127" in p.stdout,
       "the report names the baseline's explore failure", p)
expect(s["progress"]["candidates"] == 1, "nothing but the baseline was proposed", p)

p, s = run("continue", "--intent.baseline=x=8 y=a", "--intent.on_baseline_failure=continue", "--search.budget=4")
expect(p.returncode in (0, 3) and "budget of 4 candidates spent" in p.stdout,
       "on_baseline_failure = continue spends the budget", p)
expect(s["progress"]["candidates"] == 5, "the baseline and 4 candidates", p)

p = subprocess.run([flotilla, "run", ini, "--no-live", "--intent.on_baseline_failure=maybe",
                    f"--campaign.results={work}/bad.h5"], capture_output=True, text=True)
expect(p.returncode == 1 and "[intent] on_baseline_failure" in p.stderr and "stop or continue" in p.stderr,
       "a bad value is an error naming the key", p)
