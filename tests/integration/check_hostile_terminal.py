#!/usr/bin/python3
"""check_hostile_terminal.py FLOTILLA WORK — task output is untrusted bytes: what flotilla prints
for people never carries a raw control byte from it (issue 32).

A campaign whose tasks print the OSC sequence that sets a terminal's title, the CSI sequence that
clears its screen, BEL, NUL, 0xFF and a C1 CSI (U+009B): in a metric line (a failure reason), in
the output of a failing task, and in the names of failing TAP tests (a rollback's reason), with a
results file whose name needs shell quoting. Checked:
  - `flotilla run`'s stdout and stderr, and the text of `flotilla results summary | top | history |
    tests` and `flotilla status`, are UTF-8 with no control character but newline and tab, and
    show the sequences escaped (\\x1b]0;PWNED\\x07);
  - `results summary --json` still parses and keeps the bytes' meaning (escaped by JSON);
  - `results export` CSV keeps the raw bytes when piped (it is data), and escapes them on a terminal;
  - the commands flotilla suggests quote a file name that needs it: `flotilla results summary
    '...$(id).h5'` after a run, and `flotilla run 'we ird$(id).ini'` from `flotilla sbatch`.
"""
import json
import os
import pty
import shutil
import subprocess
import sys
import tty

FLOTILLA, WORK = sys.argv[1:3]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
ENV = dict(os.environ, PATH=os.path.dirname(FLOTILLA) + ":" + os.environ.get("PATH", ""))
failures = []
# printf's spelling of the bytes; NUL last, as the results file's C strings end at one.
HOSTILE = r"\033]0;PWNED\007\033[2J\377\302\233\000"


def check(ok, what):
    if not ok:
        failures.append(what)


def run(*args, expect=(0,), cwd=WORK, **kw):
    p = subprocess.run([FLOTILLA, *args], env=ENV, capture_output=True, cwd=cwd, **kw)
    if p.returncode not in expect:
        sys.exit(f"flotilla {' '.join(args)}: exit {p.returncode}\n{p.stdout!r}\n{p.stderr!r}")
    return p


def show(data):
    return data.decode("utf-8", "backslashreplace")


def safe_text(what, data):
    """True when `data` is UTF-8 with no control character but newline and tab (C0, DEL, C1)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"{what}: not UTF-8 ({e}): {data[max(0, e.start - 40):e.start + 40]!r}")
        return
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\t\n") or 0x7f <= ord(c) <= 0x9f]
    check(not bad, f"{what}: raw control characters {sorted(set(bad))!r} in\n{text[-1500:]}")


with open(os.path.join(WORK, "task.sh"), "w") as f:
    f.write(f"""case $1 in
  2) printf 'flotilla-metric: {HOSTILE}=1\\n' ;;
  4) printf 'boom {HOSTILE} tail\\n'; exit 3 ;;
  *) printf 'flotilla-metric: score=%s\\n' "$1" ;;
esac
""")
with open(os.path.join(WORK, "tap.sh"), "w") as f:
    f.write(f"""if [ "$1" = 3 ]; then
  printf '1..2\\nok 1 - fine\\nnot ok 2 - t{HOSTILE}\\n' > "$2"; exit 1
fi
printf '1..2\\nok 1 - fine\\nok 2 - t2\\n' > "$2"
""")
ini = os.path.join(WORK, "we ird$(id).ini")
h5 = os.path.join(WORK, "hostile $(id).h5")
with open(ini, "w") as f:
    f.write(f"""[campaign]
name = hostile_terminal
results = {h5}
[intent]
objective = score
baseline = x=1
[space]
param = x: int: 1..5
[explore]
command = sh {WORK}/task.sh {{x}}
repeats = 1
[evaluate]
command = sh {WORK}/tap.sh {{x}} {{report}}
suite = tap
list = none
shards = 1
gate = all
[confirm]
enabled = false
[search]
strategy = grid
budget = 4
batch = 4
""")

# The run: its report on stdout, notes and progress lines on stderr.
p = run("run", ini, "--no-live")
safe_text("flotilla run stdout", p.stdout)
safe_text("flotilla run stderr", p.stderr)
check(b"\\x1b]0;PWNED\\x07\\x1b[2J" in p.stdout, f"the run's report shows the sequences escaped:\n{show(p.stdout)}")
quoted_h5 = "'" + h5 + "'"
check(f"flotilla results summary {quoted_h5}".encode() in p.stdout,
      f"the suggested command quotes the file name: {show(p.stdout)[-300:]}")

# Text views of the file.
rolled = json.loads(run("results", "summary", h5, "--json").stdout)["rolled_back"]
check(len(rolled) == 1, f"one candidate rolled back by its hostile test: {rolled}")
views = {"summary": ["results", "summary", h5], "top": ["results", "top", h5], "history": ["results", "history", h5],
         "tests": ["results", "tests", h5, "--candidate", str(rolled[0]["id"]), "--vs", "baseline"], "status": ["status", ini]}
for name, args in views.items():
    p = run(*args)
    safe_text(f"{name} stdout", p.stdout)
    safe_text(f"{name} stderr", p.stderr)
summary = run("results", "summary", h5).stdout
check(b"\\x1b]0;PWNED\\x07\\x1b[2J\\xff\\u009b" in summary,
      f"results summary shows ESC, BEL, 0xFF and the C1 CSI escaped:\n{show(summary)}")
reasons = json.loads(run("results", "summary", h5, "--json").stdout)["failures_by_reason"]
check(any("\x1b]0;PWNED\x07\x1b[2J" in reason for reason in reasons), f"the JSON summary keeps the reasons: {reasons}")

# CSV is data: raw through a pipe, escaped on a terminal.
piped = run("results", "export", h5, "--table", "trials", "--with-output").stdout
check(b"\x1b]0;PWNED" in piped, "a piped CSV export keeps the task's bytes")
master, slave = pty.openpty()
tty.setraw(slave)  # no newline translation: the bytes as flotilla wrote them
export = subprocess.Popen([FLOTILLA, "results", "export", h5, "--table", "trials", "--with-output"], env=ENV,
                          stdout=slave, stderr=subprocess.PIPE, cwd=WORK)
os.close(slave)
shown = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the writer is gone
        break
    if not chunk:
        break
    shown += chunk
export.wait()
os.close(master)
check(export.returncode == 0, f"export to a terminal: exit {export.returncode}")
check(not any(b in shown for b in (b"\x1b", b"\x07", b"\x00", b"\xff", b"\xc2\x9b")) and b"\\x1b]0;PWNED" in shown,
      f"a CSV export on a terminal shows the bytes escaped: {shown[-600:]!r}")

# `flotilla sbatch` suggests commands a shell runs as they are: quoted file names.
# A new results file: the finished campaign has nothing left to submit. The sbatch client needs
# no cluster to write a held job.
p = run("sbatch", os.path.basename(ini), "--campaign.results=held$(id).h5", "--resources.slurm_client=sbatch")
check("flotilla run 'we ird$(id).ini' '--campaign.results=held$(id).h5' --resources.slurm_client=sbatch"
      in show(p.stdout) and f"sbatch '{WORK}/held$(id).h5.jobs/" in show(p.stdout),
      f"sbatch's suggestions quote the file names:\n{show(p.stdout)}")

if failures:
    sys.exit("FAILED\n" + "\n\n".join(failures))
print("ok")
