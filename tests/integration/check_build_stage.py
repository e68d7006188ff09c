#!/usr/bin/python3
"""check_build_stage.py FLOTILLA BUILD_STAGE.INI WORKDIR [OVERRIDE...] — the build stage end to end
(docs/build.md); the overrides go to every run (--resources.backend=slurm runs it on Slurm).

build_stage.ini builds variant v (good1, good2, broken) and not x, appending each build to
builds.log in the working directory.
1. A campaign in which v=broken fails to build: its two candidates are build_failed with the
   compiler's error line, never explored, counted in the budget; the campaign goes on and the
   winner is another; the 6 candidates cost 3 builds (candidates that share a key build once).
2. `flotilla results summary` groups the failure by kind with its first error line; `export
   --table trials --with-output` carries the build's output tail.
3. Resumed after it finished: nothing is built again. With one build folder removed: that one
   build runs again, and only it.
4. A baseline whose build fails stops the campaign at once with that reason (exit 3); so does a
   build that times out. A build that fails without an "error" line (cp's "cannot stat") is
   reported with its last lines and the path of its full log, by the run and by results summary."""
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys

flotilla, ini, work, *common = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(name, *overrides):
    h5 = os.path.join(work, name + ".h5")
    p = subprocess.run([flotilla, "run", ini, f"--campaign.results={h5}", f"--campaign.workdir={work}", "--no-live",
                        *common, *overrides], capture_output=True, text=True, timeout=200)
    summary = json.loads(subprocess.run([flotilla, "results", "summary", h5, "--json"], check=True,
                                        capture_output=True, text=True).stdout)
    return p, summary, h5


