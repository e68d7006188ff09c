#!/usr/bin/python3
"""check_staged_report.py FLOTILLA REPORT.txt UNTUNABLE... — checks the report of a staged campaign
([intent] stages = bottleneck) on facts, not timings: the baseline verified and was profiled; every
stage names its bottleneck, share, gain and verification, in order 1..n, each component once; stage 1
tuned the largest share of the profile (UNTUNABLE: components without parameters); every stage's
file has a verified winner; an accepted stage's gain is confirmed in interleaved pairs against
the incumbent, and its file says "confirmed faster"; the final winner is verified in the stage
file the report names."""
import json
import os
import re
import subprocess
import sys

flotilla, report_path, *untunable = sys.argv[1:]
lines = open(report_path).read().splitlines()
folder = os.path.dirname(report_path)


def fail(why):
    sys.exit(f"{why}\nreport:\n" + "\n".join(lines))


def summary(h5):
    return json.loads(subprocess.run([flotilla, "results", "summary", os.path.join(folder, h5), "--json"],
                                     check=True, capture_output=True, text=True).stdout)


def baseline_config_of(lines):
    return re.fullmatch(r"baseline   tokens_per_s \S+ \(verified\)   (.+)", line("baseline"))[1]


def line(prefix):
    found = [l for l in lines if l.startswith(prefix)]
    if len(found) != 1:
        fail(f"expected one line starting with {prefix!r}, found {len(found)}")
    return found[0]


profile = re.fullmatch(r"profile    tokens_per_s \S+ \(verified (\d+)/(\d+) shards\); shares: (.*)   (\S+)", line("profile"))
if not profile or profile[1] != profile[2]:
    fail("the profile line does not show a verified baseline")
shares = {name: float(value) for name, value in re.findall(r"(\w+) ([\d.]+)%", profile[3])}
tunable = {name: share for name, share in shares.items() if name not in untunable}

stage_re = re.compile(r"stage (\d+) +bottleneck (\w+) \(share ([\d.]+)%\): explored (\d+), (\d+) rolled back; "
                      r"chosen (.+); tokens_per_s (\S+) -> (\S+) \(\+([\d.]+)%"
                      r"(?:, confirmed ([\d.]+)x \[([\d.]+), ([\d.]+)\] in \d+ pairs)?\); "
                      r"(verified (\d+)/(\d+) shards|incumbent verified in an earlier stage)   (\S+)")
stages = [stage_re.fullmatch(l) for l in lines if l.startswith("stage ")]
if not stages or not all(stages):
    fail("missing or malformed stage lines")
if [int(s[1]) for s in stages] != list(range(1, len(stages) + 1)):
    fail("stages are not numbered 1..n")
names = [s[2] for s in stages]
if len(set(names)) != len(names) or any(n in untunable for n in names):
    fail("a component had two stages, or an untunable one had a stage")
if names[0] != max(tunable, key=tunable.get) or float(stages[0][3]) != tunable[names[0]]:
    fail(f"stage 1 did not take the largest share of the profile {tunable}")
for s in stages:
    kept = s[6] == "none (incumbent kept)"
    if kept != (float(s[9]) == 0.0):
        fail(f"stage {s[1]}: a kept incumbent must gain 0, an accepted candidate more")
    if not kept and (s[14] is None or s[14] != s[15]):
        fail(f"stage {s[1]}: the chosen candidate is not verified on every shard")
    stage_summary = summary(s[16])
    if not stage_summary["best_verified"]:
        fail(f"stage {s[1]}: {s[16]} has no verified winner")
    if not kept:
        ratio, low, high = float(s[10]), float(s[11]), float(s[12])
        if not (low > 1.0 and low <= ratio <= high) or stage_summary["verdict"] != "confirmed faster":
            fail(f"stage {s[1]}: an accepted stage must be confirmed faster than the incumbent")
        if abs(float(s[9]) - 100 * (ratio - 1)) > 1.0:
            fail(f"stage {s[1]}: its gain is not its confirmed ratio")
    elif stage_summary["verdict"] == "confirmed faster":
        fail(f"stage {s[1]}: a confirmed winner was not accepted")
if not line("stop       "):
    fail("no stop reason")

best = re.fullmatch(r"best       tokens_per_s \S+ \(verified in stage (\d+); (.+?)\)   (.+)", line("best"))
if not best:
    fail("the best line does not show a verified winner")
k = int(best[1])
best = [best[0], best[1], best[3], best[2]]  # [line, stage, config, how the whole gain was measured]
# The whole gain is measured: the winner against the original baseline in interleaved pairs, in
# RESULTS.final.h5 (issue 34: 2.47x "over the stages" was the product of the stages' ratios).
finals = [l for l in lines if l.startswith("final      ")]
if k > 0:
    if len(finals) != 1:
        fail("an accepted stage, and no final line measuring the winner against the original baseline")
    final = re.fullmatch(r"final      the winner against the original baseline: (.+) \(stages: (.+)\)   (\S+)", finals[0])
    if not final:
        fail("malformed final line")
    final_summary = summary(final[3])
    fw = [c for c in final_summary["top"] if c["origin"] != "baseline"]
    if len(fw) != 1 or fw[0]["config"] != best[2] or final_summary["baseline"]["config"] != baseline_config_of(lines):
        fail(f"the final file does not hold the winner against the original baseline: {final_summary}")
    confirmation = fw[0].get("confirmation") or {}
    if confirmation.get("verdict") == "faster":
        expected = f"confirmed {confirmation['ratio']:.3g}x"
        if not final[1].startswith(expected) or best[3] != final[1]:
            fail(f"the final and best lines do not quote the final confirmation ({expected})")
    print(f"ok: the winner measured against the original baseline: {final[1]}")
elif finals:
    fail("no stage was accepted, yet a final line")
baseline_config = re.fullmatch(r"baseline   tokens_per_s \S+ \(verified\)   (.+)", line("baseline"))[1]
stage_file = profile[4] if k == 0 else stages[k - 1][16]
winner = summary(stage_file)["best"]
if k > 0 and (winner["config"] != best[2] or winner["status"] != "verified"):
    fail(f"the winner {best[2]!r} is not the verified best of {stage_file}: {winner}")
if k == 0 and best[2] != baseline_config:
    fail("no stage was accepted, yet the winner is not the baseline")
print(f"ok: {len(stages)} stages ({', '.join(names)}), winner verified in stage {k}")
