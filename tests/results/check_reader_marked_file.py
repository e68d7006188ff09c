#!/usr/bin/python3
"""check_reader_marked_file.py RESULTS_WRITER FLOTILLA PYTHON_DIR — the pandas reader on a file a
writer left marked "open for write" (killed after opening it, before its switch to SWMR mode):
a CampaignFileError that says what happened and how to clear it, never h5py's bare OSError; and
once `flotilla results summary` has read the file (clearing the mark), every trial reads.
"""
import os
import subprocess
import sys
import tempfile

writer, flotilla, python_dir = sys.argv[1:]
sys.path.insert(0, python_dir)
import flotilla_results  # noqa: E402

with tempfile.TemporaryDirectory() as work:
    path = os.path.join(work, "marked.h5")
    made = subprocess.Popen([writer, "create", path, "5"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert made.stdout.readline().strip() == "open" and made.stdout.readline().strip() == "ready 5"
    made.stdin.close()
    assert made.wait() == 0
    opened = subprocess.Popen([writer, "opened", path, "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert opened.stdout.readline().strip() == "open"
    opened.kill()
    opened.wait()
    try:
        flotilla_results.read_campaign(path)
        sys.exit("FAILED: a file marked open for write was read without its mark cleared")
    except flotilla_results.CampaignFileError as error:
        message = str(error)
        if "was killed" not in message or "flotilla results summary" not in message:
            sys.exit(f"FAILED: the error does not say what happened and what to do: {message}")
    subprocess.run([flotilla, "results", "summary", path], check=True, capture_output=True)
    trials = len(flotilla_results.read_campaign(path).trials)
    if trials != 5:
        sys.exit(f"FAILED: {trials} trials read after the mark was cleared, not 5")
print("ok")
