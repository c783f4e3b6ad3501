#!/usr/bin/env bash
# slurm.sh GFLOW REPO - `gflow sweep --slurm` against a real Slurm: starts
# munged and a one-node cluster (slurmctld + slurmd) on this machine from a
# config written to a temporary folder, submits an 8-point sweep (2 schedules x 2 shapes x 2 memory strategies) as a job
# array, waits for it (bounded), and checks that every point completed with
# outputs bit-identical to running the same point directly. Then it submits
# scripts/slurm/run.sbatch itself, sends its batch shell SIGUSR1 as Slurm does
# before a time limit (scancel --signal=USR1 --batch): gflow checkpoints, the
# job requeues itself, the requeued run continues from the checkpoint and its
# outputs are bit-identical to a direct run. Last, scripts/slurm/mpi.sbatch
# runs a blur over 2 ranks through srun --mpi=pmix, its output bit-identical
# to one process's. The daemons are stopped by their
# process ids on exit, whatever happens.
#
# Needs root (slurmd runs jobs as their user) and the Debian packages
# slurm-wlm and munge; scripts/test.sh runs it as a stage of its own.
set -uo pipefail
gflow=$(realpath "$1") repo=$(realpath "$2")
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm.sh: needs root, slurm-wlm and munge; skipped"
  exit 0
fi
tmp=$(mktemp -d /tmp/gflow-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
stop_daemons() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap stop_daemons EXIT
own_tmp=1
. "$(dirname "$0")/lib.sh"
start=$SECONDS

# munge: a generated key, its own socket, started first.
mkdir -p "$tmp/munge" && chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
  --seed-file="$tmp/munge/munged.seed"
for _ in $(seq 50); do [ -s "$tmp/munge/munged.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$tmp/munge/munged.pid")")

host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$tmp/state" "$tmp/spool"
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=gflowtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$SLURM_CONF" -i
for _ in $(seq 100); do [ -s "$tmp/slurmctld.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$tmp/slurmctld.pid")")
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do [ -s "$tmp/slurmd.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$tmp/slurmd.pid")")
for _ in $(seq 150); do
  sinfo -h -o %T 2>/dev/null | grep -qE '^idle' && break
  sleep 0.2
done
state=$(sinfo -h -o %T 2>&1)
[ "$state" = idle ] && pass || fail "the node is not idle: $state; $(tail -5 "$tmp/slurmd.log")"

# The sweep: 2 schedules x 2 shapes, one point per array task, two at a time.
work=$tmp/work
mkdir -p "$work" && cd "$work"
cat >spec.yaml <<YAML
workflow: $repo/workflows/wave2d.yaml
name: cluster
jobs: 2
set: {loop.steps: 40}
matrix:
  schedule: [sync, events]
  grid.shape: [[48, 48], [64, 64]]
  memory.default: [device, pinned]
resources: {tasks: 1, cpus: 1, time: "00:05:00"}
YAML
expect_exit 0 "submit" -- "$gflow" sweep spec.yaml --slurm
job=$out
expect_contains "$err" "submitted job array $job: 8 of 8 points, at most 2 at a time" "submitted"
expect_contains "$(cat sweeps/cluster/sweep.sbatch)" "#SBATCH --array=0-7%2" "the array line"
deadline=$((SECONDS + 180))
while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ] && [ $SECONDS -lt $deadline ]; do sleep 1; done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && pass || fail "job $job still queued after 180 s"
logs=$(ls sweeps/cluster/slurm-"$job"_*.out 2>/dev/null | wc -l)
[ "$logs" -eq 8 ] && pass || fail "8 array task logs, got $logs"

# Every point complete: the same sweep run again skips them all and tables them.
expect_exit 0 "the table after the job" -- "$gflow" sweep spec.yaml
[ "$(printf '%s\n' "$out" | grep -c ' skipped ')" -eq 8 ] && pass ||
  fail "8 points complete: $out $err $(cat sweeps/cluster/*/gflow.log sweeps/cluster/slurm-*.out)"
# gflow collect: one row per point, the three varying keys as columns.
expect_exit 0 "collect" -- "$gflow" collect sweeps/cluster
[ "$(printf '%s\n' "$out" | grep -c '^| sweeps/cluster/p')" -eq 8 ] && pass || fail "collect: 8 rows: $out"
expect_contains "$out" "| grid.shape | schedule | memory.default |" "collect: the varying keys as columns"

