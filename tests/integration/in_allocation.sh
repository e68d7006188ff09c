#!/bin/sh
# in_allocation.sh FLOTILLA WORK — a campaign run inside an allocation the user already holds:
# `salloc --nodes=2` around `flotilla run --resources.backend=mpi` (docs/slurm.md, "Inside an
# allocation"). The mpi backend's mpirun takes the allocation's nodes from Slurm and starts its
# ranks on them through srun, so the tasks must run on both nodes, and the campaign must reach
# the same winner as anywhere else. Needs SLURM_CONF of the test cluster.
set -eu
flotilla=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work"
cat >alloc.ini <<'INI'
[campaign]
name = alloc
seed = 1
[intent]
objective = score
baseline = x=1
[space]
param = x: int: 1..8
[explore]
# Each run notes the Slurm node it ran on (slurmstepd sets SLURMD_NODENAME for the step), and
# takes 0.3 s: runs of no time were all taken by the first node's two workers on a loaded
# machine before the second node's asked for one (seen once in CI-like load).
command = sh -c "echo $SLURMD_NODENAME >>nodes.txt; sleep 0.3; echo flotilla-metric: score=$0" {x}
repeats = 2
[search]
strategy = grid
budget = 7
batch = 7
[confirm]
enabled = false
INI
# The test cluster's nodes share one host: Open MPI's shared-memory transport would mix the two
# "nodes'" segments (docs/slurm.md, "The test cluster"); a real cluster needs no such line.
export OMPI_MCA_btl=self,tcp
# 3 slots a node: mpirun places rank 0 (the dispatcher) and 2 workers on the first node, 3
# workers on the second.
salloc --nodes=2 --ntasks-per-node=3 --partition=debug --time=5 --job-name=alloc-test \
  "$flotilla" run alloc.ini --resources.backend=mpi --resources.ranks=6 --no-live >run.log 2>&1 || {
  cat run.log
  exit 1
}
nodes=$(sort -u nodes.txt | tr '\n' ' ')
echo "tasks ran on: $nodes ($(wc -l <nodes.txt) runs)"
[ "$nodes" = "node1 node2 " ] || { echo "FAIL: expected tasks on node1 and node2"; cat run.log; exit 1; }
"$flotilla" results summary alloc.h5 --json | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["best"]["config"] == "x=8", s["best"]
assert s["progress"]["candidates"] == 8, s["progress"]
print("ok: the winner is x=8, 8 candidates")'
