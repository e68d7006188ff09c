#!/usr/bin/python3
"""Hostile input end to end, each a finding that was reproduced by hand before it was fixed.

usage: check_hostile_inputs.py FLOTILLA WORK

  - a task printing {"metrics": {"other": 1}, "note": 1e999} fails that trial with the reason;
    the campaign completes, resumes without aborting, and on the mpi backend the batch's healthy
    tasks are recorded ok;
  - invalid UTF-8 in a task's output: `results summary --json` and `results export --format
    json` still print valid JSON (the bytes replaced), and h5py's documented reading works;
  - `#` in a value stays in it: `--label=#1` reaches the command;
  - `results export` to a full device (/dev/full) exits 1, naming the cause;
  - a files glob matching a name with a newline is refused, naming the key;
  - under umask 000 the results file and the campaign's folders are not writable by others;
  - a results file with 64 damaged bytes (30 seeded places) never hangs, never changes, and
    reads either exactly as before or fails naming the damage; a FIFO as the results file is
    refused at once;
  - a task's setsid child outlives a SIGKILLed `flotilla run`; the next run of the campaign
    kills it and says so;
  - `flotilla cancel` stops a live local run: exit 4, nothing resubmitted, the stop request gone;
  - a task printing 100,000 distinct metric names (issue 32: 18.8 s to parse, and `results
    export` took 6 minutes) fails its trial at the 10,000-name cap, naming it, and the export
    of the file has at most 10,000 metric columns (a 60 s limit guards against a hang).
"""
import hashlib
import signal
import time
import json
import os
import random
import stat
import subprocess
import sys

import h5py

