#!/usr/bin/python3
"""check_html_report.py FLOTILLA RESULTS.h5 WORKDIR — `flotilla results report` writes one
self-contained HTML page that a real browser renders without errors and that shows the winner
(issue 34: a report a person can share).

Headless Chromium (Debian's, scripts/install-deps.sh) loads the page from a file with the network
switched off, runs its one script, and dumps the DOM: the page's own check says the chart is there
(data-rendered="ok"), and the winner named in the page is the one `results summary --json` names.
No chromium: skipped (exit 77)."""
import json
import os
import re
import shutil
import subprocess
import sys

flotilla, h5, work = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
page = os.path.join(work, "report.html")


def fail(what, p=None):
    sys.exit(f"FAIL: {what}" + (f"\nexit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr[-3000:]}" if p else ""))


p = subprocess.run([flotilla, "results", "report", h5, "-o", page], capture_output=True, text=True, timeout=120)
if p.returncode != 0 or not os.path.exists(page):
    fail("results report writes the page", p)
html = open(page, encoding="utf-8").read()
if re.search(r'(src|href)\s*=\s*"(https?:)?//', html) or "@import" in html:
    fail("the page fetches nothing")
print(f"ok: {page} written, {len(html)} bytes, self-contained")

browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    print("skipped: no chromium here (scripts/install-deps.sh installs it)")
    sys.exit(77)
profile = os.path.join(work, "profile")
p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
                    "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", f"--user-data-dir={profile}",
                    "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + os.path.abspath(page)],
                   capture_output=True, text=True, timeout=120)
if p.returncode != 0:
    fail("chromium renders the page", p)
dom = p.stdout
if 'data-rendered="ok"' not in dom:
    fail("the page's script ran and found its chart", p)
console_errors = [l for l in p.stderr.splitlines() if "CONSOLE" in l and ("Uncaught" in l or "ERROR" in l)]
if console_errors:
    fail(f"no script errors in the console: {console_errors}", p)
summary = json.loads(subprocess.run([flotilla, "results", "summary", h5, "--json"], check=True, capture_output=True,
                                    text=True).stdout)
best = summary.get("best")
if best:
    m = re.search(r'id="winner" data-candidate="(-?\d+)"', dom)
    if not m or int(m.group(1)) != best["id"]:
        fail(f"the rendered page names the winner, candidate {best['id']}", p)
points = len(re.findall(r'class="point ', dom))
if points == 0:
    fail("the rendered chart has its points", p)
print(f"ok: chromium rendered it without errors: winner candidate {best['id'] if best else None}, {points} points")
