#!/usr/bin/env bash
# kernels.sh - every built-in kernel (wave, heat, stencil) at a large size,
# against a baseline measured in the same run, best of REPEAT runs each
# (default 3). The workflows come from scripts/bench/kernel-workflow.sh.
#   --gpu   (binaries from scripts/gpu/build-nvidia.sh in .device/bin, or
#           BIN=DIR): effective bandwidth, GPts/s times the bytes a point
#           moves (wave 4 values, heat and the stencil 2: 16 and 8 B in f32,
#           twice in f64), as a fraction of the device-to-device copy
#           (copy_bw) measured first. 1-D 2^26, 2-D 8192^2, 3-D 400^3 cells.
#   --cpu [BUILD_DIR (default build)]: GPts/s against a plain C + OpenMP
#           loop of the same scheme and dtype (scripts/bench/kernels_omp.c;
#           the stencil, a declared heat scheme, against the heat loop), run
#           interleaved (loop, gflow, loop, ...), on all cores (or
#           OMP_NUM_THREADS). 1-D 2^22, 2-D 2048^2, 3-D 160^3 cells. BUILD_DIR
#           may be a GPU build (.device/bin): it runs with --backend cpu.
# gflow runs without its default check (check.every=0), as the copy and the
# loop do: the check scans every instance of U (three times the field) at
# step 128 and after the last, which weighs a 20-step CPU run (10 to 20% of
# a 1-D one) as 128 steps' worth weigh a long one, and 200 GPU steps by
# about 1.5%.
# COPY_GBS (GB/s) takes the copy's figure as given instead of measuring it.
# --cpu: LOOP_BIN takes the loop's program as built beforehand (for a
# machine without a compiler, e.g. the GPU machine: kernels_omp.c built
# with -O3 -fopenmp and the -march of that machine) instead of building it
# with -march=native.
# SHAPES="1D 2D 3D" and STEPS set the grids and the steps (--gpu:
# "67108864 8192,8192 400,400,400" and 200; --cpu: "4194304 2048,2048
# 160,160,160" and 20, sized for a 2-core machine: on a large one they sit
# in its last-level cache, and the larger grids of --gpu measure it).
# VARIANTS="wave:f32:8:2 heat:f32:2:3 ..." (KERNEL:DTYPE:ORDER:NDIM) measures
# only those rows (the default: every kernel, dimension and order in f32, and
# f64 2-D order 4 and 3-D order 8).
# Usage: scripts/bench/kernels.sh --gpu | --cpu [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-}
repeat=${REPEAT:-3}
. scripts/bench/lib.sh # tmp, json, calc
high() { sort -g | tail -1; }

# gflow_gpts GFLOW BACKEND KERNEL DTYPE ORDER SHAPE STEPS: best GPts/s of REPEAT runs
gflow_gpts() {
  scripts/bench/kernel-workflow.sh "$3" "$4" "$5" "$6" "$7" --bench >"$tmp/w.yaml"
  for _ in $(seq "$repeat"); do
    rm -rf "$tmp/o"
    if "$1" run "$tmp/w.yaml" --backend "$2" --quiet --out "$tmp/o" --set check.every=0 \
      2>"$tmp/err"; then
      json "$tmp/o/timings.json" gpts_per_s
    else
      cat "$tmp/err" >&2
      echo nan
    fi
  done | high
}

# The variants measured: KERNEL:DTYPE:ORDER:NDIM.
variants() {
  if [ -n "${VARIANTS:-}" ]; then
    echo "$VARIANTS" | tr ' ' '\n'
    return
  fi
  for kernel in wave heat stencil; do
    for ndim in 1 2 3; do
      for order in 2 4 8; do echo "$kernel:f32:$order:$ndim"; done
    done
    echo "$kernel:f64:4:2"
    echo "$kernel:f64:8:3"
  done
}
values_per_point() { [ "$1" = wave ] && echo 4 || echo 2; }
# The declared stencil is the heat scheme: its GPts/s against heat's, per variant.
declare -A gpts_of
stencil_against_heat() {
  echo
  echo "the declared stencil against the built-in heat kernel of the same scheme (GPts/s ratio)"
  for v in $(variants); do
    IFS=: read -r kernel dtype order ndim <<<"$v"
    [ "$kernel" = stencil ] && [ -n "${gpts_of[$v]:-}" ] && [ -n "${gpts_of[heat:$dtype:$order:$ndim]:-}" ] ||
      continue
    printf '  %s %s order %s %s-D: %s\n' "$kernel" "$dtype" "$order" "$ndim" \
      "$(calc "${gpts_of[$v]} / ${gpts_of[heat:$dtype:$order:$ndim]}")"
  done
}

