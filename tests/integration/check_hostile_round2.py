#!/usr/bin/python3
"""Hostile input, round two, end to end (docs/verification.md, "Hostile input"): each check
injects a finding that was reproduced by hand before it was fixed, and fails on the code before
the fix.

usage: check_hostile_round2.py FLOTILLA WORK

  1. mpi backend: the job folder is a fresh mode-0700 folder in the campaign's RESULTS.jobs, never
     /tmp/flotilla-mpi-PID-N; none is left behind;
  4. two campaigns on one build.dir: the second is refused, naming the first; a resume after the
     sources named in build.inputs changed is refused, naming build.inputs;
  5. a resume with another explore.env, evaluate.env or campaign.workdir is refused, naming it;
  6. `pass_when = errors = 3` and `constraint = x = 3` are refused, naming the key;
  7. a candidate fast only right after the baseline ran is reported unreliable, not confirmed; one
     that caches its answer in $TMPDIR is not confirmed (each run of a pair has its own TMPDIR);
 13. a task's descendant that clears the environment (env -i) and calls setsid ends with the task;
     the containment in force is recorded;
 14. `**` follows symlinked folders (once each) and names a matching dangling link; an @LIST
     FIFO is read; of two first runs at the same moment the loser says why; a resume right
     after a SIGKILL is not refused as "open for writing by another process".
"""
import threading
import glob
import json
import os
import stat
import subprocess
import sys
import time

import h5py

