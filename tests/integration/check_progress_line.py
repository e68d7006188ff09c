#!/usr/bin/env python3
"""The progress line of `flotilla run`, as a user sees it (scheduler/src/Progress.h).

A real campaign runs three times:
  1. with stderr on a pseudo-terminal of 80 columns: the bytes are replayed onto a virtual
     80-column screen (\\r, \\n, ESC[K, autowrap), and no row may ever hold more than 79
     columns (a row as wide as the terminal wraps on some terminals, and a wrapped live line
     leaves stacked half-lines behind); the last line left on screen carries the elapsed time
     and the verified best;
  2. on the same terminal narrowed to 60 columns mid-run (TIOCSWINSZ sends SIGWINCH): every
     line drawn after the narrowing has been seen fits 59 columns;
  3. with stderr on a pipe (no terminal): exactly one plain line per round, at its end, in
     round order, counted against the rounds the results file records.

usage: check_progress_line.py FLOTILLA CAMPAIGN.ini WORKDIR
"""
import csv
import fcntl
import io
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time

flotilla, config, work = sys.argv[1:4]
# On a terminal the explore runs are slowed a little, so the line is drawn many times and the
# terminal can be narrowed while the campaign runs (rollback.ini's own take well under a second).
SLOW = ['--explore.command=sh -c "sleep 0.05; echo flotilla-metric: score=$0" {x} {y}']
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
# In a sanitizer build the runtime writes notes of its own to stderr, which is the terminal here
# (ASan's note on the spawner's clone() stack is 150 columns wide): they go to files instead, and
# an error report among them fails the test at the end.
SANITIZER_LOG = os.path.join(work, "sanitizer")
for variable in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
    os.environ[variable] = ":".join(filter(None, [os.environ.get(variable, ""), f"log_path={SANITIZER_LOG}"]))


def fail(message, detail=""):
    print(f"FAIL: {message}\n{detail}")
    sys.exit(1)


def set_columns(fd, columns):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))


def run_on_terminal(name, columns, narrow_to=None):
    """Runs the campaign with stderr (and stdin) on a pty of `columns` columns, stdout to a file.
    With narrow_to, the terminal is narrowed as soon as the first line is drawn. Returns the
    bytes written to the terminal, and the offset from which every draw follows the narrowing."""
    h5, out = f"{work}/{name}.h5", f"{work}/{name}.out"
    pid, master = pty.fork()  # the child leads a session whose controlling terminal is the pty
    if pid == 0:
        os.execvp("sh", ["sh", "-c", 'out="$1"; shift; exec "$@" >"$out"', "sh", out, flotilla, "run", config,
                         f"--campaign.results={h5}"] + SLOW)
    set_columns(master, columns)
    data, narrowed_at = b"", None
    deadline = time.time() + 120
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child has exited and closed the terminal
            break
        if not chunk:
            break
        data += chunk
        if narrow_to and narrowed_at is None and b"\x1b[K" in data:
            set_columns(master, narrow_to)
            # A draw written before the signal arrived may still be in flight; from the next
            # full round trip on, every draw is made at the new width.
            time.sleep(0.5)
            ready, _, _ = select.select([master], [], [], 0)
            while ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                data += chunk
                ready, _, _ = select.select([master], [], [], 0)
            narrowed_at = len(data)
    _, status = os.waitpid(pid, 0)
    os.close(master)
    if os.waitstatus_to_exitcode(status) != 0:
        fail(f"{name}: flotilla run exited with {os.waitstatus_to_exitcode(status)}",
             data.decode(errors="replace") + open(out).read())
    return data.decode(), narrowed_at


def replay(text, columns):
    """The rows a terminal of `columns` columns shows, and the widest any row ever was."""
    rows, row, col, widest = [[]], 0, 0, 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b":
            match = re.match(r"\x1b\[[0-9;?]*([A-Za-z])", text[i:])
            if not match:
                fail("an escape sequence the replay does not know", repr(text[i:i + 10]))
            if match.group(1) == "K":
                del rows[row][col:]
            i += len(match.group(0))
            continue
        if ch == "\r":
            col = 0
        elif ch == "\n":
            row += 1
            col = 0
            if row == len(rows):
                rows.append([])
        else:
            if col == columns:  # autowrap: the line did not fit
                row, col = row + 1, 0
                if row == len(rows):
                    rows.append([])
            del rows[row][col:col + 1]
            rows[row].insert(col, ch)
            col += 1
            widest = max(widest, len(rows[row]))
        i += 1
    return ["".join(r) for r in rows], widest


