#!/usr/bin/python3
"""Proposers end to end (docs/propose.md).

usage: check_propose.py FLOTILLA WORK [--backend local|slurm] [--partition P]

  1. configs/propose.ini: the scripted proposer's four patches: interchange verified and confirmed,
     skip_half_k rolled back, no_such_helper build_failed with the compiler's error, row_pointers
     built on interchange; the winner is the chain interchange -> row_pointers, confirmed; the
     summary shows the lineage, `results proposals` the journal (text and JSON), --patch a patch.
  2. A hostile proposer, one bad answer a round: it exits non-zero, times out, writes nothing,
     writes a diff that does not apply, a path with '..', an absolute path, a symlink as its
     patch, a patch through a symlink of the tree, a binary patch, a huge one, writes into the
     tree it was given to read, repeats an earlier proposal. Each is refused with its reason
     (recorded, and shown in the next context), the campaign goes on and ends on its budget,
     and the good proposals among them are verified.
  4. configs/tdd.ini: the pass count climbs 10, 18, 22, 26, 30, 33, 37, 40 files round by round,
     each fix built on the last; compare_broken (three more files, sub_5 broken) rolled back.
  5. The coding-agent adapter (flotilla-propose-agent) with a stand-in agent: the context rendered
     as a prompt, the agent's edits in a scratch copy collected as a patch, accepted, verified,
     confirmed faster, its last words the rationale.
  6. configs/decode_propose.ini: a staged intent whose stages the proposer serves: each stage's
     context names the bottleneck the profile found, the proposer answers with that component's
     patch, the winner's tree is the next stage's source (profile, propose, verify, re-profile).
  3. Kills: SIGKILL while the proposer runs and while the round runs, then the same command:
     no round is asked twice of a proposer, no accepted proposal is lost or gets two candidates,
     and the resumed campaign ends as the uninterrupted one.
"""
import glob
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

import h5py

# The examples' crashing candidates must not leave core files in the repository (their tasks
# run from its root); children, and Slurm's tasks through its rlimit propagation, inherit this.
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

FLOTILLA, WORK = sys.argv[1:3]
BACKEND = "local"
PARTITION = None
if "--backend" in sys.argv:
    BACKEND = sys.argv[sys.argv.index("--backend") + 1]
if "--partition" in sys.argv:
    PARTITION = sys.argv[sys.argv.index("--partition") + 1]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PATH=os.path.dirname(FLOTILLA) + ":" + os.environ.get("PATH", ""))
os.makedirs(WORK, exist_ok=True)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAILED: {what}", flush=True)


def backend_args():
    if BACKEND == "local":
        return []
    args = ["--resources.backend=" + BACKEND]
    if PARTITION:
        args += ["--resources.partition=" + PARTITION]
    if BACKEND == "slurm":
        # Slurm's tasks do not inherit this process's RLIMIT_CORE (set above): the job scripts
        # lower it themselves, so a crashing candidate leaves no core file in the repository.
        args += ["--resources.setup=ulimit -c 0"]
    return args


def flotilla(*args, cwd=ROOT, timeout=600):
    return subprocess.run([FLOTILLA, *args], env=ENV, capture_output=True, text=True, errors="replace", cwd=cwd,
                          timeout=timeout)


def journal(h5):
    with h5py.File(h5, "r", swmr=True) as f:
        rows = f["proposals"][:]
        status = {v: k for k, v in h5py.check_enum_dtype(rows.dtype["status"]).items()}
        cands = f["candidates"][:]
    props = [{"id": i, "round": int(r["round"]), "proposer": int(r["proposer"]), "name": r["name"].decode(),
              "status": status[int(r["status"])], "reason": r["reason"].decode(), "parent": int(r["parent"])}
             for i, r in enumerate(rows)]
    origins = [c["origin"].decode() for c in cands]
    return props, origins


def invariants(h5, what):
    """Every accepted proposal has exactly one candidate; no round answered twice by a proposer."""
    props, origins = journal(h5)
    for p in props:
        if p["status"] == "accepted":
            n = origins.count(f"proposal {p['id']}")
            check(n == 1, f"{what}: accepted proposal {p['id']} ({p['name']}) has {n} candidates")
    answered = [(p["round"], p["proposer"]) for p in props if p["status"] == "answered"]
    check(len(answered) == len(set(answered)), f"{what}: a round was answered twice: {answered}")
    for o in origins:
        if o.startswith("proposal "):
            i = int(o.split()[1])
            check(i < len(props) and props[i]["status"] == "accepted", f"{what}: candidate of a non-accepted proposal {i}")
    return props, origins


# 1. The example campaign.
h5 = os.path.join(WORK, "propose.h5")
for stale in glob.glob(h5 + "*"):
    shutil.rmtree(stale) if os.path.isdir(stale) else os.remove(stale)