FLOTILLA, WORK = sys.argv[1:3]
BIN = os.path.dirname(FLOTILLA)
ENV = dict(os.environ, PATH=BIN + ":" + os.environ.get("PATH", ""),
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,tcp")
os.makedirs(WORK, exist_ok=True)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAILED: {what}", flush=True)


def write(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def fresh(*paths):
    for p in paths:
        for q in glob.glob(p):
            subprocess.run(["rm", "-rf", q], check=True)


def ini(name, body):
    h5 = os.path.join(WORK, name + ".h5")
    fresh(h5, h5 + ".*")
    return write(name + ".ini", f"[campaign]\nname = {name}\nresults = {h5}\n" + body), h5


def flotilla(*args, cwd=WORK):
    return subprocess.run([FLOTILLA, *args], env=ENV, capture_output=True, text=True, errors="replace", cwd=cwd)


def summary(h5):
    return json.loads(flotilla("results", "summary", h5, "--json").stdout)


SCORE = "[intent]\nobjective = score\n[space]\nparam = x: int: 1..3\n[search]\nstrategy = grid\nbudget = 3\nbatch = 3\n"

# 1. The mpi backend's folder: fresh, private, in the campaign's own folder, removed afterwards.
before = set(glob.glob("/tmp/flotilla-mpi-*"))
path, h5 = ini("mpi_private", SCORE + "[explore]\ncommand = sh -c 'ls -ld \"$(dirname \"$1\")\" >/dev/null; "
               "echo flotilla-metric: score={x}' x {x}\nrepeats = 1\n[resources]\nbackend = mpi\nranks = 2\n")
# While it runs, the folder is looked at from outside.
proc = subprocess.Popen([FLOTILLA, "run", path, "--no-live"], env=ENV, cwd=WORK, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
seen = set()
while proc.poll() is None:
    for d in glob.glob(h5 + ".jobs/flotilla-mpi-*"):
        seen.add((d, stat.S_IMODE(os.lstat(d).st_mode)))
    time.sleep(0.01)
out, err = proc.communicate()
check(proc.returncode == 0, f"mpi campaign: exit {proc.returncode}: {err}")
check(seen and all(mode == 0o700 for _, mode in seen), f"mpi job folders seen, all mode 0700: {seen}")
check(set(glob.glob("/tmp/flotilla-mpi-*")) <= before, "no /tmp/flotilla-mpi-* folder was made")
check(not glob.glob(h5 + ".jobs/flotilla-mpi-*"), "the mpi folder is removed when the run ends")

# 4. One build folder, two campaigns; sources that changed under a resume.
src = os.path.join(WORK, "build_src")
os.makedirs(src, exist_ok=True)
write("build_src/value.txt", "10\n")
shared = os.path.join(WORK, "shared_builds")
fresh(shared)
build = ("[intent]\nobjective = score\n[space]\nparam = x: int: 1..2\n"
         f"[build]\ncommand = cp build_src/value.txt {{build_dir}}/value.txt\ndir = {shared}\ninputs = build_src\n"
         "[explore]\ncommand = sh -c 'echo flotilla-metric: score=$(cat \"$0\")' {build_dir}/value.txt\nrepeats = 1\n"
         "[search]\nstrategy = grid\nbudget = 2\n")
path_a, h5_a = ini("build_a", build)
path_b, h5_b = ini("build_b", build)
p = flotilla("run", path_a, "--no-live")
check(p.returncode == 0, f"campaign A on the shared build folder: {p.returncode} {p.stderr}")
p = flotilla("run", path_b, "--no-live")
check(p.returncode == 1 and "belongs to another campaign (" + h5_a + ")" in p.stderr and "[build] dir" in p.stderr,
      f"campaign B on A's build folder is refused, naming A: {p.returncode} {p.stderr}")
write("build_src/value.txt", "99\n")
p = flotilla("run", path_a, "--no-live", "--search.budget=2")
check(p.returncode == 1 and "build.inputs changed from" in p.stderr,
      f"a resume over changed sources is refused, naming build.inputs: {p.returncode} {p.stderr}")
write("build_src/value.txt", "10\n")

# 5. A resume with another environment or working folder.
env_body = SCORE + "[explore]\ncommand = sh -c 'echo flotilla-metric: score=$((SCALE * $0))' {x}\nenv = SCALE=1\nrepeats = 1\n"
path, h5 = ini("env_resume", env_body)
p = flotilla("run", path, "--no-live", "--search.budget=1")
check(p.returncode == 0, f"env campaign: {p.returncode} {p.stderr}")
for override, key in (("--explore.env=SCALE=100", "explore.env"), ("--evaluate.env=MODE=x", "evaluate.env"),
                      ("--campaign.workdir=/", "campaign.workdir")):
    p = flotilla("run", path, "--no-live", override)
    check(p.returncode == 1 and "recorded by a different campaign" in p.stderr and key in p.stderr,
          f"a resume with {override} is refused, naming {key}: {p.returncode} {p.stderr}")
with h5py.File(h5, "r") as f:
    scores = sorted(float(t["objective"]) for t in f["trials"][:])
check(scores and set(scores) == {1.0}, f"nothing of another environment was recorded: {scores}")

# 6. Assignment in expressions.
path, h5 = ini("assign_constraint", SCORE.replace("[search]", "constraint = x = 3\n[search]") +
               "[explore]\ncommand = echo flotilla-metric: score={x}\n")
p = flotilla("run", path, "--no-live")
check(p.returncode == 1 and "constraint" in p.stderr and "assigns a value; compare with ==" in p.stderr,
      f"constraint = x = 3 is refused: {p.returncode} {p.stderr}")
corpus = os.path.join(WORK, "assign_corpus")
os.makedirs(corpus, exist_ok=True)
write("assign_corpus/a.t", "")
path, h5 = ini("assign_pass_when", SCORE + "[explore]\ncommand = echo flotilla-metric: score={x}\n"
               "[evaluate]\ncommand = sh -c 'echo 7 errors' {file}\nsuite = per_file\nfiles = assign_corpus/*.t\n"
               "summary = (?<errors>\\d+) errors\npass_when = errors = 3\n")
p = flotilla("run", path, "--no-live")
check(p.returncode == 1 and "pass_when" in p.stderr and "assigns a value" in p.stderr,
      f"pass_when = errors = 3 is refused: {p.returncode} {p.stderr}")

# 7. Confirmation that a benchmark could fool.
# Fast only right after the baseline ran (its runs leave their name in LAST); exploration alone
# is fast, so the candidate reaches confirmation.
last = os.path.join(WORK, "last_run")
carry = write("carry.sh", f"""#!/bin/sh
last=$(cat {last} 2>/dev/null)
if [ "$1" = base ]; then echo base > {last}; echo flotilla-metric: rate=1.0; exit 0; fi
echo cand > {last}
case "$TMPDIR" in *flotilla-pairs-run*) ;; *) echo flotilla-metric: rate=2.9; exit 0;; esac
if [ "$last" = base ]; then echo flotilla-metric: rate=2.9; else echo flotilla-metric: rate=0.9; fi
""")
os.chmod(carry, 0o755)
# Caches its answer in $TMPDIR: slow the first time, fast after.
cache = write("cache.sh", """#!/bin/sh
if [ "$1" = base ]; then echo flotilla-metric: rate=1.0; exit 0; fi
if [ -e "${TMPDIR:-/tmp}/flotilla-test-cached-answer" ]; then echo flotilla-metric: rate=2.99; exit 0; fi
touch "${TMPDIR:-/tmp}/flotilla-test-cached-answer"; echo flotilla-metric: rate=1.0
""")
os.chmod(cache, 0o755)
shared_tmp = os.path.join(WORK, "shared_tmp")
fresh(shared_tmp)
os.makedirs(shared_tmp)
for name, script in (("carry_over", carry), ("tmp_cache", cache)):
    path, h5 = ini(name, f"[intent]\nobjective = rate\nbaseline = variant=base\n[space]\nparam = variant: enum: base,cand\n"
                   f"[explore]\ncommand = {script} {{variant}}\nrepeats = 3\n[search]\nstrategy = grid\nbudget = 1\n"
                   "[resources]\nslots = 1\n")
    env = dict(ENV, TMPDIR=shared_tmp)
    p = subprocess.run([FLOTILLA, "run", path, "--no-live"], env=env, capture_output=True, text=True, cwd=WORK)
    s = summary(h5)
    cand = [c for c in s["top"] if c["config"] == "variant=cand"]
    verdict = cand[0].get("confirmation", {}) if cand else {}
    check(s.get("best") is None or s["best"]["config"] != "variant=cand",
          f"{name}: the candidate is not the winner: {s.get('best')}\n{p.stdout}")
    if name == "carry_over":
        check("unreliable" in p.stdout and "order effect" in p.stdout,
              f"carry_over: the report says unreliable: order effect:\n{p.stdout}")
    else:
        check(verdict.get("verdict") in ("no_difference", "slower"), f"tmp_cache: not confirmed: {verdict}\n{p.stdout}")

# 13. Containment: env -i + setsid inside a campaign's task.
pidfile = os.path.join(WORK, "escaped.pid")
fresh(pidfile)
path, h5 = ini("contained", "[intent]\nobjective = score\n[space]\nparam = x: int: 1..1\n[search]\nstrategy = grid\n"
               f"budget = 1\n[explore]\ncommand = sh -c 'env -i setsid sh -c \"echo \\$\\$ > {pidfile}.tmp; mv {pidfile}.tmp "
               f"{pidfile}; exec sleep 300\" </dev/null >/dev/null 2>&1 & while [ ! -s {pidfile} ]; do sleep 0.01; done; "
               "echo flotilla-metric: score=1'\nrepeats = 1\n")
p = flotilla("run", path, "--no-live")
check(p.returncode == 0, f"contained: {p.returncode} {p.stderr}")
escaped = int(open(pidfile).read())
state = "gone"
if os.path.exists(f"/proc/{escaped}/stat"):
    state = open(f"/proc/{escaped}/stat").read().rsplit(")", 1)[1].split()[0]
if state not in ("gone", "Z", "X"):
    os.kill(escaped, 9)
check(state in ("gone", "Z", "X"), f"the env -i setsid descendant {escaped} outlived its task: {state}")
with h5py.File(h5, "r") as f:
    kinds = [e["kind"].decode() for e in f["events"][:]]
    details = [e["detail"].decode() for e in f["events"][:]]
check("containment" in kinds, f"the containment in force is recorded: {kinds}")
check(any(f"({escaped} " in d and "killed" in d for d in details), f"the killed leftover is named: {details}")

# 14. Smaller findings.
tree = os.path.join(WORK, "tree")
other = os.path.join(WORK, "tree_other")
fresh(tree, other)
os.makedirs(os.path.join(tree, "real"))
os.makedirs(other)
write("tree/real/a.t", "")
write("tree_other/b.t", "")
os.symlink(other, os.path.join(tree, "linked"))          # a symlinked folder
os.symlink(tree, os.path.join(tree, "real", "loop"))     # a link back up the tree
os.symlink("/nonexistent/c.t", os.path.join(tree, "real", "dead.t"))
per_file = ("[intent]\nobjective = score\n[space]\nparam = x: int: 1..1\n[search]\nstrategy = grid\nbudget = 1\n"
            "[explore]\ncommand = echo flotilla-metric: score=1\nrepeats = 1\n"
            "[evaluate]\ncommand = sh -c 'exit 0' {file}\nsuite = per_file\nfiles = FILES\n")
path, h5 = ini("glob_links", per_file.replace("FILES", "tree/**/*.t"))
p = flotilla("run", path, "--no-live")
check(p.returncode == 1 and "'tree/real/dead.t', a link to nothing" in p.stderr,
      f"a dangling link that matches is named: {p.returncode} {p.stderr}")
os.remove(os.path.join(tree, "real", "dead.t"))
p = flotilla("run", path, "--no-live")
check(p.returncode == 0, f"glob through links: {p.returncode} {p.stderr}")
with h5py.File(h5, "r") as f:
    names = sorted(set(bytes(f["tests/names"][:]).decode().split("\n")) - {""})
check(len(names) == 2 and any(n.endswith("linked/b.t") for n in names), f"the linked folder's file counts, once: {names}")

fifo = os.path.join(WORK, "list.fifo")
fresh(fifo)
os.mkfifo(fifo)
feeder = threading.Thread(target=lambda: open(fifo, "w").write("tree/real/a.t\n"), daemon=True)
feeder.start()
path, h5 = ini("list_fifo", per_file.replace("FILES", "@list.fifo"))
p = flotilla("run", path, "--no-live")
check(p.returncode == 0, f"an @LIST FIFO is read: {p.returncode} {p.stderr}")

path, h5 = ini("twins", SCORE + "[explore]\ncommand = sh -c 'sleep 0.2; echo flotilla-metric: score=1'\nrepeats = 1\n")
twins = [subprocess.Popen([FLOTILLA, "run", path, "--no-live"], env=ENV, cwd=WORK, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) for _ in range(2)]
outcomes = [(t.wait(), t.communicate()[1]) for t in twins]
losers = [err for rc, err in outcomes if rc != 0]
check(len(losers) <= 1, f"one of two simultaneous first runs goes on: {outcomes}")
for err in losers:
    check("another run of this campaign" in err or "another `flotilla run`" in err,
          f"the loser of two simultaneous first runs says why: {err}")

path, h5 = ini("quick_resume", SCORE.replace("budget = 3", "budget = 30").replace("1..3", "1..30") +
               "[explore]\ncommand = sh -c 'sleep 0.1; echo flotilla-metric: score=1'\nrepeats = 1\n")
refused = []
for attempt in range(5):
    run = subprocess.Popen([FLOTILLA, "run", path, "--no-live"], env=ENV, cwd=WORK, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.6)
    run.kill()
    run.wait()
    p = flotilla("run", path, "--no-live", "--search.budget=1")
    if "is open for writing" in p.stderr:
        refused.append(p.stderr)
check(not refused, f"a resume right after a SIGKILL is not refused: {refused[:1]}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("hostile input, round two: every check passed")