def check_final_line(lines, columns, where):
    shown = [line for line in lines if line.strip()]
    if not shown:
        fail(f"{where}: nothing on the terminal")
    last = shown[-1]
    if len(last) > columns - 1:
        fail(f"{where}: the last line is {len(last)} columns wide, over {columns - 1}", last)
    if not re.search(r"(^|· )\d+(h\d\dm|m\d\ds|s)( elapsed)?( ·|$)", last):
        fail(f"{where}: the last line has no elapsed time", last)
    # rollback.ini: x = 7 and 8 fail their tests, so the verified best is x = 6 (score 6).
    if not re.search(r"verified (score )?6( ·|$)", last):
        fail(f"{where}: the last line does not show the verified best, 6", last)
    return last


# 1. 80 columns, never resized.
text, _ = run_on_terminal("tty80", 80)
lines, widest = replay(text, 80)
if widest > 79:
    fail(f"80 columns: a row of the terminal reached {widest} columns", "\n".join(lines))
if text.count("\x1b[K") < 2:
    fail("80 columns: the line was not rewritten in place", repr(text))
last = check_final_line(lines, 80, "80 columns")
print(f"80 columns: {text.count(chr(27) + '[K')} draws, widest row {widest}; last line: {last}")

# 2. Narrowed to 60 columns mid-run: SIGWINCH makes the line fit the new width.
text, narrowed_at = run_on_terminal("tty60", 80, narrow_to=60)
if narrowed_at is None or narrowed_at >= len(text.encode()):
    fail("resize: the campaign ended before the terminal could be narrowed", repr(text))
after = text.encode()[narrowed_at:].decode(errors="replace")
draws = [d.split("\r")[0].split("\n")[0] for d in after.split("\r\x1b[K")[1:]]
# A line of its own (a confirmation's verdict, a notice) is printed after \r ESC[K too; it stays
# on screen and may wrap like any log line. The progress line is the rest.
draws = [d for d in draws if not re.match(r"candidate \d+: |flotilla: ", d)]
too_wide = [d for d in draws if len(d) > 59]
if not draws or too_wide:
    fail("resize: lines drawn after narrowing to 60 columns do not fit 59", "\n".join(too_wide or [after]))
print(f"narrowed to 60 columns: {len(draws)} draws after it, widest {max(len(d) for d in draws)}")

# 3. No terminal: one plain line per round, at its end.
h5 = f"{work}/pipe.h5"
run = subprocess.run([flotilla, "run", config, f"--campaign.results={h5}"], capture_output=True, text=True,
                     stdin=subprocess.DEVNULL, timeout=120)
if run.returncode != 0:
    fail(f"no terminal: flotilla run exited with {run.returncode}", run.stderr + run.stdout)
if "\r" in run.stderr or "\x1b" in run.stderr:
    fail("no terminal: the log holds terminal controls", repr(run.stderr))
progress = [line for line in run.stderr.splitlines() if re.match(r"round \d+ ", line)]
exported = subprocess.run([flotilla, "results", "export", h5, "--table", "candidates", "--format", "csv"],
                          capture_output=True, text=True, check=True).stdout
rounds = sorted({int(row["round"]) for row in csv.DictReader(io.StringIO(exported))})
expected = [f"round {r} done" for r in rounds]
if [line.split(" · ")[0] for line in progress] != expected:
    fail(f"no terminal: expected one line per round ({len(rounds)} rounds)", run.stderr)
if "elapsed" not in progress[-1] or "best verified score 6" not in progress[-1]:
    fail("no terminal: the last round's line lacks the elapsed time or the verified best", progress[-1])
print(f"no terminal: {len(progress)} lines for {len(rounds)} rounds; last: {progress[-1]}")
for name in sorted(os.listdir(work)):
    if name.startswith("sanitizer."):
        with open(os.path.join(work, name), errors="replace") as f:
            report = f.read()
        if "ERROR:" in report or "runtime error" in report or "WARNING: ThreadSanitizer" in report:
            fail(f"a sanitizer reported an error ({name})", report[:3000])
