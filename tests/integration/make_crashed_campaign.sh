#!/usr/bin/env bash
# make_crashed_campaign.sh FLOTILLA CONFIG OUT.h5 — runs CONFIG, reads its file while it runs (SWMR),
# and SIGKILLs it in the middle of a batch, so OUT.h5 is left exactly as a crash leaves it.
# Fails unless `flotilla results` reported the campaign as running while it ran.
set -euo pipefail
flotilla=$1 config=$2 out=$3
rm -f "$out"
"$flotilla" run "$config" --campaign.results="$out" --no-live >"$out.log" 2>&1 &
pid=$!
trials=0 state=none
for _ in $(seq 1 600); do
  read -r trials state < <("$flotilla" results summary "$out" --json 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["progress"]["trials"], d["run"]["state"])' \
    2>/dev/null || echo "0 none")
  [ "$trials" -ge 9 ] && break
  kill -0 $pid 2>/dev/null || { echo "campaign ended before it could be killed"; cat "$out.log"; exit 1; }
  sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null || true
[ "$state" = running ] || { echo "while it ran, flotilla results said '$state', not 'running'"; exit 1; }
echo "killed after $trials trials, mid-batch"
