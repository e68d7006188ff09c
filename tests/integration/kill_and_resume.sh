#!/usr/bin/env bash
# kill_and_resume.sh FLOTILLA CONFIG WORKDIR [--section.key=VALUE ...] — SIGKILL a running campaign mid-way, run it again,
# and check that it completes with no trial lost, changed or duplicated.
set -euo pipefail
flotilla=$1 config=$2 work=$3
shift 3
check="$(dirname "$0")/check_campaign.py"
rm -rf "$work" && mkdir -p "$work"
# (the results file and its jobs directory live under $work)
h5="$work/campaign.h5"
"$flotilla" run "$config" "$@" --campaign.results="$h5" --no-live >"$work/first.log" 2>&1 &
pid=$!
# Wait until some trials are recorded, reading the file while it is written (SWMR).
for _ in $(seq 1 600); do
  n=$("$flotilla" results summary "$h5" --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["progress"]["trials"])' 2>/dev/null || echo 0)
  [ "$n" -ge 8 ] && break
  kill -0 $pid 2>/dev/null || { echo "campaign ended before it could be killed"; cat "$work/first.log"; exit 1; }
  sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null || true
echo "killed after $n trials"
/usr/bin/python3 "$check" "$h5" --dump "$work/before.json"
"$flotilla" run "$config" "$@" --campaign.results="$h5" --no-live >"$work/second.log" 2>&1 || { cat "$work/second.log"; exit 1; }
grep -q "resuming" "$work/second.log"
/usr/bin/python3 "$check" "$h5" --compare-with "$work/before.json"
grep -q "budget of .* spent\|exhausted" "$work/second.log" || { echo "resumed campaign did not finish"; cat "$work/second.log"; exit 1; }
/usr/bin/python3 -c 'import json,sys; p=json.load(sys.stdin)["progress"]; sys.exit(p["pending"] != 0)' \
  < <("$flotilla" results summary "$h5" --json) || { echo "candidates left pending after resume"; exit 1; }
# Slurm (CHECK_JOBS_DIR=1): the restarted scheduler re-attached to its jobs instead of submitting
# their tasks again, so no (task, attempt) appears in two job manifests.
if [ "${CHECK_JOBS_DIR:-0}" = 1 ]; then
  /usr/bin/python3 "$(dirname "$0")/check_job_manifests.py" "$h5.jobs"
fi
# Jobs allocated at once (EXPECT_LAUNCHER=1): their launchers ran them, and survived the kill.
if [ "${EXPECT_LAUNCHER:-0}" = 1 ]; then
  ls "$h5.jobs"/*/launcher >/dev/null 2>&1 || { echo "no job was allocated at once"; exit 1; }
fi
# A deterministic campaign (COMPARE_WITH_CLEAN=1) must record exactly as many trials as an
# uninterrupted run of it; a benchmark's noisy objectives may change which candidates are verified.
if [ "${COMPARE_WITH_CLEAN:-1}" = 1 ]; then
  "$flotilla" run "$config" "$@" --campaign.results="$work/clean.h5" --no-live >"$work/clean.log" 2>&1
  want=$(/usr/bin/python3 -c 'import h5py,sys; print(len(h5py.File(sys.argv[1],"r")["trials"]))' "$work/clean.h5")
  /usr/bin/python3 "$check" "$h5" --expect-trials "$want"
fi
echo "resume ok: no trial lost, changed or duplicated; every candidate complete"
