#!/bin/sh
# early_kill.sh FLOTILLA CONFIG WORK — SIGKILL `flotilla run` in its first milliseconds, again
# and again: whenever it dies, the results file is either absent or a campaign file that the
# next run resumes (a half-made file under the campaign's name used to strand it: "not an HDF5
# file", "truncated file"). The last run finishes the campaign.
set -eu
flotilla=$1 config=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
h5="$work/early.h5"
for delay in 0.000 0.005 0.010 0.015 0.020 0.030 0.040 0.050 0.060 0.080 0.100 0.150; do
  "$flotilla" run "$config" --campaign.results="$h5" --search.budget=4 --no-live >"$work/run.log" 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [ -e "$h5" ]; then
    "$flotilla" results summary "$h5" >/dev/null 2>"$work/summary.err" || {
      echo "after a kill at $delay s the file does not read:"; cat "$work/summary.err"; exit 1; }
  fi
done
ls -a "$work" | grep -q "creating" && echo "(a hidden half-made file is left; the next create removes it)"
"$flotilla" run "$config" --campaign.results="$h5" --search.budget=4 --no-live >"$work/final.log" 2>&1 || {
  cat "$work/final.log"; exit 1; }
if ls -a "$work" | grep -q "creating"; then echo "a half-made file was not removed"; ls -a "$work"; exit 1; fi
/usr/bin/python3 "$(dirname "$0")/check_campaign.py" "$h5"
echo ok