FLOTILLA, WORK = sys.argv[1:3]
ENV = dict(os.environ, PATH=os.path.dirname(FLOTILLA) + ":" + os.environ.get("PATH", ""),
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
os.makedirs(WORK, exist_ok=True)


def check(ok, what):
    if not ok:
        sys.exit(f"FAILED: {what}")


def ini(name, command, extra=""):
    path = os.path.join(WORK, f"{name}.ini")
    with open(path, "w") as f:
        f.write(f"""[campaign]
name = {name}
results = {os.path.join(WORK, name + '.h5')}
[intent]
objective = score
[space]
param = x: int: 1..4
[explore]
command = {command}
repeats = 1
[search]
strategy = grid
budget = 4
batch = 4
{extra}""")
    h5 = os.path.join(WORK, name + ".h5")
    for stale in (h5,):
        if os.path.exists(stale):
            os.remove(stale)
    return path, h5


def flotilla(*args, expect=None, **kw):
    p = subprocess.run([FLOTILLA, *args], env=ENV, capture_output=True, text=True, errors="replace", **kw)
    if expect is not None and p.returncode not in ((expect,) if isinstance(expect, int) else expect):
        sys.exit(f"flotilla {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def summary(h5):
    return json.loads(flotilla("results", "summary", h5, "--json", expect=0).stdout)


# 1. One odd JSON line (x = 2) fails its own trial only, on the local and the mpi backend.
odd = ("sh -c 'if [ $0 = 2 ]; then echo \"{{\\\"metrics\\\": {{\\\"other\\\": 1}}, \\\"note\\\": 1e999}}\"; fi; "
       "echo flotilla-metric: score=$0' {x}")
for backend in ("local", "mpi"):
    path, h5 = ini(f"odd_json_{backend}", odd, f"[resources]\nbackend = {backend}\nranks = 3\n")
    flotilla("run", path, "--no-live", expect=0)
    s = summary(h5)
    failed = [c for c in s["top"] + s["rolled_back"] if c["status"] == "explore_failed"]
    check(s["progress"]["explore_failed"] == 1 and s["progress"]["explored"] == 3,
          f"{backend}: one candidate fails, the rest are explored: {s['progress']}")
    reasons = s["failures_by_reason"]
    check(any("metrics line cannot be read as JSON: number overflow parsing '1e999'" in r for r in reasons),
          f"{backend}: the reason names the line: {reasons}")
    again = flotilla("run", path, "--no-live", expect=0)
    check("resuming" in again.stderr, f"{backend}: resumes")

# 2. Invalid UTF-8 in the output tail and the reason.
path, h5 = ini("bad_utf8", "sh -c 'printf \"caf\\351 \\377\\n\"; echo flotilla-metric: score=$0; exit $(($0 % 2))' {x}")
flotilla("run", path, "--no-live", expect=(0, 3))
s = summary(h5)
check(s["progress"]["candidates"] == 4, "invalid UTF-8: summary JSON parses")
exported = flotilla("results", "export", h5, "--table", "trials", "--format", "json", expect=0).stdout
json.loads(exported)
with h5py.File(h5, "r", swmr=True) as f:
    tails = [t["output_tail"].decode("utf-8", "replace") for t in f["trials"][:]]
check(any("\ufffd" in t for t in tails), "h5py with errors='replace' reads the tails")

# 3. '#' inside a value stays in the command.
path, h5 = ini("hash", "sh -c 'echo \"label=$1\"; echo flotilla-metric: score=$0' {x} --label=#1")
flotilla("run", path, "--no-live", expect=0)
with h5py.File(h5, "r", swmr=True) as f:
    tails = [t["output_tail"].decode() for t in f["trials"][:]]
check(all("label=--label=#1" in t for t in tails), f"'#1' reached the command: {tails[:1]}")

# 4. Output to a full device is a failure.
with open("/dev/full", "w") as full:
    p = subprocess.run([FLOTILLA, "results", "export", h5], env=ENV, stdout=full, stderr=subprocess.PIPE, text=True)
check(p.returncode == 1 and "cannot write to standard output: No space left on device" in p.stderr,
      f"/dev/full: exit {p.returncode}, {p.stderr}")

# 5. A file name with a newline in a files suite's glob.
corpus = os.path.join(WORK, "nl_corpus")
os.makedirs(corpus, exist_ok=True)
open(os.path.join(corpus, "a.test"), "w").close()
open(os.path.join(corpus, "b\nc.test"), "w").close()
path, h5 = ini("newline", "sh -c 'echo flotilla-metric: score=$0' {x}",
               "[evaluate]\ncommand = check {files} {report}\nsuite = files\nfiles = nl_corpus/*.test\n")
p = flotilla("run", path, "--no-live", cwd=WORK)
check(p.returncode == 1 and "[evaluate] files: 'nl_corpus/*.test' matches a file whose name holds a line break" in
      p.stderr, f"newline in a file name: {p.returncode} {p.stderr}")

# 6. umask 000: nothing flotilla makes is writable by others.
path, h5 = ini("umask", "sh -c 'echo flotilla-metric: score=$0' {x}")
flotilla("run", path, "--no-live", expect=0, preexec_fn=lambda: os.umask(0))
mode = stat.S_IMODE(os.stat(h5).st_mode)
check(mode & 0o022 == 0, f"results file mode {oct(mode)} under umask 000")
# 7. Damaged bytes: read exactly as before, or an error; never a hang, never a changed file.
clean_summary = flotilla("results", "summary", h5, "--json", expect=0).stdout
clean_trials = flotilla("results", "export", h5, "--table", "trials", "--format", "json", expect=0).stdout
data = open(h5, "rb").read()
rng = random.Random(7)
damaged = os.path.join(WORK, "damaged.h5")
outcomes = {"same": 0, "refused": 0}
for _ in range(30):
    at = rng.randrange(64, len(data) - 64)
    bad = bytearray(data)
    bad[at:at + 64] = bytes(rng.randrange(256) for _ in range(64))
    with open(damaged, "wb") as f:
        f.write(bad)
    digest = hashlib.sha256(bad).hexdigest()
    a = flotilla("results", "summary", damaged, "--json", timeout=30)
    b = flotilla("results", "export", damaged, "--table", "trials", "--format", "json", timeout=30)
    if a.returncode == 0 and b.returncode == 0:
        check(a.stdout == clean_summary and b.stdout == clean_trials, f"damage at {at} read as other values")
        outcomes["same"] += 1
    else:
        check({a.returncode, b.returncode} <= {0, 1} and "damaged.h5" in a.stderr + b.stderr,
              f"damage at {at}: {a.returncode} {a.stderr} {b.stderr}")
        outcomes["refused"] += 1
    r = flotilla("run", path, f"--campaign.results={damaged}", "--no-live", timeout=60)
    check(hashlib.sha256(open(damaged, "rb").read()).hexdigest() == digest or r.returncode == 0,
          f"damage at {at}: a failed resume changed the file")
check(outcomes["refused"] > 0, f"no damage was detected: {outcomes}")
print("damaged files:", outcomes)
fifo = os.path.join(WORK, "fifo.h5")
if not os.path.exists(fifo):
    os.mkfifo(fifo)
p = flotilla("results", "summary", fifo, timeout=10)
check(p.returncode == 1 and "not a regular file (a FIFO, socket or device)" in p.stderr, f"fifo: {p.stderr}")
p = flotilla("run", path, f"--campaign.results={fifo}", "--no-live", timeout=10)
check(p.returncode == 1 and "not a regular file" in p.stderr, f"fifo run: {p.stderr}")
# 8. A descendant of a task that outlived a SIGKILLed scheduler is ended by the next run.
mark, pidfile = os.path.join(WORK, "daemon.mark"), os.path.join(WORK, "daemon.pid")
for stale in (mark, pidfile):
    if os.path.exists(stale):
        os.remove(stale)
daemon = (f"sh -c 'if [ $0 = 1 ] && [ ! -e {mark} ]; then touch {mark}; setsid sleep 300 </dev/null >/dev/null 2>&1 & "
          f"echo $! > {pidfile}; sleep 30; fi; echo flotilla-metric: score=$0' {{x}}")
path, h5 = ini("daemon", daemon)
run = subprocess.Popen([FLOTILLA, "run", path, "--no-live"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(200):
    if os.path.exists(pidfile) and open(pidfile).read().strip():
        break
    time.sleep(0.05)
leftover = int(open(pidfile).read())
run.send_signal(signal.SIGKILL)
run.wait()
check(os.path.exists(f"/proc/{leftover}"), "the setsid child should have outlived the killed scheduler")
again = flotilla("run", path, "--no-live", expect=0)
# The setsid child, and the task's own `sleep 30`, whose parent died with the scheduler.
check(f"{leftover} sleep" in again.stderr and "that an earlier, killed run of this campaign left running" in again.stderr,
      f"leftover not reported: {again.stderr}")
time.sleep(0.2)
state = open(f"/proc/{leftover}/stat").read().rsplit(")", 1)[1].split()[0] if os.path.exists(f"/proc/{leftover}") else "gone"
check(state in ("gone", "Z", "X"), f"the leftover {leftover} still runs: {state}")
# 9. `flotilla cancel` on a live local run.
path, h5 = ini("cancel", "sh -c 'sleep 0.5; echo flotilla-metric: score=$0' {x}")
run = subprocess.Popen([FLOTILLA, "run", path, "--no-live"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
for _ in range(100):
    if os.path.exists(h5):
        break
    time.sleep(0.05)
time.sleep(0.3)
c = flotilla("cancel", path, expect=0)
check("asked the running campaign to stop" in c.stdout, f"cancel: {c.stdout}")
_, err = run.communicate(timeout=60)
check(run.returncode == 4 and "cancelled by `flotilla cancel`" in err, f"cancel: exit {run.returncode} {err}")
check(not os.path.exists(h5 + ".stop"), "the stop request was left")
# The campaign says it was cancelled (not "crashed or killed"), in results summary and in status.
stopped = summary(h5)["run"]
check(stopped["state"] == "cancelled" and stopped["note"].startswith(
    "incomplete: the campaign was stopped by `flotilla cancel`"), f"cancel: run {stopped}")
status = flotilla("status", path, expect=0).stdout
check("\nrun        cancelled · incomplete: the campaign was stopped by `flotilla cancel`" in status, f"status: {status}")
flotilla("run", path, "--no-live", expect=0)
check("\nrun        finished\n" in flotilla("status", path, expect=0).stdout, "status: finished")
# 10. 100,000 distinct metric names (x = 2): that trial fails at the cap, the others are explored.
names = "sh -c 'if [ $0 = 2 ]; then seq -f \"flotilla-metric: m%g=1\" 100000; fi; echo flotilla-metric: score=$0' {x}"
path, h5 = ini("many_names", names)
flotilla("run", path, "--no-live", expect=0, timeout=120)
s = summary(h5)
check(s["progress"]["explore_failed"] == 1 and s["progress"]["explored"] == 3, f"many names: {s['progress']}")
check(any("'m10001': a trial may report at most 10000 distinct metric names" in r for r in s["failures_by_reason"]),
      f"many names: the reason names the cap: {s['failures_by_reason']}")
exported = flotilla("results", "export", h5, "--table", "trials", "--format", "json", expect=0, timeout=60).stdout
columns = [c for c in json.loads(exported)["columns"] if c.startswith("metric.")]
# m1 .. m10000 of the failed trial, and the others' score.
check(len(columns) == 10001 and "metric.score" in columns, f"many names: {len(columns)} metric columns exported")
print("ok")
