#!/usr/bin/env bash
# hdf5.sh GFLOW REPO - `format: hdf5` end to end, read back with the HDF5
# tools (h5dump, Debian's hdf5-tools), never with gflow's own code: the
# dataset equals the raw output of the same run bit for bit; the attributes,
# the step and time scales and the XDMF beside it say what the run was; an
# interrupted run's file says complete FALSE; a full disk leaves nothing; a
# bad `format:` is refused where it is written.
set -uo pipefail
gflow=$1 repo=$2
. "$(dirname "$0")/lib.sh"
wave=$repo/workflows/wave2d.yaml
# Without h5dump the test is skipped (77, CTest's SKIP_RETURN_CODE); CI installs it.
command -v h5dump >/dev/null || { echo "hdf5.sh: h5dump not installed (apt-get install hdf5-tools)" >&2; exit 77; }

hdf5=(--set loop.tasks.1.output.format=hdf5 --set loop.tasks.1.output.file=u.h5)
small=(run "$wave" --backend cpu --set 'grid.shape=[64,48]' --set params.nt=60 --quiet)

# attr FILE NAME: the value of an attribute of the root group, as h5dump prints it
attr() { h5dump -a "/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): //p' | head -1; }
# values FILE DATASET: a dataset's values, one per line, at full precision
values() { h5dump -A 0 -d "$2" -y -w 0 -m '%.17g' "$1" 2>/dev/null | sed -n '/DATA {/,/}/p' |
  sed '1d;$d' | tr ',' '\n' | tr -d ' ' | sed '/^$/d'; }
# xml_ok FILE: well-formed XML (xmllint, else Python's parser)
xml_ok() {
  if command -v xmllint >/dev/null; then xmllint --noout "$1"; else
    python3 -c 'import sys, xml.etree.ElementTree as e; e.parse(sys.argv[1])' "$1"; fi
}

# ---- the same run in both formats: the same values -----------------------------
expect_exit 0 "raw run" -- "$gflow" "${small[@]}" --out "$tmp/raw"
expect_exit 0 "hdf5 run" -- "$gflow" "${small[@]}" "${hdf5[@]}" --out "$tmp/h5"
expect_contains "$(cd "$tmp/h5" && ls -A | tr '\n' ' ')" "run.json timings.json u.h5 u.h5.xdmf " \
  "hdf5 run: its files"
h5dump -d /U -b LE -o "$tmp/u.bin" "$tmp/h5/u.h5" >/dev/null 2>&1
if cmp -s "$tmp/u.bin" "$tmp/raw/array_out.dat"; then pass; else
  fail "the HDF5 dataset differs from the raw file ($(cmp "$tmp/u.bin" "$tmp/raw/array_out.dat" 2>&1))"
fi
# batches of 7 planes (the CPU backend's own choice is none): runs of planes
# written in place, one write each, and the same values
expect_exit 0 "hdf5 run, batches of 7" -- "$gflow" "${small[@]}" "${hdf5[@]}" \
  --set loop.tasks.1.output.batch=7 --out "$tmp/h5b"
h5dump -d /U -b LE -o "$tmp/ub.bin" "$tmp/h5b/u.h5" >/dev/null 2>&1
if cmp -s "$tmp/ub.bin" "$tmp/raw/array_out.dat"; then pass; else
  fail "the batched HDF5 dataset differs from the raw file ($(cmp "$tmp/ub.bin" "$tmp/raw/array_out.dat" 2>&1))"
fi
expect_contains "$(values "$tmp/h5b/u.h5" /step | tr '\n' ' ')" \
  "$( (echo -1; echo -1; seq 2 58; echo -1) | tr '\n' ' ')" "batched: step scale"
header=$(h5dump -H "$tmp/h5/u.h5" 2>&1)
expect_contains "$header" 'DATASET "U" {
      DATATYPE  H5T_IEEE_F32LE
      DATASPACE  SIMPLE { ( 60, 64, 48 ) / ( 60, 64, 48 ) }' "dataset dtype and shape"
chunks=$(h5dump -p -H -d /U "$tmp/h5/u.h5" 2>&1)
expect_contains "$chunks" "CHUNKED ( 1, 64, 48 )" "one chunk per plane"

# ---- what the file says ----------------------------------------------------------
meta=$(cat "$tmp/raw/array_out.dat.json")
dt=$(printf '%s' "$meta" | sed -n 's/^  "dt": \(.*\),$/\1/p')
expect_contains "$(attr "$tmp/h5/u.h5" complete)" "TRUE" "complete run: complete TRUE"
expect_contains "$(attr "$tmp/h5/u.h5" gflow_version)" "\"$("$gflow" --version | awk '{print $2}')\"" \
  "gflow_version"
expect_contains "$(attr "$tmp/h5/u.h5" steps_run)" "60" "steps_run"
expect_contains "$(h5dump -a /resolved_workflow "$tmp/h5/u.h5")" "shape: [64, 48]" "resolved workflow"
expect_contains "$(h5dump -a /U/spacing "$tmp/h5/u.h5")" "(0): 1, 1" "spacing"
expect_contains "$(h5dump -a /U/origin "$tmp/h5/u.h5")" "(0): 0, 0" "origin"
expect_contains "$(h5dump -a /valid_planes "$tmp/h5/u.h5")" "(0,0): 2, 58" "valid planes"
# step and time: plane p written by step p for p = 2 .. 58; time = step * dt
want_steps=$( (echo -1; echo -1; seq 2 58; echo -1) | tr '\n' ' ')
have_steps=$(values "$tmp/h5/u.h5" /step | tr '\n' ' ')
[ "$have_steps" = "$want_steps" ] && pass || fail "step scale: '$have_steps', expected '$want_steps'"
bad_times=$(paste -d ' ' <(values "$tmp/h5/u.h5" /step) <(values "$tmp/h5/u.h5" /time) |
  awk -v dt="$dt" '($1 < 0 && $2 != "nan") || ($1 >= 0 && $2 + 0 != $1 * dt) {print}')
[ -z "$bad_times" ] && [ -n "$dt" ] && pass || fail "time scale != step * dt ($dt): $bad_times"
# both scales on dimension 0, time last (the one netCDF readers take); x0, x1 on 1, 2
# (h5dump labels an entry "(i): " where its line wraps, which moves with the
# datasets' addresses: the labels are dropped)
scales=$(h5dump -a /U/DIMENSION_LIST "$tmp/h5/u.h5" | tr -s ' \n' ' ' | sed -E 's/\([0-9]+\): //g')
expect_contains "$scales" '"/step", DATASET ' "dimension 0: step"
expect_contains "$scales" '"/time"), (DATASET ' "dimension 0: time, last"
expect_contains "$scales" '"/x0"), (DATASET ' "dimension 1: x0"
expect_contains "$scales" '"/x1") }' "dimension 2: x1"
for s in step time x0 x1; do
  expect_contains "$(h5dump -a "/$s/CLASS" "$tmp/h5/u.h5")" '"DIMENSION_SCALE"' "$s is a dimension scale"
done
expect_contains "$(values "$tmp/h5/u.h5" /x1 | tail -1)" "47" "x1 = index * spacing"

# ---- the XDMF beside it ------------------------------------------------------------
xdmf=$tmp/h5/u.h5.xdmf
xml_ok "$xdmf" && pass || fail "the XDMF is not well-formed XML"
[ "$(grep -c '<Grid Name="plane' "$xdmf")" = 57 ] && pass || fail "the XDMF has not 57 planes"
expect_contains "$(cat "$xdmf")" '<Grid Name="plane 2" GridType="Uniform">
        <Time Value="'"$(awk -v dt="$dt" 'BEGIN {printf "%.17g", 2 * dt}')"'"/>
        <Topology TopologyType="2DCoRectMesh" Dimensions="64 48"/>' "XDMF plane 2 and its time"
expect_contains "$(cat "$xdmf")" '<DataItem Format="HDF" NumberType="Float" Precision="4" Dimensions="60 64 48">u.h5:/U</DataItem>' \
  "XDMF points at the dataset"

# ---- an interrupted run: complete FALSE ------------------------------------------------
interrupt_run "$tmp/int/.u.h5.partial-*" "$tmp/int.err" "$gflow" run "$wave" --backend cpu \
  --set 'grid.shape=[1024,1024]' --set 'loop.tasks.1.when=n % 16 == 2' "${hdf5[@]}" --quiet \
  --out "$tmp/int"
[ "$status" -eq 130 ] && pass || fail "interrupted hdf5 run: exit $status; $(cat "$tmp/int.err")"
step=$(sed -nE 's/^gflow: interrupted by SIGINT at step ([0-9]+); .*/\1/p' "$tmp/int.err")
expect_contains "$(attr "$tmp/int/u.h5" complete)" "FALSE" "interrupted: complete FALSE"
expect_contains "$(attr "$tmp/int/u.h5" interrupted_by)" '"SIGINT"' "interrupted_by"
expect_contains "$(attr "$tmp/int/u.h5" steps_run)" "${step:-?}" "interrupted: steps_run"
written=$(values "$tmp/int/u.h5" /step | awk '$1 >= 0' | wc -l)
expect_contains "$(attr "$tmp/int/u.h5" planes_written)" "$written" "planes_written = steps recorded"
[ "$(grep -c '<Grid Name="plane' "$tmp/int/u.h5.xdmf")" = "$written" ] && pass ||
  fail "interrupted: the XDMF lists other planes than the file's $written"
xml_ok "$tmp/int/u.h5.xdmf" && pass || fail "interrupted: the XDMF is not well-formed"

# ---- a full disk: nothing under a final name -------------------------------------------
expect_exit 74 "hdf5 past the file size limit" -- bash -c 'ulimit -f 256; exec "$@"' - "$gflow" \
  "${small[@]}" "${hdf5[@]}" --set 'grid.shape=[64,64]' --out "$tmp/fsize"
expect_contains "$err" "gflow: cannot write plane " "file size limit: which plane"
expect_contains "$err" "of $tmp/fsize/u.h5: File too large (the file size limit, ulimit -f, is reached)" \
  "file size limit: why"
[ -z "$(ls -A "$tmp/fsize")" ] && pass || fail "file size limit leaves $(ls -A "$tmp/fsize")"

# ---- bad values of format: -------------------------------------------------------------
expect_exit 65 "unknown format from --set" -- "$gflow" validate "$wave" --set loop.tasks.1.output.format=netcdf
expect_contains "$err" "gflow: --set loop.tasks.1.output.format=netcdf:1:28: unknown format 'netcdf'; expected one of: raw, hdf5" \
  "unknown format from --set"
finish
