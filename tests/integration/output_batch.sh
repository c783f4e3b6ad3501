#!/usr/bin/env bash
# output_batch.sh GFLOW REPO - batched snapshot IO on the CPU backend: under
# every schedule, with a copy per plane (batch: 1), batches that divide the
# planes written and batches that do not (the last one flushed at the end),
# and the batch gflow chooses (given up on the CPU backend: a plane at a
# time; a batch given is staged directly there, each plane copied once into
# its place in the batch's staging buffer), the raw file and its sidecar
# are bit for bit the same, and so is the HDF5 dataset with its step scale
# (when h5dump is there); outputs every third step into every third plane
# likewise. The staging budget holds: a plane larger than the old rule's
# eight planes allow gets the buffers the budget holds (the trace's pinned
# bytes and staging buffers in use stay within it), batches of small planes
# fill it with fewer, larger buffers; a budget of no plane is refused. Under
# auto, batches are read straight from the field's grown ring, unless growing
# it would change what the loop reads.
set -uo pipefail
gflow=$1
repo=$2
. "$repo/tests/integration/lib.sh"
wave=$repo/workflows/wave2d.yaml
# 64 x 48, 60 steps: planes 2 .. 58 written, 57 of them
small=(run "$wave" --backend cpu --set 'grid.shape=[64,48]' --set params.nt=60 --quiet)
hdf5=(--set loop.tasks.1.output.format=hdf5 --set loop.tasks.1.output.file=u.h5)
have_h5dump=0
command -v h5dump >/dev/null && have_h5dump=1

# same DIR REF WHAT: DIR's raw file is REF's, bit for bit, and its sidecar
# says the same of it (all but the run's settings: schedule, device, workflow)
same() {
  cmp -s "$1/array_out.dat" "$2/array_out.dat" && pass || fail "$3: array_out.dat differs"
  python3 - "$1/array_out.dat.json" "$2/array_out.dat.json" <<'PY' && pass || fail "$3: the sidecar differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
settings = {"schedule", "device", "resolved_workflow"}
sys.exit(0 if {k: v for k, v in a.items() if k not in settings} == {k: v for k, v in b.items() if k not in settings} else 1)
PY
}
# same_h5 DIR REF WHAT: the dataset /U and the scale /step, read back by h5dump
same_h5() {
  h5dump -d /U -b LE -o "$1/u.bin" "$1/u.h5" >/dev/null 2>&1
  h5dump -d /step -b LE -o "$1/step.bin" "$1/u.h5" >/dev/null 2>&1
  cmp -s "$1/u.bin" "$2/u.bin" && pass || fail "$3: the HDF5 dataset differs"
  cmp -s "$1/step.bin" "$2/step.bin" && pass || fail "$3: the HDF5 step scale differs"
}

# ---- the reference: events, a copy per plane ----------------------------------
expect_exit 0 "reference run" -- "$gflow" "${small[@]}" --set loop.tasks.1.output.batch=1 \
  --out "$tmp/ref"
expect_contains "$(cat "$tmp/ref/array_out.dat.json")" '"valid_planes": [[2, 58]]' "reference planes"
if [ $have_h5dump = 1 ]; then
  expect_exit 0 "reference hdf5 run" -- "$gflow" "${small[@]}" "${hdf5[@]}" \
    --set loop.tasks.1.output.batch=1 --out "$tmp/ref5"
  h5dump -d /U -b LE -o "$tmp/ref5/u.bin" "$tmp/ref5/u.h5" >/dev/null 2>&1
  h5dump -d /step -b LE -o "$tmp/ref5/step.bin" "$tmp/ref5/u.h5" >/dev/null 2>&1
  cmp -s "$tmp/ref5/u.bin" "$tmp/ref/array_out.dat" && pass || fail "reference: hdf5 != raw"
fi

# ---- every schedule, every batch: the same bits -------------------------------
# 57 planes: 1, 3 (divides), 8 and 16 (a partial batch left at the end), auto (57 here)
for schedule in sync streams events graph auto; do
  for batch in 1 3 8 16 auto; do
    set_batch=()
    [ "$batch" = auto ] || set_batch=(--set "loop.tasks.1.output.batch=$batch")
    what="$schedule, batch $batch"
    expect_exit 0 "$what" -- "$gflow" "${small[@]}" --set schedule=$schedule "${set_batch[@]}" \
      --out "$tmp/r-$schedule-$batch"
    same "$tmp/r-$schedule-$batch" "$tmp/ref" "$what"
    if [ $have_h5dump = 1 ]; then
      expect_exit 0 "$what, hdf5" -- "$gflow" "${small[@]}" "${hdf5[@]}" --set schedule=$schedule \
        "${set_batch[@]}" --out "$tmp/h-$schedule-$batch"
      same_h5 "$tmp/h-$schedule-$batch" "$tmp/ref5" "$what, hdf5"
    fi
    rm -rf "$tmp/r-$schedule-$batch" "$tmp/h-$schedule-$batch"
  done
