#!/usr/bin/env bash
# fd-tiles.sh - variants of the wave, heat and stencil GPU tiles
# (kernels/fd_gpu.h's -D macros) against each other, on the rows of
# scripts/bench/kernels.sh that the targets are about:
#   scripts/bench/fd-tiles.sh build   here: gflow per variant into
#                                     .device/tiles/NAME/bin (build-nvidia.sh
#                                     --gflow-only, stripped: 7 MB, a minute
#                                     or two each); `default` is .device/bin's
#   scripts/bench/fd-tiles.sh run     on the GPU machine: the copy measured
#                                     once (.device/bin/copy_bw), then each
#                                     variant's rows, best of REPEAT (1)
# Environment: TILES ("NAME ..." of the list below, default all), VARIANTS
# (kernels.sh's rows, default those below).
set -euo pipefail
cd "$(dirname "$0")/../.."

# NAME: nvcc flags (the defaults of kernels/fd_gpu.h are `default`;
# march, shared*, point* and ring*: the register march, the shared-memory
# plane, the point tile and the ring (3-D) for every scheme, GF_FD_TILE=1, 2,
# 3 and 4; GF_FD_MARCH_3D was
# every 3-D march's length until GF_FD_MARCH_3D_O8 took order 8's, and was 8
# until the default became 4: march3d8 is the old default, block3d-32x4 now
# marches 4 as block3d-32x4-march4 did; GF_FD_RING_MARCH was the ring's
# march until it became the most planes balanced_march may take, so the
# ring-march* figures in FINDINGS.md are of fixed marches, as ring-fixed's
# GF_FD_RING_BALANCE=0 gives; ring-slots* and ring-all-slots* set which
# schemes wait at the ring's slot barriers; the 2-D marches of 8 rows in
# batches of 4, 16 at order 8, and the shared plane's 2-D block of 64
# threads became the defaults on an H200, and h100-2d gives the 2-D
# defaults measured on an H100 before; the variants of the 2-D order-8
# march measured before its L1 prefetch (GF_FD_PREFETCH_2D_O8) became the
# default turn it off, prefetch-off is the default without it; every
# variant listed before sector-off was measured with the walk starting at
# the box's first vector, as sector-off builds it: GF_FD_SECTOR_START)
tiles() {
  cat <<'LIST'
default:
march:-DGF_FD_TILE=1
point:-DGF_FD_TILE=3
shared:-DGF_FD_TILE=2
march2d-32:-DGF_FD_TILE=1 -DGF_FD_MARCH_2D=32
march2d8-steps4:-DGF_FD_TILE=1 -DGF_FD_MARCH_2D=8 -DGF_FD_STEPS_2D=4
march3d4-steps2:-DGF_FD_TILE=1 -DGF_FD_MARCH_3D=4 -DGF_FD_STEPS_3D=2
march3d32:-DGF_FD_TILE=1 -DGF_FD_MARCH_3D=32
march3d16:-DGF_FD_MARCH_3D=16
march3d64:-DGF_FD_MARCH_3D=64
steps1-2:-DGF_FD_STEPS_2D=1 -DGF_FD_STEPS_3D=2
steps4-2:-DGF_FD_STEPS_2D=4 -DGF_FD_STEPS_3D=2
steps1-2-block64:-DGF_FD_STEPS_2D=1 -DGF_FD_STEPS_3D=2 -DGF_FD_BLOCK_X_2D=64 -DGF_FD_BLOCK_Y_2D=2
block3d-32x4:-DGF_FD_BLOCK_X_3D=32 -DGF_FD_BLOCK_Y_3D=4
vector8:-DGF_FD_VECTOR_BYTES=8
point-2d32x8-3d32x8x1:-DGF_FD_TILE=3 -DGF_FD_POINT_X_2D=32 -DGF_FD_POINT_Y_2D=8 -DGF_FD_POINT_Y_3D=8 -DGF_FD_POINT_Z_3D=1
point-2d128x2-3d16x8x2:-DGF_FD_TILE=3 -DGF_FD_POINT_X_2D=128 -DGF_FD_POINT_Y_2D=2 -DGF_FD_POINT_X_3D=16 -DGF_FD_POINT_Y_3D=8 -DGF_FD_POINT_Z_3D=2
point-blocks6:-DGF_FD_TILE=3 -DGF_FD_POINT_BLOCKS=6
shared-march64:-DGF_FD_TILE=2 -DGF_FD_MARCH=64
shared-march128:-DGF_FD_TILE=2 -DGF_FD_MARCH=128
shared-depth2:-DGF_FD_TILE=2 -DGF_FD_DEPTH=2
shared-3d32x8:-DGF_FD_TILE=2 -DGF_FD_SHARED_X_3D=32 -DGF_FD_SHARED_Y_3D=8
shared-2d64:-DGF_FD_TILE=2 -DGF_FD_SHARED_X_2D=64 -DGF_FD_SHARED_BLOCKS_2D=8
shared-3d-free:-DGF_FD_TILE=2 -DGF_FD_SHARED_BLOCKS_3D=1
shared-3d16x32:-DGF_FD_SHARED_X_3D=16 -DGF_FD_SHARED_Y_3D=32 -DGF_FD_SHARED_BLOCKS_3D=1
shared-3d-blocks3:-DGF_FD_SHARED_BLOCKS_3D=3
march3d-16x16-steps2:-DGF_FD_BLOCK_X_3D=16 -DGF_FD_BLOCK_Y_3D=16 -DGF_FD_STEPS_3D=2
shared-scalar-32x16:-DGF_FD_TILE=2 -DGF_FD_VECTOR_BYTES=0 -DGF_FD_SHARED_X_3D=32 -DGF_FD_SHARED_Y_3D=16
shared-scalar-32x8-b4:-DGF_FD_TILE=2 -DGF_FD_VECTOR_BYTES=0 -DGF_FD_SHARED_X_3D=32 -DGF_FD_SHARED_Y_3D=8 -DGF_FD_SHARED_BLOCKS_3D=4
shared-scalar-64x8:-DGF_FD_TILE=2 -DGF_FD_VECTOR_BYTES=0 -DGF_FD_SHARED_X_3D=64 -DGF_FD_SHARED_Y_3D=8
shared-scalar-32x16-march64:-DGF_FD_TILE=2 -DGF_FD_VECTOR_BYTES=0 -DGF_FD_SHARED_X_3D=32 -DGF_FD_SHARED_Y_3D=16 -DGF_FD_MARCH=64
shared-scalar-32x32:-DGF_FD_TILE=2 -DGF_FD_VECTOR_BYTES=0 -DGF_FD_SHARED_X_3D=32 -DGF_FD_SHARED_Y_3D=32 -DGF_FD_SHARED_BLOCKS_3D=1
shared-vector8-32x8:-DGF_FD_TILE=2 -DGF_FD_VECTOR_BYTES=8 -DGF_FD_SHARED_X_3D=32 -DGF_FD_SHARED_Y_3D=8
point-scalar:-DGF_FD_TILE=3 -DGF_FD_VECTOR_BYTES=0
march-blocks6:-DGF_FD_MARCH_BLOCKS_2D=6 -DGF_FD_MARCH_BLOCKS_3D=6
march-blocks8:-DGF_FD_MARCH_BLOCKS_2D=8 -DGF_FD_MARCH_BLOCKS_3D=8
march-3d16x16-blocks4:-DGF_FD_MARCH_BLOCKS_3D=4 -DGF_FD_BLOCK_X_3D=16 -DGF_FD_BLOCK_Y_3D=16
march3d-steps2:-DGF_FD_STEPS_3D=2
march3d16-steps2:-DGF_FD_MARCH_3D=16 -DGF_FD_STEPS_3D=2
march3d8:-DGF_FD_MARCH_3D=8
block3d-16x4:-DGF_FD_BLOCK_Y_3D=4
march3d-o8-16:-DGF_FD_MARCH_3D_O8=16
block3d-32x8:-DGF_FD_BLOCK_X_3D=32
block3d-32x16:-DGF_FD_BLOCK_X_3D=32 -DGF_FD_BLOCK_Y_3D=16
block3d-64x8:-DGF_FD_BLOCK_X_3D=64
block3d-16x16:-DGF_FD_BLOCK_Y_3D=16
shared-3d-20x12:-DGF_FD_SHARED_X_3D=20 -DGF_FD_SHARED_Y_3D=12
shared-3d-25x8:-DGF_FD_SHARED_X_3D=25 -DGF_FD_SHARED_Y_3D=8
ring:-DGF_FD_TILE=4
ring-depth3:-DGF_FD_TILE=4 -DGF_FD_RING_DEPTH=3
ring-depth4:-DGF_FD_TILE=4 -DGF_FD_RING_DEPTH=4 -DGF_FD_RING_DEPTH_F64=4
ring-blocks3:-DGF_FD_TILE=4 -DGF_FD_RING_BLOCKS=3
ring-32x8:-DGF_FD_TILE=4 -DGF_FD_RING_X=32 -DGF_FD_RING_Y=8
ring-16x32:-DGF_FD_TILE=4 -DGF_FD_RING_Y=32 -DGF_FD_RING_BLOCKS=1
ring-8x32:-DGF_FD_TILE=4 -DGF_FD_RING_X=8 -DGF_FD_RING_Y=32
ring-20x12:-DGF_FD_TILE=4 -DGF_FD_RING_X=20 -DGF_FD_RING_Y=12
ring-16x8-blocks4:-DGF_FD_TILE=4 -DGF_FD_RING_Y=8 -DGF_FD_RING_BLOCKS=4
ring-march32:-DGF_FD_TILE=4 -DGF_FD_RING_MARCH=32
ring-march48:-DGF_FD_TILE=4 -DGF_FD_RING_MARCH=48
ring-march100:-DGF_FD_TILE=4 -DGF_FD_RING_MARCH=100
ring-march128:-DGF_FD_TILE=4 -DGF_FD_RING_MARCH=128
ring-fixed:-DGF_FD_RING_BALANCE=0
ring-f64-short:-DGF_FD_RING_MARCH_F64=64
ring-slots-all:-DGF_FD_RING_SLOT_BARRIERS=2
ring-slots-none:-DGF_FD_RING_SLOT_BARRIERS=0
ring-all-slots:-DGF_FD_TILE=4 -DGF_FD_RING_SLOT_BARRIERS=2
ring-all-slots-long:-DGF_FD_TILE=4 -DGF_FD_RING_SLOT_BARRIERS=2 -DGF_FD_RING_MARCH=1024
ring-slots-all-depth1:-DGF_FD_RING_SLOT_BARRIERS=2 -DGF_FD_RING_DEPTH=1
ring-slots-all-depth3:-DGF_FD_RING_SLOT_BARRIERS=2 -DGF_FD_RING_DEPTH=3
ring-balance-any:-DGF_FD_RING_MARCH=1024
ring-v8-32x16:-DGF_FD_VECTOR_BYTES=8 -DGF_FD_RING_X=32 -DGF_FD_RING_Y=16
ring-v8-32x8-b4:-DGF_FD_VECTOR_BYTES=8 -DGF_FD_RING_X=32 -DGF_FD_RING_Y=8 -DGF_FD_RING_BLOCKS=4
ring-b3:-DGF_FD_RING_BLOCKS=3
ring-d3:-DGF_FD_RING_DEPTH=3
ring-d2:-DGF_FD_RING_DEPTH=2
ring-d4:-DGF_FD_RING_DEPTH=4
ring-d3-long:-DGF_FD_RING_DEPTH=3 -DGF_FD_RING_MARCH=1024
ring-8x32-b2:-DGF_FD_RING_X=8 -DGF_FD_RING_Y=32
march2d-o8-4:-DGF_FD_MARCH_2D_O8=4 -DGF_FD_STEPS_2D_O8=2 -DGF_FD_PREFETCH_2D_O8=0
march2d-o8-16:-DGF_FD_MARCH_2D_O8=16 -DGF_FD_PREFETCH_2D_O8=0
block2d-64x4:-DGF_FD_BLOCK_X_2D=64
block2d-32x8:-DGF_FD_BLOCK_Y_2D=8
h100-2d:-DGF_FD_MARCH_2D=4 -DGF_FD_STEPS_2D=2 -DGF_FD_MARCH_2D_O8=8 -DGF_FD_SHARED_X_2D=128 -DGF_FD_SHARED_BLOCKS_2D=4 -DGF_FD_PREFETCH_2D_O8=0
march2d-s1:-DGF_FD_STEPS_2D=1
march2d-o8-16-32x8:-DGF_FD_MARCH_2D_O8=16 -DGF_FD_BLOCK_Y_2D=8 -DGF_FD_PREFETCH_2D_O8=0
split-off:-DGF_FD_SPLIT=0
march2d-blocks1:-DGF_FD_MARCH_BLOCKS_2D=1 -DGF_FD_MARCH_BLOCKS_2D_F32=1
march2d-blocks4:-DGF_FD_MARCH_BLOCKS_2D_F32=4
march3d-blocks6:-DGF_FD_MARCH_BLOCKS_3D=6
march3d-blocks7:-DGF_FD_MARCH_BLOCKS_3D=7
stepped-off:-DGF_FD_STEPPED=0
march2d-blocks5:-DGF_FD_MARCH_BLOCKS_2D=5
march2d-o8-8:-DGF_FD_MARCH_2D_O8=8 -DGF_FD_PREFETCH_2D_O8=0
march2d-o8-32:-DGF_FD_MARCH_2D_O8=32 -DGF_FD_PREFETCH_2D_O8=0
march2d-o8-s2:-DGF_FD_STEPS_2D_O8=2 -DGF_FD_PREFETCH_2D_O8=0
march2d-o8-s8:-DGF_FD_STEPS_2D_O8=8 -DGF_FD_PREFETCH_2D_O8=0
ring-skip-off:-DGF_FD_RING_SKIP=0
prefetch-l1-1:-DGF_FD_PREFETCH_2D=1
prefetch-l1-2:-DGF_FD_PREFETCH_2D=2 -DGF_FD_PREFETCH_2D_O8=2
prefetch-off:-DGF_FD_PREFETCH_2D_O8=0
prefetch-o8-12:-DGF_FD_MARCH_2D_O8=12
prefetch-o8-20:-DGF_FD_MARCH_2D_O8=20
march2d-o8-12:-DGF_FD_MARCH_2D_O8=12 -DGF_FD_PREFETCH_2D_O8=0
march2d-o8-24:-DGF_FD_MARCH_2D_O8=24 -DGF_FD_PREFETCH_2D_O8=0
short-march16:-DGF_FD_MARCH_2D_O8_SHORT=16
sector-off:-DGF_FD_SECTOR_START=0
sector-all:-DGF_FD_SECTOR_START=2
sector-all-blocks4:-DGF_FD_SECTOR_START=2 -DGF_FD_MARCH_BLOCKS_2D_F32=4
ring-16x32-slots:-DGF_FD_RING_Y=32 -DGF_FD_RING_BLOCKS=1 -DGF_FD_RING_SLOT_BARRIERS=2
ring-16x24-slots:-DGF_FD_RING_Y=24 -DGF_FD_RING_BLOCKS=1 -DGF_FD_RING_SLOT_BARRIERS=2
ring-32x16-slots:-DGF_FD_RING_X=32 -DGF_FD_RING_BLOCKS=1 -DGF_FD_RING_SLOT_BARRIERS=2
LIST
}
wanted=" ${TILES:-$(tiles | cut -d: -f1 | tr '\n' ' ')} "
rows=${VARIANTS:-wave:f32:4:2 wave:f32:8:2 wave:f32:2:3 wave:f32:8:3 heat:f32:2:2 heat:f32:8:2 heat:f32:8:3 stencil:f32:8:2 stencil:f32:8:3}

