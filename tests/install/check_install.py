#!/usr/bin/python3
"""check_install.py CMAKE BUILD_DIR SOURCE_DIR WORK CXX — `cmake --install` into a fresh prefix, then use
only what it installed: the programs (flotilla --help, a small campaign whose tasks and confirmations run
the installed flotilla-kernel and flotilla-pairs), the man pages (one per command, every option of
`flotilla run --help` in flotilla-run.1, rendered by man without warnings), the bash and zsh completions
(bash completes commands, subcommands and settings), the Python module with h5py, and a consumer project
(tests/install/consumer) configured and built with find_package(flotilla) against the prefix, whose
flotilla::results reads the campaign file as `flotilla results summary` does.
"""
import json
import os
import re
import shutil
import subprocess
import sys

cmake, build, source, work, cxx = sys.argv[1:6]
prefix = os.path.join(work, "prefix")
# Nothing of the build tree on PATH, so the installed flotilla must find its helpers by itself.
env = dict(os.environ, PATH="/usr/bin:/bin", PYTHONPATH="")


def expect(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok:", message)


def run(*args, **kwargs):
    kwargs.setdefault("env", env)
    p = subprocess.run(list(args), capture_output=True, text=True, **kwargs)
    if p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
run(cmake, "--install", build, "--prefix", prefix)
flotilla = os.path.join(prefix, "bin", "flotilla")

# Programs.
for program in ("flotilla", "flotilla-worker", "flotilla-kernel", "flotilla-pairs", "flotilla-per-file"):
    path = os.path.join(prefix, "bin", program)
    expect(os.access(path, os.X_OK), f"bin/{program} installed")
usage = run(flotilla, "--help").stdout
expect("usage:" in usage and "flotilla run CAMPAIGN.ini" in usage, "installed flotilla --help prints the usage")
run_help = run(flotilla, "run", "--help").stdout
keys = re.findall(r"^  --([a-z_]+\.[a-z_.]+) VALUE", run_help, re.M)
expect(len(keys) > 40, f"flotilla run --help lists the campaign settings ({len(keys)})")
expect("flotilla-kernel" in run(os.path.join(prefix, "bin", "flotilla-kernel"), "--help").stdout,
       "installed flotilla-kernel --help")

# Man pages: one per command and results subcommand, generated from the same tables.
man1 = os.path.join(prefix, "share", "man", "man1")
commands = ["run", "results", "status", "cancel", "sbatch", "replay"]
subcommands = re.findall(r"^  (\w+) ", run(flotilla, "results", "--help").stdout, re.M)
pages = (["flotilla", "flotilla-kernel"] + [f"flotilla-{c}" for c in commands]
         + [f"flotilla-results-{s}" for s in subcommands])
expect(len(subcommands) >= 9, f"results subcommands {subcommands}")
for page in pages:
    path = os.path.join(man1, page + ".1")
    expect(os.path.isfile(path) and os.path.getsize(path) > 600 and open(path).read().startswith(".TH "),
           f"man page {page}.1 ({os.path.getsize(path) if os.path.isfile(path) else 0} bytes)")
run_page = open(os.path.join(man1, "flotilla-run.1")).read()
missing = [k for k in keys if "\\-\\-" + k.replace("-", "\\-") not in run_page]
expect(not missing, f"flotilla-run.1 lists every setting of flotilla run --help (missing: {missing})")
for option in ("no-live", "cancel-on-interrupt"):
    expect("\\-\\-" + option.replace("-", "\\-") in run_page, f"flotilla-run.1 lists --{option}")
if shutil.which("man"):
    for page in ("flotilla", "flotilla-run", "flotilla-status", "flotilla-results-export", "flotilla-kernel"):
        p = subprocess.run(["man", "--warnings", "-l", os.path.join(man1, page + ".1")], capture_output=True,
                           text=True, env=dict(env, MANPAGER="cat", MANWIDTH="100"))
        expect(p.returncode == 0 and len(p.stdout) > 500 and not p.stderr.strip(),
               f"man renders {page}.1 without warnings {p.stderr.strip()[:300]}")

# Completions.
bash_file = os.path.join(prefix, "share", "bash-completion", "completions", "flotilla")
zsh_file = os.path.join(prefix, "share", "zsh", "site-functions", "_flotilla")
for path in (bash_file, zsh_file):
    expect(os.path.isfile(path) and os.path.getsize(path) > 2000, f"{os.path.relpath(path, prefix)} installed")
expect(open(zsh_file).read().startswith("#compdef flotilla"), "the zsh completion starts with #compdef")
run("bash", "-n", bash_file)


def complete(*words):
    script = (f"source '{bash_file}'; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
              f"COMP_CWORD={len(words) - 1}; _flotilla; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    return run("bash", "-c", script).stdout.split()


expect(complete("flotilla", "re") == ["results", "replay"], f"bash completes commands: {complete('flotilla', 're')}")
expect(complete("flotilla", "results", "pa") == ["pareto", "params"], "bash completes results subcommands")
expect(complete("flotilla", "run", "x.ini", "--search.bu") == ["--search.budget="], "bash completes settings")
expect("--top" in complete("flotilla", "results", "summary", "--t"), "bash completes a subcommand's options")
expect("bayes" in complete("flotilla", "replay", "s.csv", "--strategy", ""), "bash completes strategies")
kinds = ["convergence", "pareto", "params", "timeline", "tests", "lineage"]
expect(complete("flotilla", "results", "plot", "x.h5", "--kind", "") == kinds,
       f"bash completes plot --kind with the chart kinds, not file names: {complete('flotilla', 'results', 'plot', 'x.h5', '--kind', '')}")
expect(complete("flotilla", "results", "plot", "x.h5", "--kind", "=", "t") == ["timeline", "tests"], "and --kind=t")
expect(complete("flotilla", "results", "history", "x.h5", "--by", "") == ["round", "evaluation"],
       "bash completes history --by")
expect(":value:(convergence pareto params timeline tests lineage)'" in open(zsh_file).read(),
       "the zsh completion offers the chart kinds")
if shutil.which("zsh"):
    run("zsh", "-n", zsh_file)

# Documentation and examples.
doc = os.path.join(prefix, "share", "doc", "flotilla")
for name in ("README.md", "docs/config.md", "docs/install.md", "docs/results-schema.md", "examples/quickstart.ini"):
    expect(os.path.isfile(os.path.join(doc, name)), f"share/doc/flotilla/{name}")

# A campaign with the installed programs only.
campaign_dir = os.path.join(work, "campaign")
os.makedirs(campaign_dir)
h5 = os.path.join(campaign_dir, "installed.h5")
run(flotilla, "run", os.path.join(source, "tests", "install", "install.ini"), f"--campaign.results={h5}", "--no-live",
    cwd=campaign_dir)
summary = json.loads(run(flotilla, "results", "summary", h5, "--json").stdout)
progress = summary["progress"]
verdicts = progress["confirmed_faster"] + progress["no_significant_difference"] + progress["confirmed_slower"]
# Tasks ran the installed flotilla-kernel (explore and verify), a confirmation flotilla-pairs.
expect(progress["candidates"] == 3 and progress["failed_trials"] == 0 and progress["verified"] >= 1
       and verdicts >= 1 and progress["confirmations_failed"] == 0,
       f"the installed flotilla ran a campaign with its helpers: {progress}")

# The Python module, from the prefix, with h5py.
python_dir = os.path.join(prefix, "lib", "python3", "dist-packages")
code = ("import sys, h5py, flotilla_results as r; assert r.__file__.startswith(sys.argv[1]), r.__file__; "
        "c = r.read_campaign(sys.argv[2]); print(len(c.candidates), int(c.best['id']), c.candidates['us'].dtype)")
out = run("/usr/bin/python3", "-c", code, prefix, h5, env=dict(env, PYTHONPATH=python_dir)).stdout.split()
best = summary["best"]["id"]
expect(out == [str(summary["progress"]["candidates"]), str(best), "int64"],
       f"flotilla_results from the prefix reads the campaign: {out}")

# A consumer project: find_package(flotilla) against the prefix, flotilla::results.
consumer_build = os.path.join(work, "consumer")
run(cmake, "-S", os.path.join(source, "tests", "install", "consumer"), "-B", consumer_build,
    f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_CXX_COMPILER={cxx}", "-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON")
cache = open(os.path.join(consumer_build, "CMakeCache.txt")).read()
expect(f"flotilla_DIR:PATH={prefix}/" in cache, "find_package(flotilla) found the installed package")
run(cmake, "--build", consumer_build, "-j2")
line = run(os.path.join(consumer_build, "read_campaign"), h5).stdout.strip()
expect(line == f"campaign installed candidates {summary['progress']['candidates']} best {best}",
       f"the consumer reads the campaign through flotilla::results: {line}")