def expect(ok, what, p):
    if not ok:
        sys.exit(f"FAIL: {what}\nexit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    print(f"ok: {what}")


def builds():
    with open(os.path.join(work, "builds.log")) as f:
        return sorted(f.read().split())


ERROR = "v.c:3:1: error: expected ; before return"

# 1. One variant fails to build; the campaign goes on.
p, s, h5 = run("campaign")
first_run, first_provenance = p, s["provenance"]
expect(p.returncode == 0, "the campaign finishes", p)
expect(s["progress"]["candidates"] == 6 and s["progress"]["build_failed"] == 2,
       "6 candidates, the 2 with v=broken build_failed", p)
failed = sorted(c["config"] for c in s["build_failed"])
expect(failed == ["v=broken x=1", "v=broken x=2"], "the build_failed ones are v=broken", p)
expect(all(c["reason"] == ERROR and c["repeats"] == 0 for c in s["build_failed"]),
       "each is reported with the compiler's error line and was never explored", p)
expect(s["best"]["config"] == "v=good2 x=2" and s["verdict"] == "confirmed faster",
       "the winner is another candidate, confirmed faster", p)
expect(builds() == ["broken", "good1", "good2"], "6 candidates, 3 build keys, 3 builds", p)

# 2. The summary and the export.
text = subprocess.run([flotilla, "results", "summary", h5], check=True, capture_output=True, text=True).stdout
expect("failures by kind (first error)" in text and f"build         {ERROR}" in text,
       "the summary groups failures by kind with the first error line", p)
expect(s["failures_by_kind"]["build"] == {"count": 2, "first_error": ERROR}, "and so does its JSON", p)
out = subprocess.run([flotilla, "results", "export", h5, "--table", "trials", "--with-output"], check=True,
                     capture_output=True, text=True).stdout
rows = [r for r in csv.DictReader(io.StringIO(out)) if r["kind"] == "build"]
expect(len(rows) == 6, "one build trial per candidate", p)
broken = [r for r in rows if r["status"] == "build_failed"]
expect(len(broken) == 2 and all(ERROR in r["output_tail"] and "1 error generated." in r["output_tail"] for r in broken),
       "export --with-output has the build's output tail", p)
ran = [r for r in rows if float(r["metric.built_by"]) == float(r["candidate"])]
expect(len(ran) == 3, "3 build trials ran their build, the other 3 name the candidate whose build they share", p)
ON_SLURM = "--resources.backend=slurm" in common
if ON_SLURM:
    # build.on = auto: each build is a Slurm job of its own, its folder in JOBS_DIR/builds.
    expect(all(r["slurm_job"] for r in rows), "each build trial names the Slurm job it ran in", p)
    job_folders = os.listdir(os.path.join(work, "campaign.h5.jobs", "builds"))
    expect(len(job_folders) >= 1 and all(d.startswith("build_stage-build-") for d in job_folders),
           f"the build jobs' folders are in JOBS_DIR/builds ({sorted(job_folders)})", p)
    status = subprocess.run([flotilla, "status", ini, f"--campaign.results={h5}", f"--campaign.workdir={work}", *common],
                            capture_output=True, text=True)
    expect(status.returncode == 0 and "build_stage-build-" in status.stdout, "flotilla status lists the build jobs",
           status)
else:
    expect(not any(r["slurm_job"] for r in rows), "builds ran on this host, in no Slurm job", p)

# 3. Resume: nothing is built again; a removed folder is built again, alone.
p, s, _ = run("campaign")
expect(p.returncode == 0 and "resuming" in p.stderr, "the finished campaign resumes", p)
expect(builds() == ["broken", "good1", "good2"], "and builds nothing again", p)
folders = os.path.join(work, "campaign.h5.builds")
good2 = [d for d in os.listdir(folders)
         if os.path.exists(os.path.join(folders, d, "rate")) and open(os.path.join(folders, d, "rate")).read().strip() == "2"]
# (.flotilla-campaign names the campaign that owns the build folder: docs/verification.md)
folder_names = [d for d in os.listdir(folders) if os.path.isdir(os.path.join(folders, d)) and not d.startswith(".")]
expect(len(folder_names) == 3 and len(good2) == 1, "one folder per build key", p)
expect(os.path.isfile(os.path.join(folders, ".flotilla-campaign")), "the build folder names its campaign", p)
expect(sorted(d + ".log" for d in folder_names) == sorted(f for f in os.listdir(folders) if f.endswith(".log")),
       "and beside each, its build's full log", p)
shutil.rmtree(os.path.join(folders, good2[0]))
p, s, _ = run("campaign")
expect(p.returncode == 0, "resumed with a build folder gone", p)
expect(builds() == ["broken", "good1", "good2", "good2"], "only the missing build runs again", p)

# 4. A baseline that fails to build stops the campaign.
p, s, _ = run("baseline", "--intent.baseline=v=broken x=1")
expect(p.returncode == 3, "a baseline whose build fails exits 3", p)
expect(f"stopped: the baseline (v=broken x=1) failed to build: {ERROR}" in p.stdout,
       "the report names the baseline's build error", p)
expect(s["progress"]["candidates"] == 1 and s["progress"]["trials"] == 1, "nothing else was proposed or run", p)
p, s, _ = run("timeout", "--build.timeout=1s", "--build.command=sh -c 'sleep 30' build {build_dir}")
expect(p.returncode == 3 and "failed to build: build failed: timed out after 1s" in p.stdout,
       "a build that times out is a failed build", p)
# A build that fails without an "error" line: the report shows its last lines and its full log.
p, s, _ = run("quiet", "--build.command=sh -c 'echo preparing $0; cp -r /nonexistent-flotilla/src \"$0/src\"' {build_dir}")
quiet = s["build_failed"][0] if s["build_failed"] else {}
expect(p.returncode == 3 and quiet.get("reason") == "build failed: exit code 1"
       and quiet["build_output"][-1] == "cp: cannot stat '/nonexistent-flotilla/src': No such file or directory"
       and "| cp: cannot stat '/nonexistent-flotilla/src': No such file or directory" in p.stdout
       and f"full log: {quiet['build_log']}" in p.stdout,
       "a build failing with no 'error' line: the report shows its last lines and names its log", p)
summary_text = subprocess.run([flotilla, "results", "summary", os.path.join(work, "quiet.h5")], check=True,
                              capture_output=True, text=True).stdout
log_text = open(quiet["build_log"]).read()
expect(f"full log: {quiet['build_log']}" in summary_text and log_text.startswith("preparing /")
       and "cannot stat" in log_text, "so does results summary, and the log holds the whole output", p)

# 5. Killed (SIGKILL) while its builds run: resumed, the half-done builds start again from an
#    empty folder, and the campaign ends as an uninterrupted one does.
killed = os.path.join(work, "killed")
os.makedirs(killed)
with open(ini) as f:
    command = next(line.split("=", 1)[1].strip() for line in f if line.startswith("command = sh -c "))
slow = command.replace(" echo \"$2\" >> builds.log;", " echo \"$2\" >> builds.log; sleep 3;", 1)
assert slow != command
args = [flotilla, "run", ini, f"--campaign.results={killed}/k.h5", f"--campaign.workdir={killed}", "--no-live",
        f"--build.command={slow}", *common]
child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
log = os.path.join(killed, "builds.log")
for _ in range(200):  # until the baseline's build has started
    if os.path.exists(log):
        break
    subprocess.run(["sleep", "0.05"])
child.kill()
child.wait()
p = subprocess.run(args, capture_output=True, text=True, timeout=200)
expect(p.returncode == 0, "the killed campaign resumes to the end", p)
s = json.loads(subprocess.run([flotilla, "results", "summary", f"{killed}/k.h5", "--json"], check=True,
                              capture_output=True, text=True).stdout)
expect(s["best"]["config"] == "v=good2 x=2" and s["progress"]["build_failed"] == 2, "with the same outcome", p)
with open(log) as f:
    logged = f.read().split()
if ON_SLURM:
    # The build job outlived the killed flotilla; the resumed run took it up instead of building again.
    expect(sorted(logged) == ["broken", "good1", "good2"], "every build ran once: the killed run's job was taken up", p)
else:
    expect(logged[:2] == ["good1", "good1"] and sorted(logged[2:]) == ["broken", "good2"],
           "the baseline's killed build ran again, once; the others once", p)

# 6. Interrupted (SIGINT) while its builds run. On Slurm the build job is left running, said so,
#    and taken up by the next run; locally the build is cancelled and runs again from nothing.
#    Either way the campaign ends as an uninterrupted one does.
interrupted = os.path.join(work, "interrupted")
os.makedirs(interrupted)
args = [flotilla, "run", ini, f"--campaign.results={interrupted}/i.h5", f"--campaign.workdir={interrupted}",
        "--no-live", f"--build.command={slow}", *common]
child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
log = os.path.join(interrupted, "builds.log")
for _ in range(200):  # until the baseline's build has started
    if os.path.exists(log):
        break
    subprocess.run(["sleep", "0.05"])
child.send_signal(signal.SIGINT)
out, err = child.communicate(timeout=120)
interrupted_run = subprocess.CompletedProcess(args, child.returncode, out, err)
expect(child.returncode == 130, "SIGINT mid-build exits 130", interrupted_run)
if ON_SLURM:
    expect("1 Slurm job(s) keep running" in err, "and says the build job keeps running", interrupted_run)
p = subprocess.run(args, capture_output=True, text=True, timeout=200)
expect(p.returncode == 0, "the interrupted campaign resumes to the end", p)
s = json.loads(subprocess.run([flotilla, "results", "summary", f"{interrupted}/i.h5", "--json"], check=True,
                              capture_output=True, text=True).stdout)
expect(s["best"]["config"] == "v=good2 x=2" and s["progress"]["build_failed"] == 2, "with the same outcome", p)
with open(log) as f:
    logged = f.read().split()
if ON_SLURM:
    expect(sorted(logged) == ["broken", "good1", "good2"], "every build ran once: the left job was taken up", p)
else:
    expect(logged[:2] == ["good1", "good1"] and sorted(logged[2:]) == ["broken", "good2"],
           "the baseline's cancelled build ran again, once; the others once", p)
# 6. Provenance names the compilers the campaign's commands used, here one a build script calls,
# and no other: not nvcc because it is on PATH, not for the first campaign, which names none.
expect("nvcc" not in (first_provenance["tools"] or {}), f"no compiler recorded that no command names: {first_provenance}",
       first_run)
with open(os.path.join(work, "build.sh"), "w") as f:
    f.write('#!/bin/sh\nc++ --version > /dev/null || exit 1\necho 2 > "$1/rate"\n')
p, s, _ = run("script", "--build.command=sh build.sh {build_dir} {v}")
expect(p.returncode == 0 and list(s["provenance"]["tools"]) == ["c++"],
       f"the compiler the build script ran is recorded, and only it: {s['provenance']}", p)
print("all build stage checks passed")