case ${1:-} in
  build)
    tiles | while IFS=: read -r name flags; do
      [[ $wanted == *" $name "* && $name != default ]] || continue
      echo "== $name: $flags"
      GFLOW_DEVICE_OUT=.device/tiles/$name GFLOW_CUDA_FLAGS="$flags" scripts/gpu/build-nvidia.sh --gflow-only >/dev/null
      strip .device/tiles/$name/bin/gflow
      rm -rf .device/tiles/$name/build
      ls -la .device/tiles/$name/bin/gflow
    done
    ;;
  run)
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
    copy=$(.device/bin/copy_bw | sed -n 's/^device-to-device.*, \([0-9.]*\) GB\/s read+written.*/\1/p')
    echo "device-to-device copy: $copy GB/s"
    tiles | while IFS=: read -r name flags; do
      [[ $wanted == *" $name "* ]] || continue
      echo "== $name: ${flags:-the defaults of fd_gpu.h}"
      bin=.device/tiles/$name/bin
      [[ $name == default ]] && bin=.device/bin
      COPY_GBS=$copy REPEAT=${REPEAT:-1} VARIANTS="$rows" BIN=$bin \
        scripts/bench/kernels.sh --gpu | tail -n +3
    done
    ;;
  *)
    echo "usage: scripts/bench/fd-tiles.sh build | run" >&2
    exit 64
    ;;
esac
