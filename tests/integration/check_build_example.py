#!/usr/bin/python3
"""check_build_example.py FLOTILLA RESULTS.h5 — what configs/build.ini must show (docs/build.md).

Its 16 candidates (opt x block x patch) are all built and explored or failed: the 4 with patch
no_such_helper fail to build (build_failed, the compiler's error naming the missing function),
the 4 with skip_k build and run but compute the wrong product (rolled back by evaluate), and the
winner is verified and none of those."""
import json
import subprocess
import sys

flotilla, h5 = sys.argv[1:]
s = json.loads(subprocess.run([flotilla, "results", "summary", h5, "--json", "--top", "20"], check=True,
                              capture_output=True, text=True).stdout)


def expect(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}\n{json.dumps(s, indent=1)[:6000]}")
    print(f"ok: {what}")


expect(s["progress"]["candidates"] == 16, "every candidate of the space was tried")
unbuilt = s["build_failed"]
expect(len(unbuilt) == 4 and all("patch=no_such_helper" in c["config"] for c in unbuilt),
       "the 4 no_such_helper variants failed to build")
expect(all("prefetch_row" in c["reason"] and "error" in c["reason"] for c in unbuilt),
       "each with the compiler's first error line")
rolled = s["rolled_back"]
expect(len(rolled) == 4 and all("patch=skip_k" in c["config"] for c in rolled),
       "the 4 skip_k variants were rolled back")
expect(all("wrong result" in c["reason"] for c in rolled), "each with the check's message")
expect(s["best_verified"] and "skip_k" not in s["best"]["config"] and "no_such_helper" not in s["best"]["config"],
       "the winner is verified and neither broken variant")
expect(s["progress"]["verified"] == 8, "the 8 other variants were verified")
