#!/usr/bin/env bash
# kernels.sh GFLOW COMPARE_RAW REPO - the built-in kernels end to end on the
# CPU backend: `gflow kernels NAME`, the workflows of wave, heat and stencil
# (the declared stencil computes what the built-in kernel of the same scheme
# does), their stability conditions and located errors for cells outside the grid.
set -uo pipefail
gflow=$1 compare=$2 repo=$3
. "$(dirname "$0")/lib.sh"

expect_exit 0 "kernels wave" -- "$gflow" kernels wave
expect_contains "$out" "U2 = 2*U1 - U0 + dt^2 * V^2 * lap(U1) + amplitude * pattern" "the equation"
expect_contains "$out" "the halo ring is never written" "the boundary"
expect_contains "$out" "per point (timing report): 16 bytes (f32 fields; f64: twice), 19 flops" "the costs"
expect_contains "$out" "order      int    default 4, range [2, 8]" "a parameter with its default and range"
expect_contains "$out" "sources    cells  default: none" "a list parameter"
[ "$(printf '%s\n' "$out" | grep -c '^[a-z]')" = 1 ] && pass || fail "kernels wave lists more than wave"
expect_exit 65 "kernels of an unknown name" -- "$gflow" kernels nope
expect_contains "$err" "gflow: unknown kernel 'nope'; known kernels: wave2d_4o, blur, wave, heat, stencil" "unknown kernel"

# A declared stencil of the wave scheme against `wave` on the same scheme.
expect_exit 0 "run stencil.yaml" -- "$gflow" run "$repo/workflows/stencil.yaml" --backend cpu \
  --quiet --out "$tmp/s"
"$compare" "$tmp/s/stencil.dat" "$tmp/s/wave.dat" $((192 * 160)) 1e-4 --nonzero 0 0 >"$tmp/cmp" &&
  pass || fail "stencil against wave: $(cat "$tmp/cmp")"

expect_exit 0 "run heat.yaml" -- "$gflow" run "$repo/workflows/heat.yaml" --backend cpu --quiet \
  --out "$tmp/h"
cell() { od -A n -t f8 -j $((8 * ($2 * 96 + $3))) -N 8 "$1" | tr -d ' '; }
spot=$(cell "$tmp/h/final.dat" 40 48) sink=$(cell "$tmp/h/final.dat" 90 48)
awk -v s="$spot" -v k="$sink" 'BEGIN { exit !(s > 0.5 && s < 0.8 && k < 0) }' && pass ||
  fail "heat: the spot is $spot, the sink $sink"
expect_exit 65 "heat.yaml unstable" -- "$gflow" run "$repo/workflows/heat.yaml" --backend cpu \
  --quiet --set params.dt=5 --out "$tmp/hu"
expect_contains "$err" "kernel heat is unstable with these arguments: alpha*dt*(sum of 1/dx^2) is 0.4, above 0.375" "heat stability"

expect_exit 0 "run wave3d.yaml, order 2" -- "$gflow" run "$repo/workflows/wave3d.yaml" \
  --backend cpu --quiet --set 'grid.shape=[64,96,96]' --set params.order=2 --set grid.halo=1 \
  --set params.nt=20 --out "$tmp/w"
expect_exit 0 "wave3d.yaml unstable, validate" -- "$gflow" validate "$repo/workflows/wave3d.yaml" \
  --set params.cfl=0.5
expect_contains "$err" "kernel wave is unstable with these arguments: |V|*dt*sqrt(sum of 1/dx^2) is 0.866, above 0.7844" "wave stability"
expect_exit 65 "a source outside the grid" -- "$gflow" validate "$repo/workflows/wave3d.yaml" \
  --set 'grid.shape=[32,32,32]'
expect_contains "$err" "wave3d.yaml:46:20: argument 'sources' of wave: index 40 is outside the grid (0..31) on axis 0" "located, not a crash"
finish