case $mode in
  --gpu)
    bin=${BIN:-.device/bin}
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
    copy=${COPY_GBS:-$("$bin/copy_bw" | sed -n 's/^device-to-device.*, \([0-9.]*\) GB\/s read+written.*/\1/p')}
    echo "device-to-device copy: $copy GB/s (read + written)"
    printf '%-8s %-4s %5s %4s %-12s %10s %10s %9s\n' kernel type order dims grid "GPts/s" "GB/s" "of copy"
    for v in $(variants); do
      IFS=: read -r kernel dtype order ndim <<<"$v"
      shape=$(echo "${SHAPES:-67108864 8192,8192 400,400,400}" | cut -d' ' -f"$ndim")
      gpts=$(gflow_gpts "$bin/gflow" gpu "$kernel" "$dtype" "$order" "$shape" "${STEPS:-200}")
      gpts_of[$v]=$gpts
      [ "$dtype" = f64 ] && bytes=$(($(values_per_point "$kernel") * 8)) || bytes=$(($(values_per_point "$kernel") * 4))
      gbs=$(calc "$gpts * $bytes")
      printf '%-8s %-4s %5s %4s %-12s %10.2f %10.1f %9.3f\n' "$kernel" "$dtype" "$order" "$ndim" \
        "$shape" "$gpts" "$gbs" "$(calc "$gbs / $copy")"
    done
    stencil_against_heat
    ;;
  --cpu)
    build=${2:-build}
    [ -x "$build/gflow" ] || { echo "no $build/gflow: run scripts/setup.sh first" >&2; exit 1; }
    if [ -n "${LOOP_BIN:-}" ]; then
      cp "$LOOP_BIN" "$tmp/kernels_omp"
    else
      cc -O3 -march=native -fopenmp -std=c11 scripts/bench/kernels_omp.c -o "$tmp/kernels_omp"
    fi
    echo "CPU: $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}; the loop and gflow interleaved, best of $repeat"
    printf '%-8s %-4s %5s %4s %-14s %12s %12s %7s\n' kernel type order dims grid "loop GPts/s" \
      "gflow GPts/s" ratio
    for v in $(variants); do
      IFS=: read -r kernel dtype order ndim <<<"$v"
      shape=$(echo "${SHAPES:-4194304 2048,2048 160,160,160}" | cut -d' ' -f"$ndim")
      steps=${STEPS:-20}
      scheme=$([ "$kernel" = wave ] && echo wave || echo heat)
      f64=$([ "$dtype" = f64 ] && echo --f64 || true)
      scripts/bench/kernel-workflow.sh "$kernel" "$dtype" "$order" "$shape" "$steps" --bench >"$tmp/w.yaml"
      for _ in $(seq "$repeat"); do
        # shellcheck disable=SC2046,SC2086
        echo "loop $("$tmp/kernels_omp" $f64 "$scheme" "$order" "$steps" $(echo "$shape" | tr , ' ') | awk '{print $3}')"
        rm -rf "$tmp/o"
        if "$build/gflow" run "$tmp/w.yaml" --backend cpu --quiet --out "$tmp/o" \
          --set check.every=0 2>"$tmp/err"; then
          echo "gflow $(json "$tmp/o/timings.json" gpts_per_s)"
        else
          cat "$tmp/err" >&2
        fi
      done >"$tmp/runs"
      loop=$(awk '$1 == "loop" {print $2}' "$tmp/runs" | high)
      flow=$(awk '$1 == "gflow" {print $2}' "$tmp/runs" | high)
      [ -n "$flow" ] || flow=nan
      gpts_of[$v]=$flow
      printf '%-8s %-4s %5s %4s %-14s %12.4f %12.4f %7.3f\n' "$kernel" "$dtype" "$order" "$ndim" \
        "$shape" "$loop" "$flow" "$(calc "$flow / $loop")"
    done
    stencil_against_heat
    ;;
  *)
    echo "usage: scripts/bench/kernels.sh --gpu | --cpu [BUILD_DIR]" >&2
    exit 64
    ;;
esac