done
expect_exit 0 "auto batch on the CPU backend" -- "$gflow" "${small[@]}" --out "$tmp/cpu-auto"
expect_contains "$(cat "$tmp/cpu-auto/run.json")" '"staging": 60, "staging_budget": 268435456}' \
  "the CPU backend: the batch gflow chose given up, a buffer a plane"
same "$tmp/cpu-auto" "$tmp/ref" "the CPU backend, the batch gflow chose given up"
expect_exit 0 "auto batch, validate" -- "$gflow" validate "$wave" --set 'grid.shape=[64,48]' \
  --set params.nt=60
expect_contains "$out" "batches of 60 planes (720.0 KiB copies) on a GPU (where the device is the host, a plane at a time)" \
  "the batch chosen: every plane in one copy, on a GPU"

# ---- batches straight from the field's ring (schedule auto) ---------------------
# The seed's U is a ring of 5; under auto a batch of 16 is read from U's own
# ring, grown to 32 (two batches beyond the 5), one block: no copy a plane.
expect_exit 0 "from the ring, validate" -- "$gflow" validate "$wave" --set 'grid.shape=[64,48]' \
  --set params.nt=60 --set schedule=auto --set loop.tasks.1.output.batch=16
expect_contains "$out" "57 planes written in batches of 16 planes (192.0 KiB copies) straight from U's ring (32 instances, grown from 5)" \
  "from the ring: the output"
expect_contains "$out" "U 32 x 12.0 KiB" "from the ring: the grown ring"
expect_contains "$out" "note      the 2 \`after:\` edges to and from 'snapshot' ordered its copies for a ring of 5; schedule auto orders its batches by what they read" \
  "from the ring: the seed's after edges, written for a ring of 5, are left to auto"
expect_contains "$out" "snapshot     output array_out.dat  on drain        runs at 4 of 60 steps" \
  "from the ring: one copy a batch, on the drain stream"
# A ring that cannot grow without changing what the loop reads: U0 = U[n+4]
# is U[n-1] in a ring of 5 (its index is written later), another plane in a
# ring of 32. It keeps its 5 instances and the copy per plane into the output's ring.
aliased=(--set 'loop.tasks.0.args.U0=U[n+4]' --set 'loop.tasks.0.after=[]'
  --set 'loop.tasks.1.after=[]')
expect_exit 0 "an aliasing ring, validate" -- "$gflow" validate "$wave" --set 'grid.shape=[64,48]' \
  --set params.nt=60 --set schedule=auto --set loop.tasks.1.output.batch=16 "${aliased[@]}"
expect_contains "$out" "U 5 x 12.0 KiB" "an aliasing ring keeps its 5 instances"
[[ "$out" == *"straight from"* ]] && fail "an aliasing ring: a batch from it" || pass
expect_exit 0 "an aliasing ring, a copy per plane" -- "$gflow" "${small[@]}" "${aliased[@]}" \
  --set schedule=auto --set loop.tasks.1.output.batch=1 --out "$tmp/alias1"
expect_exit 0 "an aliasing ring, batches of 16" -- "$gflow" "${small[@]}" "${aliased[@]}" \
  --set schedule=auto --set loop.tasks.1.output.batch=16 --out "$tmp/alias16"
same "$tmp/alias16" "$tmp/alias1" "an aliasing ring, batches of 16"
cmp -s "$tmp/alias1/array_out.dat" "$tmp/ref/array_out.dat" && fail "the aliasing kernel computed the seed's planes" || pass

# ---- outputs every third step, into every third plane ---------------------------
every=(--set 'loop.tasks.1.when=n % 3 == 0' --set 'loop.tasks.1.output.plane=n // 3'
  --set loop.tasks.1.output.planes=20)
expect_exit 0 "every third step, batch 1" -- "$gflow" "${small[@]}" "${every[@]}" \
  --set loop.tasks.1.output.batch=1 --out "$tmp/e1"
expect_contains "$(cat "$tmp/e1/array_out.dat.json")" '"valid_planes": [[0, 19]]' "every third step"
for batch in 4 7; do
  expect_exit 0 "every third step, batch $batch" -- "$gflow" "${small[@]}" "${every[@]}" \
    --set schedule=auto --set "loop.tasks.1.output.batch=$batch" --out "$tmp/e$batch"
  same "$tmp/e$batch" "$tmp/e1" "every third step, batch $batch"
done
# plane n // 3 of step 3 p is the reference's plane 3 p
python3 - "$tmp/e1/array_out.dat" "$tmp/ref/array_out.dat" <<'PY' && pass || fail "every third step: not the reference's planes"
import sys
plane = 64 * 48 * 4
e, r = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
sys.exit(0 if all(e[p * plane:(p + 1) * plane] == r[3 * p * plane:(3 * p + 1) * plane] for p in range(1, 20)) else 1)
PY

