#!/usr/bin/env bash
# kernel-workflow.sh KERNEL DTYPE ORDER SHAPE STEPS [--forcing] [--bench]
# Prints a workflow that runs one built-in kernel (wave, heat or stencil) of
# ORDER (2, 4, 8) in DTYPE (f32, f64) on a grid of SHAPE ("4096,4096": 1 to 3
# axes, halo 4) for STEPS steps and writes the last field to final.dat. For
# scripts/gpu/check.sh (--forcing: a pattern field, point sources, more
# stencil inputs) and scripts/bench/kernels.sh (--bench: constant initial
# fields, quick to fill, and no output). The stencil is the heat scheme
# T1 = T0 + 0.1 lap(T0) declared as taps.
set -euo pipefail
kernel=$1 dtype=$2 order=$3 shape=$4 steps=$5
shift 5
forcing=0 bench=0
for arg in "$@"; do
  case $arg in
    --forcing) forcing=1 ;;
    --bench) bench=1 ;;
    *) echo "kernel-workflow.sh: unknown option $arg" >&2; exit 64 ;;
  esac
done
IFS=, read -r -a axes <<<"$shape"
center="" spacing="" zero=""
steps_of_spacing=(1.0 0.9 0.8)
for d in "${!axes[@]}"; do
  center+="${center:+, }$((axes[d] / 2))"
  spacing+="${spacing:+, }${steps_of_spacing[d]}"
  zero+="${zero:+, }0"
done
cat <<YAML
gflow: 1
name: $kernel-$dtype-$order
grid: {shape: [$shape], spacing: [$spacing], halo: 4}
params: {nt: $steps}
memory: {default: device}
fields:
YAML
if [ "$bench" = 1 ]; then
  echo "  U: {dtype: $dtype, ring: 3, init: 0.01}"
  echo "  V: {dtype: $dtype, init: 1}"
else
  echo "  U: {dtype: $dtype, ring: 3, init: \"sin(0.3 * i0) * 0.01\"}"
  echo "  V: {dtype: $dtype, init: \"1 + 0.1 * cos(0.2 * i0)\"}"
  echo "  P: {dtype: $dtype, init: \"exp(-(i0 - 10)^2 / 20)\"}"
fi
cat <<YAML
loop:
  steps: nt
  tasks:
    - name: step
      kernel: $kernel
YAML
if [ "$forcing" = 1 ]; then
  case $kernel in
    wave) echo "      args: {U0: \"U[n]\", U1: \"U[n+1]\", U2: \"U[n+2]\", V: V, dt: 0.1, order: $order, amplitude: \"sin(0.5 * n)\", pattern: P, sources: [[$center, 1.5], [$center, -0.5]]}" ;;
    heat) echo "      args: {T0: \"U[n+1]\", T1: \"U[n+2]\", alpha: 0.5, dt: 0.1, order: $order, amplitude: \"cos(0.5 * n)\", pattern: P, sources: [[$center, 2.0]]}" ;;
    stencil) echo "      args: {out: \"U[n+2]\", in0: \"U[n+1]\", taps0: [{laplacian: $order, times: 0.05}, {derivative: $order, axis: 0, times: 0.1}], in1: V, taps1: [{laplacian: 2, times: 0.001}], in2: \"U[n]\", taps2: [{laplacian: 2, times: 0.01}]}" ;;
  esac
else
  case $kernel in
    wave) echo "      args: {U0: \"U[n]\", U1: \"U[n+1]\", U2: \"U[n+2]\", V: V, dt: 0.1, order: $order}" ;;
    heat) echo "      args: {T0: \"U[n+1]\", T1: \"U[n+2]\", alpha: 0.5, dt: 0.1, order: $order}" ;;
    stencil) echo "      args: {out: \"U[n+2]\", in0: \"U[n+1]\", taps0: [[$zero, 1], {laplacian: $order, times: 0.1}]}" ;;
  esac
fi
if [ "$bench" = 0 ]; then
  cat <<YAML
    - name: final
      output: {from: "U[n+2]", file: final.dat, planes: 1, plane: 0}
      when: "n == nt - 1"
YAML
fi
