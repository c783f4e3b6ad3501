# lib.sh - what the benchmark scripts share (sourced by gpu.sh, pool.sh,
# kernels.sh and ghost_exchange.sh): a temporary folder for outputs in /dev/shm
# (else $TMPDIR), removed on exit, and helpers (json, low, median, quantile,
# calc, gflow_run and gflow_ms, with PIN's pinning). Set `bin` (the binaries'
# folder) and `repeat` first; `gflow` (default $bin/gflow) and `backend`
# (default gpu) may be set too.
out=/dev/shm
[ -d "$out" ] && [ -w "$out" ] || out=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$out/gflow-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

json() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -1; }
low() { sort -g | head -1; }
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# quantile Q: the Q-quantile (0..1) of the numbers on stdin, interpolated
quantile() {
  sort -g | awk -v q="$1" '{v[NR] = $1} END {p = 1 + q * (NR - 1); i = int(p); print v[i] + (p - i) * (v[i + 1 < NR ? i + 1 : NR] - v[i])}'
}
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

# PIN (a CPU list, e.g. 0-3): gflow runs under `taskset -c $PIN`, so that a
# loop bound by the host's issue does not move between cores from run to run.
pinned=()
[ -n "${PIN:-}" ] && pinned=(taskset -c "$PIN")

# gflow_run WORKFLOW [--set ...]: one run, its outputs in $tmp/g; prints
# the loop's time in ms and the median step on the host in us (timings.json's
# total_s and host_step_us), "nan nan" when it fails
gflow_run() {
  local wf=$1
  shift
  rm -rf "$tmp/g"
  "${pinned[@]}" "${gflow:-$bin/gflow}" run "$wf" --backend "${backend:-gpu}" --quiet --out "$tmp/g" "$@" 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; echo "nan nan"; return; }
  echo "$(calc "$(json "$tmp/g/timings.json" total_s) * 1000")" \
    "$(sed -n 's/.*"host_step_us": {"median": \([0-9.e+-]*\).*/\1/p' "$tmp/g/timings.json")"
}

# gflow_ms WORKFLOW [--set ...]: gflow's loop time in ms, best of $repeat runs
gflow_ms() {
  for _ in $(seq "$repeat"); do gflow_run "$@" | cut -d' ' -f1; done | low
}
