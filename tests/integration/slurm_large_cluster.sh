#!/usr/bin/env bash
# slurm_large_cluster.sh NODES — the simulated large cluster of slurm-local.sh (SLURM_LOCAL_NODES)
# on this host, on the ports of SLURM_LOCAL_*_PORT: it starts, every node is up in the partitions
# it should be in (debug, gb200, scale, scalegpu), the GPU nodes of `scalegpu` give a job 4 GPUs,
# a job array spreads over the `scale` nodes, and stop leaves no daemon of it behind. Prints the
# RSS of its slurmd (ps). The cluster is stopped by PID whatever happens.
set -euo pipefail
nodes=$1
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/slurm/slurm-local.sh"
cluster=$(mktemp -d /tmp/flotilla-large.XXXXXX)
chmod 755 "$cluster"  # munged wants its socket directory reachable by all
trap '"$script" stop "$cluster" >/dev/null 2>&1 || true; rm -rf "$cluster"' EXIT
export SLURM_LOCAL_NODES=$nodes
start=$(date +%s.%N)
"$script" start "$cluster" >/dev/null
echo "started $nodes slurmd in $(echo "$(date +%s.%N) - $start" | bc) s"
export SLURM_CONF="$cluster/etc/slurm.conf"
fail() { echo "slurm_large_cluster: $*" >&2; sinfo >&2 || true; exit 1; }

# Partitions and node counts, as slurm-local.sh documents them: the last quarter of node5..N has GPUs.
gpu=$(( (nodes - 4) / 4 )) cpu=$(( nodes - 4 - (nodes - 4) / 4 ))
want=$(printf 'debug 2\ngb200 2\nscale %s\nscalegpu %s' "$cpu" "$gpu")
got=$(sinfo -h -o '%R %D' | sort -k1,1 | awk '{print $1, $2}')
[ "$got" = "$(sort -k1,1 <<<"$want")" ] || fail "partitions: $(tr '\n' ';' <<<"$got"), want $(tr '\n' ';' <<<"$want")"
idle=$(sinfo -h -N -o '%N %t' | sort -u | grep -c ' idle$' || true)
[ "$idle" = "$nodes" ] || fail "$idle of $nodes nodes idle"

# A GPU node of the scale part: a job asking for its 4 GPUs sees 4 devices.
sbatch --wait -p scalegpu --gpus-per-node=4 -o "$cluster/gpu.out" --wrap 'echo "gpus=$CUDA_VISIBLE_DEVICES"' >/dev/null ||
  fail "the GPU job on scalegpu failed"
[ "$(cat "$cluster/gpu.out")" = "gpus=0,1,2,3" ] || fail "the GPU job on scalegpu saw: $(cat "$cluster/gpu.out")"
# One array element per scale node at once (--exclusive): every element completes.
sbatch --wait -p scale --exclusive --array=0-$((cpu - 1)) -o /dev/null --wrap 'hostname' >/dev/null ||
  fail "a $cpu-element array on scale did not complete"
done_elements=$(squeue -h -t all -p scale -o '%T' | grep -c COMPLETED || true)
[ "$done_elements" = "$cpu" ] || fail "$done_elements of $cpu array elements COMPLETED"

rss=$(for f in "$cluster"/run/slurmd-*.pid; do ps -o rss= -p "$(cat "$f")"; done | sort -n)
echo "slurmd RSS KiB: min $(head -1 <<<"$rss") median $(sed -n "$(( (nodes + 1) / 2 ))p" <<<"$rss") max $(tail -1 <<<"$rss")," \
     "total $(awk '{s += $1} END {printf "%.0f", s / 1024}' <<<"$rss") MiB"
pids=$(cat "$cluster"/run/*.pid "$cluster"/munge/munged.pid)
"$script" stop "$cluster" >/dev/null
# (a daemon killed at the end of stop's wait may take a moment to be gone)
for p in $pids; do
  for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  ! kill -0 "$p" 2>/dev/null || fail "pid $p ($(ps -o comm= -p "$p")) still runs 3 s after stop"
done
echo "slurm_large_cluster: $nodes nodes, partitions, GPUs and an array as expected; stopped"
