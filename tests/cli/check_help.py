#!/usr/bin/python3
"""check_help.py FLOTILLA — every command the dispatcher lists (`flotilla --help`, generated from its
command table) and every `flotilla results` subcommand answers --help, -h and `flotilla help ...` with
exit 0, its usage and a non-empty list of options on stdout, nothing on stderr; asked wrongly (no
operands, an unknown command or subcommand) it exits 1 with the usage on stderr and nothing on stdout.
"""
import re
import subprocess
import sys

flotilla = sys.argv[1]


def expect(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok:", message)


def run(*args):
    return subprocess.run([flotilla, *args], capture_output=True, text=True, timeout=30)


def options_listed(text):
    return re.findall(r"^  (?:-\w \[ )?--[\w.-]+", text, re.M)


top = run("--help")
expect(top.returncode == 0 and not top.stderr and top.stdout.startswith("flotilla"), "flotilla --help")
commands = sorted(set(re.findall(r"^  flotilla ([a-z][a-z-]*) ", top.stdout, re.M)) - {"help"})
expect({"run", "results", "status", "cancel", "sbatch", "replay", "run-allocation"} <= set(commands),
       f"the usage lists every command: {commands}")
expect(run("help").stdout == top.stdout and run("-h").stdout == top.stdout, "flotilla help, flotilla -h")
expect("docs/config.md" in top.stdout, "the usage points at docs/config.md")

for command in commands:
    for asked in ([command, "--help"], [command, "-h"], ["help", command]):
        p = run(*asked)
        listed = options_listed(p.stdout)
        expect(p.returncode == 0 and not p.stderr and p.stdout.startswith(f"usage: flotilla {command}") and listed,
               f"flotilla {' '.join(asked)}: exit {p.returncode}, {len(listed)} options, stderr {p.stderr[:200]!r}")
    # After an operand too, as people type it.
    if command not in ("results",):
        p = run(command, "x.ini", "--help")
        expect(p.returncode == 0 and p.stdout == run(command, "--help").stdout, f"flotilla {command} x.ini --help")
        p = run(command)
        expect(p.returncode == 1 and not p.stdout and p.stderr.startswith(f"usage: flotilla {command} "),
               f"flotilla {command} without operands: exit 1, usage on stderr")

run_help = run("run", "--help").stdout
expect("docs/config.md" in run_help and "{candidate}" in run_help and "{{" in run_help,
       "flotilla run --help points at docs/config.md for placeholders and comments")
expect(len(re.findall(r"^  --\w+\.\w[\w.]* VALUE", run_help, re.M)) > 40, "flotilla run --help lists every setting")
status_help = run("status", "--help").stdout
expect("--campaign.results" in status_help and "--resources.jobs_dir" in status_help,
       "flotilla status --help lists the settings that matter to it")
expect("strategies: " in run("replay", "--help").stdout, "flotilla replay --help lists the strategies")

results = run("results", "--help")
subcommands = re.findall(r"^  (\w+) ", results.stdout, re.M)
expect(results.returncode == 0 and len(subcommands) >= 9, f"flotilla results --help lists {subcommands}")
for sub in subcommands:
    for asked in (["results", sub, "--help"], ["results", sub, "-h"], ["help", "results", sub]):
        p = run(*asked)
        listed = options_listed(p.stdout)
        expect(p.returncode == 0 and not p.stderr and "--json" in p.stdout and len(listed) >= 2,
               f"flotilla {' '.join(asked)}: exit {p.returncode}, {len(listed)} options")
    p = run("results", sub)
    expect(p.returncode == 1 and not p.stdout and p.stderr.startswith(f"usage: flotilla results {sub}"),
           f"flotilla results {sub} without a file: exit 1, usage on stderr")

for asked, message in (([], "flotilla"), (["results"], "flotilla results"), (["nonsense"], "unknown command"),
                       (["results", "nonsense"], "unknown subcommand"), (["help", "nonsense"], "unknown command")):
    p = run(*asked)
    expect(p.returncode == 1 and not p.stdout and p.stderr, f"flotilla {' '.join(asked)}: exit 1, stderr only")
    expect(message in p.stderr or "usage" in p.stderr, f"flotilla {' '.join(asked)}: says {message!r}")
