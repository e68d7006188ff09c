#!/usr/bin/python3
"""check_launcher_failure.py FLOTILLA WORKDIR — a launcher that fails is not charged to the
candidate (issue 34: crashes that stick).

On the mpi backend with OMPI_MCA_btl=bogus, every mpirun fails at MPI_Init, so every task is lost
before it reports. Before, the baseline's repeats were recorded as its own failure after three
attempts, and the same command run again with a working launcher stopped in 0.0 s ("the baseline
failed to explore"). Now the run stops naming the launcher, records nothing for the task, and the
same command with the launcher fixed resumes and finishes."""
import json
import os
import shutil
import subprocess
import sys

flotilla, work = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
ini = os.path.join(work, "lost.ini")
with open(ini, "w") as f:
    f.write(f"""[campaign]
name = lost
seed = 1
results = {work}/lost.h5
workdir = {work}
[intent]
objective = rate
baseline = x=1
[space]
param = x: int: 1..3
[explore]
command = sh -c "echo flotilla-metric: rate={{x}}"
repeats = 2
[search]
strategy = grid
budget = 2
[resources]
backend = mpi
ranks = 3
""")


def fail(what, p=None):
    sys.exit(f"FAIL: {what}" + (f"\nexit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}" if p else ""))


broken = dict(os.environ, OMPI_MCA_btl="bogus")
p = subprocess.run([flotilla, "run", ini, "--no-live"], capture_output=True, text=True, timeout=240, env=broken)
if p.returncode != 1 or "The launcher fails, not the candidate" not in p.stderr or "was lost 3 times" not in p.stderr:
    fail("the run stops naming the launcher, after 3 attempts", p)
print("ok: the run stops: the launcher fails, not the candidate")
s = json.loads(subprocess.run([flotilla, "results", "summary", f"{work}/lost.h5", "--json"], check=True,
                              capture_output=True, text=True).stdout)
if s["progress"]["trials"] != 0:
    fail(f"nothing is recorded for the lost tasks: {s}")
print("ok: nothing is recorded for the lost tasks")
p = subprocess.run([flotilla, "run", ini, "--no-live"], capture_output=True, text=True, timeout=240)
if p.returncode != 0:
    fail("the same command with a working launcher resumes and finishes", p)
s = json.loads(subprocess.run([flotilla, "results", "summary", f"{work}/lost.h5", "--json"], check=True,
                              capture_output=True, text=True).stdout)
if (s.get("best") or {}).get("config") != "x=3":
    fail(f"the winner is x=3: {s.get('best')}", p)
print("ok: resumed with the launcher fixed, the campaign finishes with x=3")
