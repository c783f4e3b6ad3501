#!/usr/bin/env bash
# test_sponge.sh GFLOW SPONGE_PLUGIN GFLOW_CONFIG REPO - the example plugin with
# a GPU launcher, on the CPU: it lists and its layer absorbs the wavefront
# (the last wavefield holds far less energy than without it); the same
# plugin built outside the tree with the one line of gflow-config loads and
# computes the same bits.
set -uo pipefail
gflow=$1 plugin=$2 config=$3 repo=$4
. "$repo/tests/integration/lib.sh"

expect_exit 0 "kernels sponge" -- "$gflow" kernels sponge --plugin "$plugin"
expect_contains "$out" "U *= exp(-(strength*k)^2)" "its equation"
expect_contains "$out" "width      int    default 20, range [1, 1e+06]" "its parameters"

energy() { od -A n -v -t f4 -w4 "$1" | awk '{ e += $1 * $1 } END { printf "%.6g", e }'; }
for s in 0 0.015; do
  expect_exit 0 "sponge.yaml, strength $s" -- "$gflow" run "$repo/plugins/sponge.yaml" \
    --plugin "$plugin" --backend cpu --quiet --set 'grid.shape=[128,128]' --set params.nt=600 --set params.strength=$s \
    --out "$tmp/s$s"
done
e0=$(energy "$tmp/s0/final.dat") e1=$(energy "$tmp/s0.015/final.dat")
awk -v a="$e0" -v b="$e1" 'BEGIN { exit !(a > 0 && b < 0.15 * a) }' && pass ||
  fail "energy with the layer $e1, without $e0: not absorbed"

# Outside the tree: the README's one line.
# shellcheck disable=SC2046
cc -O2 $("$config" --cflags) "$repo/plugins/sponge.c" $("$config" --libs) -o "$tmp/own.so" &&
  pass || fail "building the plugin with gflow-config"
[ "$("$config" --abi)" = "$(sed -n 's/^#define GF_ABI_VERSION \([0-9]*\).*/\1/p' "$repo/runner/gflow.h")" ] &&
  pass || fail "gflow-config --abi is not gflow.h's"
expect_exit 0 "the plugin built outside the tree" -- "$gflow" run "$repo/plugins/sponge.yaml" \
  --plugin "$tmp/own.so" --backend cpu --quiet --set 'grid.shape=[128,128]' --set params.nt=600 --set params.strength=0.015 \
  --out "$tmp/own"
cmp -s "$tmp/own/final.dat" "$tmp/s0.015/final.dat" && pass || fail "outside the tree, other bits"
finish