p = flotilla("run", "configs/propose.ini", f"--campaign.results={h5}", "--no-live", *backend_args())
check(p.returncode == 0, f"propose.ini: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
summary = json.loads(flotilla("results", "summary", h5, "--json").stdout)
best = summary["best"] or {}
check(best.get("chain") == ["interchange", "row_pointers"], f"the winner is the chain of two patches: {best}")
check((best.get("confirmation") or {}).get("verdict") == "faster", f"the winner is confirmed faster: {best}")
props, origins = invariants(h5, "propose.ini")
by_name = {p["name"]: p for p in props if p["status"] == "accepted"}
statuses = {c["proposal"]: c["status"] for c in summary["top"] + summary["rolled_back"] if c.get("proposal")}
text = flotilla("results", "summary", h5).stdout
check("lineage    baseline → interchange (" in text and "→ row_pointers (" in text, f"the lineage line:\n{text}")
check("skip_half_k opt=1  — shard 0/1: exit code 1: matmul: wrong result" in text, f"the wrong patch rolled back:\n{text}")
check("no_such_helper opt=1  — " in text and "error: ‘fused_multiply_row’ was not declared" in text,
      f"the patch that does not compile, with the compiler's error:\n{text}")
listing = flotilla("results", "proposals", h5).stdout
check("row_pointers" in listing and "verified, faster" in listing and "the winner's lineage: baseline → interchange → row_pointers"
      in listing, f"results proposals:\n{listing}")
patch = flotilla("results", "proposals", h5, "--patch", "interchange").stdout
check(patch.startswith("# interchange: ") and "+++ b/matmul.cpp" in patch, f"--patch prints it:\n{patch}")
jl = json.loads(flotilla("results", "proposals", h5, "--json").stdout)
check(any(r["name"] == "row_pointers" and r.get("candidate_status") == "verified" for r in jl["proposals"]),
      f"results proposals --json: {jl}")
check(by_name.get("row_pointers", {}).get("parent") == origins.index(f"proposal {by_name['interchange']['id']}")
      if "interchange" in by_name else False, "row_pointers was built on interchange's candidate")
# Every context flotilla wrote is valid against the schema the docs give.
import jsonschema
schema = json.load(open(os.path.join(ROOT, "docs", "propose-context.schema.json")))
for path in sorted(glob.glob(h5 + ".proposals/r*/context0.json")):
    try:
        jsonschema.validate(json.load(open(path)), schema)
    except jsonschema.ValidationError as e:
        check(False, f"{path} does not match docs/propose-context.schema.json: {e.message} at {list(e.path)}")

# 2. A hostile proposer.
tree = os.path.join(WORK, "tree")
shutil.rmtree(tree, ignore_errors=True)
os.makedirs(os.path.join(tree, "sub"))
with open(os.path.join(tree, "value.txt"), "w") as f:
    f.write("1\n")
outside = os.path.join(WORK, "outside")
os.makedirs(outside, exist_ok=True)
with open(os.path.join(outside, "value.txt"), "w") as f:
    f.write("1\n")
os.symlink(outside, os.path.join(tree, "linked"))
hostile = os.path.join(WORK, "hostile.py")
with open(hostile, "w") as f:
    f.write(r'''#!/usr/bin/env python3
import json, os, sys, time
context, out = sys.argv[1:3]
ctx = json.load(open(context))
r = ctx["round"]
good = "--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-1\n+%d\n"
modes = {1: "fail", 2: "sleep", 3: "nothing", 4: "no_apply", 5: "dotdot", 6: "absolute", 7: "symlink_file",
         8: "through_link", 9: "binary", 10: "huge", 11: "write_tree", 12: "good", 13: "repeat"}
mode = modes.get(r, "done")
def write(name, text, meta=None):
    open(os.path.join(out, name + ".patch"), "w").write(text)
    if meta: json.dump(meta, open(os.path.join(out, name + ".json"), "w"))
if mode == "fail":
    print("hostile: giving up"); sys.exit(3)
if mode == "sleep": time.sleep(60)
if mode == "no_apply": write("no_apply", "--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-7\n+8\n")
if mode == "dotdot": write("dotdot", "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-1\n+2\n")
if mode == "absolute": write("absolute", "--- /etc/hostname\n+++ /etc/hostname\n@@ -1 +1 @@\n-1\n+2\n")
if mode == "symlink_file": os.symlink("/etc/passwd", os.path.join(out, "evil.patch"))
if mode == "through_link": write("through_link", "--- a/linked/value.txt\n+++ b/linked/value.txt\n@@ -1 +1 @@\n-1\n+9\n")
if mode == "binary": open(os.path.join(out, "binary.patch"), "wb").write(b"--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-1\n+\x00\n")
if mode == "huge": write("huge", "--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-1\n+2\n" + "# padding\n" * 200000)
if mode == "write_tree":
    open(os.path.join(ctx["trees"]["best"], "value.txt"), "w").write("666\n")
    write("sneaky", good % 5)
if mode in ("good", "repeat"): write("good", good % 3, {"parent": "baseline", "rationale": "three is more than one"})
if mode == "done": open(os.path.join(out, "done"), "w").write("no more")
''')
os.chmod(hostile, 0o755)
ini = os.path.join(WORK, "hostile.ini")
with open(ini, "w") as f:
    f.write(f"""[campaign]
name = hostile
results = {os.path.join(WORK, 'hostile.h5')}
workdir = {WORK}
[intent]
objective = score
baseline = x=1
[space]
param = x: int: 1
[propose]
command = python3 {hostile} {{context}} {{out}}
tree = tree
timeout = 3s
budget = 20
[explore]
command = sh -c 'echo flotilla-metric: score=$(cat "$0")' {{tree}}/value.txt
repeats = 3
[evaluate]
command = sh -c 'test "$(cat "$0")" -lt 100' {{tree}}/value.txt
[search]
strategy = grid
budget = 0
[confirm]
enabled = false
""")
hh5 = os.path.join(WORK, "hostile.h5")
for stale in glob.glob(hh5 + "*"):
    shutil.rmtree(stale) if os.path.isdir(stale) else os.remove(stale)
p = flotilla("run", ini, "--no-live", *backend_args(), cwd=WORK)
check(p.returncode == 0, f"hostile: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
props, origins = invariants(hh5, "hostile")
reasons = {p["round"]: p["reason"] for p in props if p["status"] == "refused"}
expect = {1: "the proposer failed: exit code 3; its output ends: hostile: giving up",
          2: "the proposer failed: timed out after 3s",
          3: "the proposer wrote no proposal (NAME.patch) into {out}",
          4: "it does not apply to candidate 0's tree: it does not apply cleanly",
          5: "the path 'a/../x' leaves the tree ('..')",
          6: "the path '/etc/hostname' is absolute",
          7: "'evil.patch' is a symbolic link",
          8: "'linked/value.txt' goes through 'linked', a symbolic link",
          9: "the patch holds a NUL byte: binary content is not accepted",
          10: "more than the 1048576 a proposal file may have",
          11: "which it was given only to read",
          13: "it repeats proposal"}
for r, text in expect.items():
    check(text in reasons.get(r, ""), f"round {r}: refused with '{text}': {reasons.get(r)}")
accepted = [p for p in props if p["status"] == "accepted"]
check([p["name"] for p in accepted] == ["good"], f"only the good proposal is accepted: {accepted}")
s = json.loads(flotilla("results", "summary", hh5, "--json").stdout)
check(s["best"] and s["best"].get("proposal") == "good" and s["best"]["objective"] == 3,
      f"the good proposal is the best: {s['best']}")
check(open(os.path.join(outside, "value.txt")).read() == "1\n", "nothing outside the tree was written")
check(open(os.path.join(tree, "value.txt")).read() == "1\n", "the source tree is untouched")
ctx13 = json.load(open(os.path.join(WORK, "hostile.h5.proposals", "r13", "context0.json")))
check(any("it does not apply" in x["reason"] for x in ctx13["proposals"] if x["name"] == "no_apply"),
      "a refusal is shown in later contexts")

# 3. Kills: while the proposer runs, while the round runs; then the same command.
kh5 = os.path.join(WORK, "killed.h5")
for stale in glob.glob(kh5 + "*"):
    shutil.rmtree(stale) if os.path.isdir(stale) else os.remove(stale)
slow = os.path.join(WORK, "slow_proposer.sh")
with open(slow, "w") as f:
    f.write("#!/bin/sh\nsleep 0.5\nexec python3 \"$@\"\n")
os.chmod(slow, 0o755)
args = [FLOTILLA, "run", "configs/propose.ini", f"--campaign.results={kh5}", "--no-live",
        f"--propose.command=sh {slow} propose/proposer.py {{context}} {{out}}", *backend_args()]
for delay in (1.0, 3.0, 0.3, 2.2, 5.0):
    run = subprocess.Popen(args, env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    run.kill()
    run.wait()
    if os.path.exists(kh5):
        invariants(kh5, f"killed after {delay} s")
p = subprocess.run(args, env=ENV, cwd=ROOT, capture_output=True, text=True)
check(p.returncode == 0, f"killed: the resumed campaign ends: {p.returncode}\n{p.stderr}")
invariants(kh5, "killed, resumed to the end")
ks = json.loads(flotilla("results", "summary", kh5, "--json").stdout)
# The winner rests on measurements (row_pointers over interchange is about 2x here);
# what the kills must not change is the journal: checked above and here.
check((ks["best"] or {}).get("chain", [])[:1] == ["interchange"], f"killed: a winner built on interchange: {ks['best']}")
names = [p["name"] for p in journal(kh5)[0] if p["status"] == "accepted"]
check(sorted(names) == sorted(set(names)) and len(names) == 4, f"killed: each of the four proposals once: {names}")

# 4. Test-driven: configs/tdd.ini.
th5 = os.path.join(WORK, "tdd.h5")
for stale in glob.glob(th5 + "*"):
    shutil.rmtree(stale) if os.path.isdir(stale) else os.remove(stale)
p = flotilla("run", "configs/tdd.ini", f"--campaign.results={th5}", "--no-live", *backend_args())
check(p.returncode == 0, f"tdd.ini: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
ts = json.loads(flotilla("results", "summary", th5, "--json").stdout)
text = flotilla("results", "summary", th5).stdout
check("lineage    baseline (10) → multiply (18) → parentheses (22) → unary_minus (26) → compare (30) → modulo (33) → "
      "power (37) → errors (40)" in text, f"tdd: the pass count climbs to every file:\n{text}")
check(ts["best"]["objective"] == 40 and ts["best"]["status"] == "verified", f"tdd: every file passes: {ts['best']}")
check(any(c.get("proposal") == "compare_broken" and "sub_5.test" in c.get("reason", "") for c in ts["rolled_back"]),
      f"tdd: compare_broken rolled back for sub_5: {ts['rolled_back']}")
invariants(th5, "tdd")

# 5. A coding agent's command line as the proposer (a stand-in agent).
ah5 = os.path.join(WORK, "agent.h5")
for stale in glob.glob(ah5 + "*"):
    shutil.rmtree(stale) if os.path.isdir(stale) else os.remove(stale)
p = flotilla("run", "tests/integration/propose/agent.ini", f"--campaign.results={ah5}", "--no-live", *backend_args())
check(p.returncode == 0, f"agent: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
aj = json.loads(flotilla("results", "proposals", ah5, "--json").stdout)
first = [r for r in aj["proposals"] if r["name"] == "agent-r1-p0"]
check(first and first[0].get("candidate_status") == "verified" and "Interchanged" in first[0]["rationale"],
      f"agent: the stand-in's edit is a verified proposal with its words: {first}")
as_ = json.loads(flotilla("results", "summary", ah5, "--json").stdout)
check((as_["best"] or {}).get("proposal") == "agent-r1-p0", f"agent: its proposal wins: {as_['best']}")

# 6. The staged decode intent with a proposer.
dh5 = os.path.join(WORK, "decode.h5")
for stale in glob.glob(os.path.join(WORK, "decode.*")):
    shutil.rmtree(stale) if os.path.isdir(stale) else os.remove(stale)
p = flotilla("run", "configs/decode_propose.ini", f"--campaign.results={dh5}", "--no-live", *backend_args())
check(p.returncode == 0, f"decode: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
stages = [line for line in p.stdout.splitlines() if line.startswith("stage ")]
check(stages and "bottleneck gemv" in stages[0] and "chosen gemv_unroll" in stages[0] and "confirmed" in stages[0],
      f"decode: stage 1 tunes gemv with the proposer's patch, confirmed:\n{p.stdout}")
for k, line in enumerate(stages, 1):
    component = line.split("bottleneck ")[1].split()[0]
    ctx = json.load(open(glob.glob(os.path.join(WORK, f"decode.stage{k}.h5.proposals", "r1", "context0.json"))[0]))
    check(ctx["stage"] and ctx["stage"]["component"] == component and ctx["stage"]["index"] == k,
          f"decode: stage {k}'s context names its bottleneck {component}: {ctx['stage']}")
if len(stages) > 1:
    ctx2 = json.load(open(os.path.join(WORK, "decode.stage2.h5.proposals", "r1", "context0.json")))
    plain = open(os.path.join(ctx2["trees"]["plain"], "engine.conf")).read()
    check("gemv_unroll = 4" in plain, "decode: stage 2 starts from stage 1's winner's tree")
check("best       tokens_per_s" in p.stdout and "gemv_unroll model=small" in p.stdout, f"decode: the best:\n{p.stdout}")

# Every context of every campaign above matches the schema.
for path in sorted(glob.glob(os.path.join(WORK, "*.proposals", "r*", "context*.json"))):
    try:
        jsonschema.validate(json.load(open(path)), schema)
    except jsonschema.ValidationError as e:
        check(False, f"{path} does not match docs/propose-context.schema.json: {e.message} at {list(e.path)}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("proposers: every check passed")