# ---- the staging budget ---------------------------------------------------------
# pinned_peak TRACE: the most pinned bytes held and staging buffers in use at once
peaks() {
  python3 - "$1" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
def peak(name, key): return max([e["args"][key] for e in events if e["ph"] == "C" and e["name"] == name] or [0])
print(peak("memory held: pinned", "bytes"), peak("output staging buffers in use", "buffers"))
PY
}
# 512 x 512 f32 (1 MiB planes) with 3 MiB: the old rule took 8 planes (8 MiB);
# now 3 buffers of one plane each
big=(run "$wave" --backend cpu --set 'grid.shape=[512,512]' --set params.nt=24 --quiet)
expect_exit 0 "a 3 MiB budget, 1 MiB planes" -- "$gflow" "${big[@]}" --set memory.staging=3MiB \
  --out "$tmp/b3" --trace "$tmp/b3.json"
read -r pinned buffers <<<"$(peaks "$tmp/b3.json")"
[ "$pinned" -ge $((3 << 20)) ] && [ "$pinned" -le $(((3 << 20) + 4096)) ] && pass ||
  fail "3 MiB budget: $pinned pinned bytes (3 staging buffers and the check's results)"
[ "$buffers" -ge 1 ] && [ "$buffers" -le 3 ] && pass || fail "3 MiB budget: $buffers buffers in use"
expect_contains "$(cat "$tmp/b3/run.json")" '"staging": 3, "staging_budget": 3145728}' \
  "3 MiB budget: run.json"
expect_exit 0 "1 MiB planes, batch 1, default budget" -- "$gflow" "${big[@]}" \
  --set loop.tasks.1.output.batch=1 --out "$tmp/b0"
same "$tmp/b3" "$tmp/b0" "3 MiB budget"
# 64 x 48 planes (12 KiB) in 256 KiB: batches of 5 (a quarter of the 21
# planes the budget holds, as validate shows), 4 buffers of 60 KiB
expect_exit 0 "a 256 KiB budget, 12 KiB planes" -- "$gflow" "${small[@]}" \
  --set memory.staging=256KiB --set loop.tasks.1.output.batch=5 --out "$tmp/s" --trace "$tmp/s.json"
read -r pinned buffers <<<"$(peaks "$tmp/s.json")"
[ "$pinned" -le $(((256 << 10) + 4096)) ] && [ "$pinned" -ge $((4 * 5 * 12 << 10)) ] && pass ||
  fail "256 KiB budget: $pinned pinned bytes"
expect_contains "$(cat "$tmp/s/run.json")" '"staging": 4, "staging_budget": 262144}' \
  "256 KiB budget: run.json"
same "$tmp/s" "$tmp/ref" "256 KiB budget"
expect_exit 0 "validate shows the staging" -- "$gflow" validate "$wave" --set 'grid.shape=[64,48]' \
  --set params.nt=60 --set memory.staging=256KiB
expect_contains "$out" "4 output staging buffers x 60.0 KiB" "validate: the buffers"
expect_contains "$out" "batches of 5 planes" "validate: the batch"
# a budget of less than a plane: refused at its key
expect_exit 65 "a budget of no plane" -- "$gflow" "${big[@]}" --set memory.staging=512KiB \
  --out "$tmp/no"
expect_contains "$err" "gflow: --set memory.staging=512KiB:1:" "no plane: located"
expect_contains "$err" "the output staging budget (512.0 KiB) holds no batch of 'array_out.dat' (1 plane, 1.0 MiB); raise memory.staging (a plane is not copied in pieces)" \
  "no plane: message"


# ---- two batched outputs, and a plane at a time, sharing the staging ----------------
# Staged directly, an output holds a buffer through its open batch: with
# buffers for fewer outputs than that, the others go through a ring, so a
# buffer always comes free (the run would hang otherwise: timeout 60).
two=$tmp/two.yaml
sed 's|^schedule: events$||' "$wave" >"$two"
cp "$repo/workflows/ricker.lua" "$tmp/"
cat >>"$two" <<'YAML'
    - name: again
      output: {from: "U[n]", file: again.dat, planes: nt, batch: 4}
      when: "n > 1 and n < nt - 1"
      stream: "io[n % 5]"
      after: [step@n-2]
    - name: each
      output: {from: "U[n]", file: each.dat, planes: nt, batch: 1}
      when: "n > 1 and n < nt - 1"
      stream: "io[n % 5]"
      after: [step@n-2]
schedule: events
YAML
sed -i 's|after: \[snapshot@n-3\]|after: [snapshot@n-3, again@n-3, each@n-3]|' "$two"
for budget in 1 2 3 8; do # in batches of 4 planes: one buffer, two, three, eight
  expect_exit 0 "two batched outputs and one plane by plane, staging $budget" -- timeout -k 5 60 \
    "$gflow" run "$two" --backend cpu --set 'grid.shape=[64,48]' --set params.nt=60 --quiet \
    --set loop.tasks.1.output.batch=4 --set memory.staging=$((budget * 4)) --out "$tmp/two-$budget"
  for f in array_out.dat again.dat each.dat; do
    cmp -s "$tmp/two-$budget/$f" "$tmp/ref/array_out.dat" && pass ||
      fail "staging $budget: $f differs from the reference's array_out.dat"
  done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