# Bit-identical to each point run directly.
for dir in sweeps/cluster/p*/; do
  dir=${dir%/}
  schedule=$(grep -o '^schedule: [a-z]*' "$dir/config.yaml" | cut -d' ' -f2)
  shape=$(grep -o 'shape: \[[0-9]*, [0-9]*\]' "$dir/config.yaml" | head -1 | cut -d' ' -f2-)
  memory=$(grep -o 'default: [a-z]*' "$dir/config.yaml" | head -1 | cut -d' ' -f2)
  "$gflow" run "$repo/workflows/wave2d.yaml" --set loop.steps=40 --set schedule="$schedule" \
    --set "grid.shape=$shape" --set "memory.default=$memory" --out "direct/${dir##*/}" --quiet \
    2>/dev/null
  cmp -s "$dir/array_out.dat" "direct/${dir##*/}/array_out.dat" && pass ||
    fail "$dir differs from the direct run"
done
# ---- restart after a time limit: run.sbatch, SIGUSR1, requeue ----------------------
# The template as a user submits it, less its GPU line, on a run long enough
# to be signalled in the middle on an idle machine too (192 x 192, 8000
# steps, about 8 s; the snapshots stop at step 478).
sets="--set schedule=events --set 'grid.shape=[192,192]' --set loop.steps=8000"
sed -e '/--gpus-per-task/d' -e "s|--set schedule=events|$sets|" \
  "$repo/scripts/slurm/run.sbatch" >run.sbatch
export GFLOW=$gflow WORKFLOW=$repo/workflows/wave2d.yaml
expect_exit 0 "submit run.sbatch" -- sbatch --parsable --cpus-per-task=1 run.sbatch
job=$out
deadline=$((SECONDS + 120))
until compgen -G "out/$job/.array_out.dat.partial*" >/dev/null || [ $SECONDS -ge $deadline ]; do
  sleep 0.1
done
sleep 0.3
scancel --signal=USR1 --batch "$job" && pass || fail "scancel --signal=USR1 --batch $job"
# Slurm holds a requeued job about two minutes (reason BeginTime): begin now.
deadline=$((SECONDS + 60))
until [ -n "$(squeue -h -j "$job" -t PD 2>/dev/null)" ] || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
[ -n "$(squeue -h -j "$job" -t PD 2>/dev/null)" ] && pass || fail "job $job was not requeued"
scontrol update JobId="$job" StartTime=now
deadline=$((SECONDS + 240))
while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ] && [ $SECONDS -lt $deadline ]; do sleep 1; done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && pass || fail "job $job still queued after 240 s"
log=$(cat "gflow-$job.out" 2>/dev/null)
expect_contains "$log" "gflow: checkpointed at step " "run.sbatch: gflow checkpointed"
expect_contains "$log" "gflow checkpointed; requeueing job $job" "run.sbatch: requeued"
expect_contains "$log" "restarted from the checkpoint at step " "run.sbatch: the requeued run restarted"
expect_contains "$(cat "out/$job/run.json" 2>/dev/null)" '"complete": true' "run.sbatch: complete"
"$gflow" run "$WORKFLOW" --set schedule=events --set 'grid.shape=[192,192]' --set loop.steps=8000 \
  --out direct-run --quiet 2>/dev/null
cmp -s "out/$job/array_out.dat" direct-run/array_out.dat && pass ||
  fail "run.sbatch: the checkpointed and requeued job's outputs differ from a direct run; log: $log"
# ---- an MPI job: scripts/slurm/mpi.sbatch, srun --mpi=pmix, 2 ranks -------------------
# The template less its GPU and node lines, on the small blur split over two
# ranks: one output, bit-identical to one process's.
if command -v mpirun >/dev/null; then
  sed -e '/--gpus-per-task/d' -e '/--nodes=/d' -e 's/--ntasks-per-node=4/--ntasks=2/' \
    -e 's/--cpus-per-task=8/--cpus-per-task=1/' "$repo/scripts/slurm/mpi.sbatch" >mpi.sbatch
  # ranks started by srun: Open MPI keeps thousands of allocations to exit,
  # which LeakSanitizer would take minutes to list
  export WORKFLOW=$repo/tests/mpi/blur.yaml ASAN_OPTIONS=detect_leaks=0 OMP_NUM_THREADS=1
  expect_exit 0 "submit mpi.sbatch" -- sbatch --parsable mpi.sbatch
  job=$out
  deadline=$((SECONDS + 120))
  while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ] && [ $SECONDS -lt $deadline ]; do sleep 1; done
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && pass || fail "MPI job $job still queued after 120 s"
  log=$(cat "gflow-mpi-$job.out" 2>/dev/null)
  expect_contains "$(cat "out/$job/timings.json" 2>/dev/null)" '"ranks": 2' "srun --mpi=pmix: 2 ranks ($log)"
  "$gflow" run "$WORKFLOW" --out direct-blur --quiet 2>/dev/null
  cmp -s "out/$job/x.dat" direct-blur/x.dat && pass ||
    fail "the MPI job's output differs from one process's; log: $log"
  unset ASAN_OPTIONS OMP_NUM_THREADS
fi
echo "slurm.sh: cluster up, sweep, checkpointed and MPI jobs run and checked in $((SECONDS - start)) s"
finish
