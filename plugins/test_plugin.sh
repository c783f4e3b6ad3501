#!/usr/bin/env bash
# test_plugin.sh GFLOW PLUGIN PLUGIN_ABI999 REPO - a kernel plugin end to end:
# it lists, it runs and computes what diffusion must give, and a plugin built
# for another ABI is refused.
set -uo pipefail
gflow=$1 plugin=$2 wrong=$3 repo=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$repo/tests/integration/lib.sh"

expect_exit 0 "kernels with the plugin" -- "$gflow" kernels --plugin "$plugin"
expect_contains "$out" "heat2d" "the plugin's kernel is listed"
expect_contains "$out" "alpha      real" "its parameters are listed"
expect_exit 65 "workflow without the plugin" -- "$gflow" validate "$repo/plugins/heat2d.yaml"
expect_contains "$err" "unknown kernel 'heat2d'" "without the plugin the kernel is unknown"

# One step from a unit spike with r = 0.1: 1 - 4r at the centre, r beside it.
expect_exit 0 "run with the plugin" -- "$gflow" run "$repo/plugins/heat2d.yaml" --plugin "$plugin" \
  --backend cpu --quiet --out "$tmp/o"
cell() { od -A n -t f8 -j $((8 * ($1 * 17 + $2))) -N 8 "$tmp/o/final.dat" | tr -d ' '; }
[ "$(cell 8 8)" = "0.6" ] && pass || fail "centre is $(cell 8 8), expected 0.6"
[ "$(cell 7 8)" = "0.1" ] && [ "$(cell 8 9)" = "0.1" ] && pass || fail "neighbours are $(cell 7 8) $(cell 8 9)"
[ "$(cell 7 7)" = "0" ] && [ "$(cell 0 0)" = "0" ] && pass || fail "diagonal $(cell 7 7), corner $(cell 0 0)"

# The plugin's stability condition: alpha*dt*(1/dx0^2 + 1/dx1^2) = 0.6 > 1/2.
expect_exit 0 "validate an unstable heat2d" -- "$gflow" validate "$repo/plugins/heat2d.yaml" \
  --plugin "$plugin" --set params.dt=0.3
expect_contains "$err" "heat2d.yaml:17:15: note: task 'diffuse': kernel heat2d is unstable with these arguments: alpha*dt*(1/dx0^2 + 1/dx1^2) is 0.6, above 1/2, the stability limit of explicit diffusion; gflow run refuses it without --allow-unstable" "validate notes instability"
expect_exit 65 "run an unstable heat2d" -- "$gflow" run "$repo/plugins/heat2d.yaml" \
  --plugin "$plugin" --set params.dt=0.3 --backend cpu --quiet --out "$tmp/u"
expect_contains "$err" "heat2d.yaml:17:15: task 'diffuse': kernel heat2d is unstable with these arguments: alpha*dt*(1/dx0^2 + 1/dx1^2) is 0.6, above 1/2, the stability limit of explicit diffusion; pass --allow-unstable to run it anyway" "run refuses instability"
[ ! -e "$tmp/u" ] && pass || fail "a refused run created its output folder"
expect_exit 0 "run an unstable heat2d, allowed" -- "$gflow" run "$repo/plugins/heat2d.yaml" \
  --plugin "$plugin" --set params.dt=0.3 --backend cpu --quiet --out "$tmp/u" --allow-unstable
expect_contains "$err" "running it anyway (--allow-unstable)" "run --allow-unstable notes it"

expect_exit 65 "plugin for another ABI" -- "$gflow" kernels --plugin "$wrong"
expect_contains "$err" "gflow: plugin $wrong was built for gflow ABI 999, this gflow has ABI 4" "ABI refused"
expect_exit 66 "missing plugin" -- "$gflow" kernels --plugin "$tmp/none.so"
expect_contains "$err" "gflow: cannot load plugin $tmp/none.so:" "missing plugin"
finish
