/* fd_gpu.h - what the GPU launchers of wave, heat and stencil share (wave.hip,
 * heat.hip, stencil.hip): the tile that walks a launch's box, the per-type
 * names of fd_cell.h's functions, and the point sources.
 *
 * Four tiles walk 2-D and 3-D boxes, and each scheme picks one per
 * dimension and order, as measured (its tile(ndim, radius)): the register
 * march described here, the shared-memory plane (plane_kernel), the point
 * tile (point_kernel) and, 3-D only, the ring (ring_kernel), each described
 * at its kernel.
 *
 * The march is wave2d.hip's register column, made general. A thread owns V
 * consecutive cells along the last axis: 16 bytes of them (4 f32, 2 f64),
 * loaded and stored as one vector, where the rows allow it (a row length
 * that is a multiple of V, 16-byte aligned fields), else one cell (V = 1).
 * On a 2-D or 3-D grid it marches down axis 0, the slowest, Shape's kMarch
 * cells (2-D 8, and 16 at order 8; 3-D 4, and 8 at order 8: short marches
 * keep many threads' loads in flight; on an H100, heat and the stencil in
 * 2-D ran at 0.64 to 0.76 of the copy with marches of 32 and at 0.79 to 0.95
 * with marches of 4 and 8; in 3-D, marches of 4 took wave order 2 from 0.855
 * to 0.909 and heat order 4 from 0.698 to 0.725, and would have taken heat
 * order 8 from 0.602 to 0.556. On an H200, whose copy is 4.3 TB/s against
 * the H100's 3.0, 2-D marches of 8 in batches of 4 took heat order 2 from
 * 0.861 to 0.864, order 4 from 0.804 to 0.825 and f64 order 4 from 0.807 to
 * 0.858, and marches of 16 heat order 8 from 0.759 to 0.784),
 * and keeps the marched input's values along that axis in registers: a
 * queue of 2R + kSteps vectors, of which each batch of kSteps cells loads
 * kSteps, so a value along axis 0 is loaded once per march rather than
 * 2R + 1 times. The last axis's neighbours come from the H = ceil(R / V)
 * vectors either side of the thread's own (a warp's neighbours' vectors, so
 * from L1), the middle axis's (3-D) from the rows 1..R either side in the
 * same plane. A batch issues all its loads before its first store. In
 * 2-D, a batch whose rows the box holds (all but a march's last where
 * kSteps does not divide the box's rows) steps its first row's address
 * and adds fixed multiples of the stride for the others, where the last
 * clamps each row (GF_FD_STEPPED). Stepped, with march_blocks()'s caps,
 * 2-D rows ran on an H200 at, of the copy (8192^2): heat f32 orders 2, 4
 * and 8 0.906 / 0.868 / 0.839 against 0.872 / 0.823 / 0.812, the
 * declared stencil 0.907 / 0.877 / 0.842 against 0.894 / 0.822 / 0.812,
 * heat f64 orders 4 and 8 0.929 / 0.834 against 0.870 / 0.726. In
 * 3-D, whose batch is one row, stepping held more registers and ran
 * slower (heat f32 order 4 0.585 against 0.667, wave f64 0.795 against
 * 0.868), so 3-D clamps every row. At 2-D order 8 a batch asks L1 for
 * the rows the next batch will load (Shape's kPrefetch, a prefetch that
 * holds no register): heat f32 ran at 0.854 against 0.840, f64 at 0.864
 * against 0.834, the declared stencil at 0.856 against 0.842; at orders 2
 * and 4 it gained nothing and took f64 heat order 4 from 0.929 to 0.907,
 * and two batches ahead ran slower. A 1-D thread owns one vector and its
 * neighbours. Every tile's vectors start at the 32-byte sector below the
 * box's first cell where the fields' rows begin at sectors (launch_walk;
 * not the 2-D march's at order 4), else at the vector below it.
 *
 * Each cell is then computed by fd_cell.h's value forms, its Laplacian
 * through fd.h's GF_FD_LAPLACIAN_SUM, in the CPU loop's order: built
 * without contraction (cmake/gpu.cmake), the bits are the CPU's.
 *
 * Loads never leave the array: a batch's rows past the box are clamped to
 * the last row the box reads (their cells are computed and not stored), a
 * 1-D thread's neighbour vectors to the array's ends; a vector's cells
 * outside the box along the last axis are not stored.
 */
#ifndef GF_KERNEL_FD_GPU_H
#define GF_KERNEL_FD_GPU_H

#include <stdint.h>

#include <atomic>
#include <type_traits>

#include "fd.h"
#include "gf_hip.h"

/* The tile's shape; each a -D macro so that scripts/bench/fd-tiles.sh can
 * build variants and measure them. */
#ifndef GF_FD_VECTOR_BYTES
#define GF_FD_VECTOR_BYTES 16 /* a thread's cells along the last axis, in bytes; 0: one cell */
#endif
#ifndef GF_FD_MARCH_2D
#define GF_FD_MARCH_2D 8 /* cells a thread of the register march marches down axis 0, 2-D */
#endif
#ifndef GF_FD_MARCH_2D_O8
#define GF_FD_MARCH_2D_O8 16 /* the same at order 8 */
#endif
#ifndef GF_FD_MARCH_2D_O8_SHORT
#define GF_FD_MARCH_2D_O8_SHORT 12 /* the same for a scheme that marches short (march_rows) */
#endif
#ifndef GF_FD_MARCH_3D
#define GF_FD_MARCH_3D 4 /* and 3-D, orders 2 and 4 */
#endif
#ifndef GF_FD_MARCH_3D_O8
#define GF_FD_MARCH_3D_O8 8 /* and 3-D order 8 */
#endif
#ifndef GF_FD_MARCH
#define GF_FD_MARCH 32 /* planes a block of the shared-memory tile marches down axis 0 */
#endif
#ifndef GF_FD_STEPS_2D
#define GF_FD_STEPS_2D 4 /* cells of a batch along axis 0, 2-D */
#endif
#ifndef GF_FD_STEPS_2D_O8
#define GF_FD_STEPS_2D_O8 4 /* the same at order 8 */
#endif
#ifndef GF_FD_STEPS_3D
#define GF_FD_STEPS_3D 1 /* and 3-D */
#endif
#ifndef GF_FD_BLOCK_X_2D
#define GF_FD_BLOCK_X_2D 32 /* threads of a block along the last axis, 2-D */
#endif
#ifndef GF_FD_BLOCK_Y_2D
#define GF_FD_BLOCK_Y_2D 4 /* and along axis 0 (marches one after another) */
#endif
#ifndef GF_FD_BLOCK_X_3D
#define GF_FD_BLOCK_X_3D 16 /* threads of a block along the last axis, 3-D */
#endif
#ifndef GF_FD_BLOCK_Y_3D
#define GF_FD_BLOCK_Y_3D 8 /* and along axis 1 */
#endif
/* The walk of the march, the ring and the point tile twice in their code,
 * one where the scheme adds no optional term (Scheme::plain(): no forcing
 * pattern, no input after the stencil's first), so that nvcc drops the term
 * there instead of computing it and selecting it away in every cell. On an
 * H200, of the copy: heat 2-D order 8 0.812 against 0.783, the stencil 2-D
 * order 2 0.893 against 0.865, wave 3-D order 4 0.854 against 0.808 (the
 * march), heat 3-D order 2 0.612 against 0.546 (the point tile), order 8
 * 0.576 against 0.566 (the ring); heat 2-D order 4 0.822 against 0.825. Not
 * the shared plane: wave f32 2-D order 8 ran at 0.842 with it against
 * 0.860. */
#ifndef GF_FD_SPLIT
#define GF_FD_SPLIT 1
#endif
#ifndef GF_FD_SECTOR_START
#define GF_FD_SECTOR_START 1 /* the walk from a sector (launch_walk); 0 never, 2 always */
#endif
#ifndef GF_FD_STEPPED
#define GF_FD_STEPPED 1 /* 0: every batch of the march clamps its rows (a study) */
#endif
/* Blocks of the march an SM should hold (march_blocks) */
#ifndef GF_FD_MARCH_BLOCKS_2D
#define GF_FD_MARCH_BLOCKS_2D 4 /* 2-D */
#endif
#ifndef GF_FD_MARCH_BLOCKS_2D_F32
#define GF_FD_MARCH_BLOCKS_2D_F32 5 /* 2-D, f32 below order 8 */
#endif
#ifndef GF_FD_MARCH_BLOCKS_3D
#define GF_FD_MARCH_BLOCKS_3D 1 /* 3-D */
#endif
/* Which tile walks 2-D and 3-D boxes: 0, the scheme's tile(ndim, radius)
 * (measured per scheme); 1, 2, 3, 4: the register march, the shared-memory
 * plane, the point tile or the ring (3-D; 2-D the march) for every scheme
 * (a study: fd-tiles.sh). */
#ifndef GF_FD_TILE
#define GF_FD_TILE 0
#endif
/* The point tile's block: vectors along the last axis, by rows along axis
 * 0 (2-D) or axis 1 (3-D), by planes along axis 0 (3-D). */
#ifndef GF_FD_POINT_X_2D
#define GF_FD_POINT_X_2D 64
#endif
#ifndef GF_FD_POINT_Y_2D
#define GF_FD_POINT_Y_2D 4
#endif
#ifndef GF_FD_POINT_X_3D
#define GF_FD_POINT_X_3D 32
#endif
#ifndef GF_FD_POINT_Y_3D
#define GF_FD_POINT_Y_3D 4
#endif
#ifndef GF_FD_POINT_Z_3D
#define GF_FD_POINT_Z_3D 2
#endif
#ifndef GF_FD_POINT_BLOCKS
#define GF_FD_POINT_BLOCKS 1 /* blocks of the point tile an SM should hold (caps the registers) */
#endif
#ifndef GF_FD_DEPTH
#define GF_FD_DEPTH 1 /* planes down axis 0 whose loads are in flight ahead of the one computed */
#endif
/* The shared-memory tile's 2-D block, 64 threads and 8 blocks an SM: on an
 * H200, wave f32 2-D order 8 ran at 0.860 of the copy against 0.848 with
 * 128 and 4 (the H100's choice). */
#ifndef GF_FD_SHARED_X_2D
#define GF_FD_SHARED_X_2D 64 /* threads of a block along the last axis, 2-D */
#endif
#ifndef GF_FD_SHARED_X_3D
#define GF_FD_SHARED_X_3D 16 /* threads of a block along the last axis, 3-D */
#endif
#ifndef GF_FD_SHARED_Y_3D
#define GF_FD_SHARED_Y_3D 16 /* and along axis 1 */
#endif
#ifndef GF_FD_SHARED_BLOCKS_2D
#define GF_FD_SHARED_BLOCKS_2D 8 /* blocks an SM should hold (caps the registers), 2-D */
#endif
#ifndef GF_FD_SHARED_BLOCKS_3D
#define GF_FD_SHARED_BLOCKS_3D 2 /* and 3-D */
#endif
#ifndef GF_FD_RING_X
#define GF_FD_RING_X 16 /* the ring's block: threads along the last axis (a vector each), 3-D */
#endif
#ifndef GF_FD_RING_Y
#define GF_FD_RING_Y 16 /* and along axis 1 */
#endif
#ifndef GF_FD_RING_DEPTH
#define GF_FD_RING_DEPTH 3 /* planes of the ring in flight ahead of the newest one used, f32 */
#endif
#ifndef GF_FD_RING_DEPTH_F64
#define GF_FD_RING_DEPTH_F64 3 /* and f64 */
#endif
#ifndef GF_FD_RING_MARCH
#define GF_FD_RING_MARCH 64 /* the most planes a block of the ring marches down axis 0, f32 */
#endif
#ifndef GF_FD_RING_MARCH_F64
#define GF_FD_RING_MARCH_F64 1024 /* and f64 */
#endif
#ifndef GF_FD_RING_BALANCE
#define GF_FD_RING_BALANCE 1 /* 0: the ring marches its most planes, not fewer to fill waves */
#endif
#ifndef GF_FD_RING_SLOT_BARRIERS
#define GF_FD_RING_SLOT_BARRIERS \
  1 /* the ring's slot barriers: 0 none, 1 where the scheme takes them, 2 all */
#endif
#ifndef GF_FD_PREFETCH_2D
#define GF_FD_PREFETCH_2D 0 /* batches ahead whose new rows the 2-D march asks L1 for */
#endif
#ifndef GF_FD_PREFETCH_2D_O8
#define GF_FD_PREFETCH_2D_O8 1 /* the same at order 8 */
#endif
#ifndef GF_FD_RING_SKIP
#define GF_FD_RING_SKIP 1 /* 0: the ring copies the vectors past the box's reads too (a study) */
#endif
#ifndef GF_FD_RING_BLOCKS
#define GF_FD_RING_BLOCKS 2 /* blocks of the ring an SM should hold (caps the registers) */
#endif

namespace gf_fd_gpu {

/* The tiles a scheme chooses from, per dimensionality and radius (its
 * tile(ndim, radius)); 1-D always takes line_kernel. */
enum Tile { kMarchTile = 1, kPlaneTile = 2, kPointTile = 3, kRingTile = 4 };

constexpr int64_t kPlaneMarch = GF_FD_MARCH;
#ifndef GF_FD_MAX_BLOCKS
#define GF_FD_MAX_BLOCKS 65535 /* a grid's y and z (less: tests of the grid-strided loops) */
#endif
constexpr int64_t kMaxBlocks = GF_FD_MAX_BLOCKS;

/* The register march's block shape per dimensionality, and its batch
 * (kSteps) and march (kMarch) per dimensionality and radius. */
template <int NDIM, int R = 1>
struct Shape;
template <int R>
struct Shape<1, R> {
  enum { kX = 128, kY = 1, kSteps = 1, kMarch = 1 };
};
template <int R>
struct Shape<2, R> {
  enum {
    kX = GF_FD_BLOCK_X_2D,
    kY = GF_FD_BLOCK_Y_2D,
    kSteps = R == 4 ? GF_FD_STEPS_2D_O8 : GF_FD_STEPS_2D,
    kMarch = R == 4 ? GF_FD_MARCH_2D_O8 : GF_FD_MARCH_2D,
    kPrefetch = R == 4 ? GF_FD_PREFETCH_2D_O8 : GF_FD_PREFETCH_2D,
    /* whether its walk may start at a sector (launch_walk): not at order 4,
     * where heat f32 ran at 0.850 from one against 0.866 */
    kSectorStart = GF_FD_SECTOR_START == 2 || R != 2
  };
};
template <int R>
struct Shape<3, R> {
  enum {
    kX = GF_FD_BLOCK_X_3D,
    kY = GF_FD_BLOCK_Y_3D,
    kSteps = GF_FD_STEPS_3D,
    kMarch = R == 4 ? GF_FD_MARCH_3D_O8 : GF_FD_MARCH_3D,
    kPrefetch = 0
  };
};

/* The blocks of the march an SM should hold, its launch bounds' minimum,
 * which caps its registers (65536 / (128 threads x blocks)): 2-D 4, and 5
 * for f32 below order 8, 3-D 1; 1 wherever the scheme's registers would
 * spill under a cap (`capped` false). On an H200, of the copy (2-D,
 * 8192^2), without a cap and with 4 and 5: heat f32 order 4 0.839 / 0.838
 * / 0.886, order 8 0.795 / 0.843 / 0.808; heat f64 order 4 0.877 / 0.931
 * / 0.909, order 8 0.706 / 0.839 / 0.758; wave f64 order 8 0.909 / 0.911
 * / 0.728. In 3-D (400^3), 6 and 7 took heat f32 order 4 from 0.667 to
 * 0.637 and 0.648 with the rows stepped (below), which 3-D does not take. */
template <typename T, int NDIM, int R>
constexpr int march_blocks(bool capped) {
  if (!capped) return 1;
  if (NDIM == 3) return GF_FD_MARCH_BLOCKS_3D;
  return sizeof(T) == 4 && R < 4 ? GF_FD_MARCH_BLOCKS_2D_F32 : GF_FD_MARCH_BLOCKS_2D;
}

/* The rows (2-D) or planes (3-D) a thread of the march marches: Shape's
 * kMarch, but at 2-D order 8 fewer for a scheme that marches short
 * (Scheme::kShortMarch: wave, whose cell reads two more fields than heat's;
 * on an H200, of the copy, f32 wave 0.953 with marches of 12 against 0.896
 * with 16, f64 0.955 against 0.906, where heat ran at 0.825 against
 * 0.853). */
template <int NDIM, int R>
__host__ __device__ constexpr int64_t march_rows(bool short_march) {
  return NDIM == 2 && R == 4 && short_march ? GF_FD_MARCH_2D_O8_SHORT : Shape<NDIM, R>::kMarch;
}

/* V values, loaded and stored as one vector (V * sizeof(T) is 16, 8 or 4
 * bytes, and so is its alignment). */
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

template <typename T, int V>
__device__ __forceinline__ Vec<T, V> load(const T *p) {
  return *reinterpret_cast<const Vec<T, V> *>(p);
}

__device__ __forceinline__ int64_t lesser(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* A launch's box as the tile walks it, offsets in elements. Along the last
 * axis, vectors of V cells from the box's first cell rounded down to a
 * multiple of `align` cells (V, or a sector's: launch_walk);
 * counted from there, the box's cells are x_lo <= x < x_hi. */
struct Walk {
  int64_t first;      /* element of the box's first row's first vector */
  int64_t s0, s1;     /* strides of axis 0 (2-D, 3-D) and axis 1 (3-D) */
  int64_t n0, n1;     /* cells of the box along them; 1 where the grid has no such axis */
  int64_t x_lo, x_hi; /* the box along the last axis */
  int64_t nvec;       /* vectors along the last axis */
  int64_t v_lo, v_hi; /* the first and last vector of a row (v_lo <= 0) */
  int64_t total;      /* elements of the array */
};

inline Walk walk_of(const gf_array *a, const gf_box &box, int V, int align) {
  const gf_fd_geom g = gf_fd_geom_of(a);
  const int n = a->ndim, last = n - 1;
  Walk w;
  const int64_t start = box.lo[last] - box.lo[last] % align;
  w.first = start;
  for (int d = 0; d < last; d++) w.first += box.lo[d] * g.stride[d];
  w.s0 = n >= 2 ? g.stride[0] : 0;
  w.n0 = n >= 2 ? box.hi[0] - box.lo[0] : 1;
  w.s1 = n == 3 ? g.stride[1] : 0;
  w.n1 = n == 3 ? box.hi[1] - box.lo[1] : 1;
  w.x_lo = box.lo[last] - start;
  w.x_hi = box.hi[last] - start;
  w.nvec = (w.x_hi + V - 1) / V;
  w.v_lo = -(start / V);
  w.v_hi = a->shape[last] / V - 1 - start / V;
  w.total = 1;
  for (int d = 0; d < n; d++) w.total *= a->shape[d];
  return w;
}

/* Element m of a row's window, m = -H*V .. V + H*V - 1 counted from the
 * thread's first cell: the vectors left of its own (lo[0] the nearest), its
 * own, and those right of it. */
template <typename T, int V, int H>
__device__ __forceinline__ T window(const Vec<T, V> *lo, const Vec<T, V> &own, const Vec<T, V> *hi,
                                    int m) {
  if (m < 0) return lo[(-m - 1) / V].v[V - 1 - (-m - 1) % V];
  if (m >= V) return hi[(m - V) / V].v[(m - V) % V];
  return own.v[m];
}

/* A whole Vec stored in one instruction. Assigned as a struct, copied into
 * the hardware's vector type with memcpy or built with make_float4, a Vec
 * was stored one element at a time in most of the tiles' PTX (four 4-byte
 * stores a thread where one 16-byte store does; nvcc 13, sm_90), so on
 * NVIDIA the vector store is PTX of its own. With it the shared-memory
 * tile's wave 3-D order 8 went from 0.73 to 0.78 of the copy on an H100,
 * heat 3-D order 2 from 0.65 to 0.69. It names the global space (every
 * tile stores to its output field there): a generic store became ST.E,
 * not STG, where ptxas could not trace the address to a kernel argument. */
template <typename T, int V>
__device__ __forceinline__ void store_whole(T *p, const Vec<T, V> &v) {
  *reinterpret_cast<Vec<T, V> *>(p) = v;
}
#ifdef GFLOW_HIP_ON_CUDA
template <>
__device__ __forceinline__ void store_whole<float, 4>(float *p, const Vec<float, 4> &v) {
  asm("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)), "f"(v.v[0]),
      "f"(v.v[1]), "f"(v.v[2]), "f"(v.v[3])
      : "memory");
}
template <>
__device__ __forceinline__ void store_whole<float, 2>(float *p, const Vec<float, 2> &v) {
  asm("st.global.v2.f32 [%0], {%1, %2};" ::"l"(__cvta_generic_to_global(p)), "f"(v.v[0]),
      "f"(v.v[1])
      : "memory");
}
template <>
__device__ __forceinline__ void store_whole<double, 2>(double *p, const Vec<double, 2> &v) {
  asm("st.global.v2.f64 [%0], {%1, %2};" ::"l"(__cvta_generic_to_global(p)), "d"(v.v[0]),
      "d"(v.v[1])
      : "memory");
}
#endif

/* Asks for the line of `p` in L1 (NVIDIA; elsewhere nothing). */
__device__ __forceinline__ void prefetch_l1(const void *p) {
#if defined(GFLOW_HIP_ON_CUDA) && defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L1 [%0];" ::"l"(__cvta_generic_to_global(p)));
#else
  (void)p;
#endif
}

/* Stores the cells of `v` that lie in the box; x is its first cell's. */
template <typename T, int V>
__device__ __forceinline__ void store(T *p, const Vec<T, V> &v, int64_t x, const Walk &w) {
  if (x >= w.x_lo && x + V <= w.x_hi) {
    store_whole<T, V>(p, v);
    return;
  }
  GF_UNROLL for (int c = 0; c < V; c++) if (x + c >= w.x_lo && x + c < w.x_hi) p[c] = v.v[c];
}

/* The Laplacian of fd.h's GF_FD_LAPLACIAN_SUM from at(d, k), the value k
 * cells from the cell along axis d. */
template <int NDIM, int R, typename T, typename Lap, typename At>
__device__ __forceinline__ T laplacian(const Lap &L, At at) {
  T sum;
  GF_FD_LAPLACIAN_SUM(sum, L, NDIM, R, at);
  return sum;
}

/* A Scheme, what a kernel computes from the tile (wave.hip, heat.hip,
 * stencil.hip), has
 *   Type (T), kPoints (> 0), in (the input whose neighbourhood the tile
 *   holds), point[kPoints] (fields read at the cell only; NULL: not given),
 *   out,
 *   template <int NDIM, int R, typename At> T cell(At at, const T *points) const:
 * the cell's new value from at(d, k) and the points' values there (0 for
 * those not given),
 *   bool plain() const: true where the scheme adds no optional term (the
 * march, the ring and the point tile then walk in a copy of their code
 * without it, GF_FD_SPLIT),
 *   kSlotBarriers: whether the ring takes slot barriers (RingSync),
 *   kCapMarch: whether march_blocks() may cap the march's registers (not
 * where they would spill),
 *   kShortMarch: whether the march runs it in march_rows()'s shorter
 * marches, and
 *   static Tile tile(int ndim, int radius): the tile that walks its 2-D and
 * 3-D boxes, as measured for it. */

/* Runs `walk` (a tile's loops over its cells) in one of two copies of its
 * code, one where `s` adds no optional term, so that nvcc drops the term
 * from that copy (GF_FD_SPLIT). */
template <typename Scheme, typename Loops>
__device__ __forceinline__ void walk_apart(const Scheme &s, const Loops &walk) {
  if (GF_FD_SPLIT && s.plain())
    walk();
  else
    walk();
}

/* 2-D and 3-D: the march. Threads: x a vector along the last axis; y a
 * march (2-D) or a row of axis 1 (3-D, marches by blockIdx.z); grid-strided
 * past the grid's limits.
 * Its launch bounds name a minimum of march_blocks() blocks an SM. With
 * one, nvcc 13 gives it more registers than with none named (heat 3-D order
 * 8: 111 against 88; order 4: 76 against 56), and on an H100 every row that
 * takes the march ran as fast or faster (kernels.sh rows, of the copy): heat
 * 2-D order 8 0.904 against 0.867, 3-D order 4 0.697 against 0.657, wave 3-D
 * order 4 0.879 against 0.831, heat, wave and the stencil in f64 3-D order 8
 * 0.627 / 0.728 / 0.630 against 0.571 / 0.710 / 0.569. */
template <typename Scheme, int NDIM, int R, int V>
__global__ void __launch_bounds__(Shape<NDIM>::kX *Shape<NDIM>::kY,
                                  (march_blocks<typename Scheme::Type, NDIM, R>(Scheme::kCapMarch)))
    march_kernel(Scheme s, Walk w) {
  typedef typename Scheme::Type T;
  typedef Vec<T, V> Vt;
  enum {
    B = Shape<NDIM, R>::kSteps,
    A = Shape<NDIM, R>::kPrefetch, /* batches ahead whose new rows it asks L1 for */
    H = (R + V - 1) / V,
    Q = 2 * R + B,             /* the queue: rows i - R .. i + B - 1 + R of a batch at i */
    Y = NDIM == 3 ? 2 * R : 1, /* the middle axis's neighbours of a cell */
    P = Scheme::kPoints
  };
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= w.nvec) return;
  const int64_t x = t * V; /* the thread's first cell along the last axis */
  const int64_t M = march_rows<NDIM, R>(Scheme::kShortMarch);
  const int64_t marches = (w.n0 + M - 1) / M;
  const int64_t ty = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
  const int64_t y_first = NDIM == 3 ? ty : 0,
                y_step = NDIM == 3 ? (int64_t)gridDim.y * blockDim.y : 1;
  const int64_t m_first = NDIM == 3 ? blockIdx.z : ty;
  const int64_t m_step = NDIM == 3 ? gridDim.z : (int64_t)gridDim.y * blockDim.y;
  auto walk = [&]() {
    for (int64_t y = y_first; y < w.n1; y += y_step)
      for (int64_t m = m_first; m < marches; m += m_step) {
        const int64_t base = w.first + y * w.s1 + x; /* row 0 of the box, this thread's vector */
        const int64_t end = lesser((m + 1) * M, w.n0);
        Vt q[Q];
        int64_t i = m * M;
        int64_t row = base + i * w.s0; /* row i's element (2-D), stepped a batch at a time */
        GF_UNROLL for (int k = 0; k < 2 * R; k++) q[k] =
            load<T, V>(s.in + base + (i - R + k) * w.s0);
        /* A batch at row i: its rows' addresses stepped from row i's
         * (`clamped` false: 2-D, where the box holds all its rows) or each
         * clamped to the box's (the file's head comment says why). */
        auto batch = [&](auto clamp) {
          constexpr bool clamped = decltype(clamp)::value;
          /* row i + b + k of field f (the input, the output, a point), k = 0
           * (the cell's) or R (the queue's newest) */
          auto at_row = [&](auto *f, int b, int k) {
            return clamped ? f + (base + lesser(i + b + k, w.n0 - 1 + k) * w.s0)
                           : f + row + (b + k) * w.s0;
          };
          /* Every load of the batch first. */
          if (A > 0 && !clamped && i + (A + 1) * B <= end)
            GF_UNROLL for (int b = 0; b < B; b++) prefetch_l1(at_row(s.in, b + A * B, R));
          Vt lo[B][H], hi[B][H], mid[B][Y], pt[B][P];
          GF_UNROLL for (int b = 0; b < B; b++) {
            q[2 * R + b] = load<T, V>(at_row(s.in, b, R));
            const T *own = at_row(s.in, b, 0);
            GF_UNROLL for (int h = 0; h < H; h++) {
              lo[b][h] = load<T, V>(own - (h + 1) * V);
              hi[b][h] = load<T, V>(own + (h + 1) * V);
            }
            if (NDIM == 3)
              GF_UNROLL for (int k = 0; k < Y; k++) mid[b][k] =
                  load<T, V>(own + (k < R ? k - R : k - R + 1) * w.s1);
            GF_UNROLL for (int p = 0; p < P; p++) pt[b][p] =
                s.point[p] ? load<T, V>(at_row(s.point[p], b, 0)) : Vt();
          }
          Vt out[B];
          GF_UNROLL for (int b = 0; b < B; b++) GF_UNROLL for (int c = 0; c < V; c++) {
            /* at(d, k): axis 0 from the queue, the last axis from the window,
             * a 3-D grid's axis 1 from mid */
            auto at = [&](int d, int k) -> T {
              if (d == NDIM - 1) return window<T, V, H>(lo[b], q[R + b], hi[b], c + k);
              if (d == 0 || k == 0) return q[R + b + (d == 0 ? k : 0)].v[c];
              return mid[b][k < 0 ? k + R : k + R - 1].v[c];
            };
            T points[P];
            GF_UNROLL for (int p = 0; p < P; p++) points[p] = pt[b][p].v[c];
            out[b].v[c] = s.template cell<NDIM, R>(at, points);
          }
          GF_UNROLL for (int b = 0; b < B; b++) if (!clamped || i + b < end)
              store<T, V>(at_row(s.out, b, 0), out[b], x, w);
          GF_UNROLL for (int k = 0; k < 2 * R; k++) q[k] = q[k + B];
        };
        for (; i < end; i += B, row += B * w.s0) {
          if (GF_FD_STEPPED && NDIM == 2 && i + B <= end)
            batch(std::false_type());
          else
            batch(std::true_type());
        }
      }
  };
  walk_apart(s, walk);
}

/* A vector of a block's tile of a plane with its halo (row r from y0 - RY
 * along axis 1, vector c from the block's first vector v0 - H along the
 * last), as an element of plane 0, clamped to what the box reads. */
template <int V, int H, int RY>
__device__ __forceinline__ int64_t tile_element(const Walk &w, int64_t v0, int64_t y0, int r,
                                                int c) {
  const int64_t y = lesser(y0 + r - RY, w.n1 - 1 + RY);
  int64_t v = lesser(v0 + c - H, lesser(w.nvec - 1 + H, w.v_hi));
  v = v < w.v_lo ? w.v_lo : v;
  return w.first + y * w.s1 + v * V;
}

/* The shared-memory tile's block: kX threads along the last axis (a vector
 * each), kY along axis 1 (3-D). */
template <int NDIM>
struct Plane;
template <>
struct Plane<2> {
  enum { kX = GF_FD_SHARED_X_2D, kY = 1, kBlocks = GF_FD_SHARED_BLOCKS_2D };
};
template <>
struct Plane<3> {
  enum { kX = GF_FD_SHARED_X_3D, kY = GF_FD_SHARED_Y_3D, kBlocks = GF_FD_SHARED_BLOCKS_3D };
};

/* 2-D and 3-D through shared memory (kPlaneTile): a block owns a tile of
 * a plane (the cells of one index along axis 0): kX vectors along the last
 * axis by kY rows along axis 1 (3-D), a vector a thread. It marches down
 * axis 0, kPlaneMarch planes, all its threads together; each keeps the marched
 * input's values of its vector in a register queue (planes i - R .. i + R
 * + D while it computes plane i, D = GF_FD_DEPTH planes loaded ahead). At
 * each plane, the threads store their own vectors of plane i, and the
 * block's halo (the H vectors either side along the last axis, R rows
 * either side along axis 1), loaded D planes ahead, in a shared-memory copy
 * of the plane, one of two used in turn (so one barrier a plane); a cell's
 * neighbours along the last axis and axis 1 come from there, along axis 0
 * from the queue. The queue is indexed modulo its length, the march
 * unrolled by it, so that no value moves between registers.
 *
 * Loads never leave the array: planes and rows past the box's are clamped
 * to the last the box reads, vectors past the box along the last axis
 * likewise and to their row; the cells they feed are computed and not
 * stored. */
template <typename Scheme, int NDIM, int R, int V>
__global__ void __launch_bounds__(Plane<NDIM>::kX *Plane<NDIM>::kY, Plane<NDIM>::kBlocks)
    plane_kernel(Scheme s, Walk w) {
  typedef typename Scheme::Type T;
  typedef Vec<T, V> Vt;
  enum {
    X = Plane<NDIM>::kX,
    Y = Plane<NDIM>::kY,
    N = X * Y,
    H = (R + V - 1) / V,
    RY = NDIM == 3 ? R : 0,     /* halo rows along axis 1 */
    W = X + 2 * H,              /* vectors of a row of the shared plane */
    CELLS = (Y + 2 * RY) * W,   /* of the shared plane */
    HALO = CELLS - N,           /* of which the halo */
    NH = (HALO + N - 1) / N,    /* halo vectors a thread loads */
    D = GF_FD_DEPTH,            /* planes loaded ahead */
    Q = 2 * R + 1 + D,          /* the queue: planes i - R .. i + R + D */
    MY = NDIM == 3 ? 2 * R : 1, /* a cell's neighbours along axis 1 */
    P = Scheme::kPoints > 0 ? Scheme::kPoints : 1
  };
  __shared__ Vt plane[2][CELLS];
  const int tx = threadIdx.x, ty = NDIM == 3 ? threadIdx.y : 0, tid = ty * X + tx;
  const int64_t t = (int64_t)blockIdx.x * X + tx; /* this thread's vector along the last axis */
  const int64_t x = t * V;
  const int64_t marches = (w.n0 + kPlaneMarch - 1) / kPlaneMarch;
  const int64_t y_step = NDIM == 3 ? (int64_t)gridDim.y * Y : 1;
  const int64_t m_first = NDIM == 3 ? blockIdx.z : blockIdx.y;
  const int64_t m_step = NDIM == 3 ? gridDim.z : gridDim.y;
  auto element = [&](int64_t y0, int r, int c) -> int64_t {
    return tile_element<V, H, RY>(w, (int64_t)blockIdx.x * X, y0, r, c);
  };
  for (int64_t y0 = NDIM == 3 ? (int64_t)blockIdx.y * Y : 0; y0 < w.n1; y0 += y_step)
    for (int64_t m = m_first; m < marches; m += m_step) {
      const int own_at = (ty + RY) * W + tx + H; /* the thread's vector in the shared plane */
      const int64_t own = element(y0, ty + RY, tx + H);
      const bool stores = y0 + ty < w.n1 && t < w.nvec;
      int halo_at[NH];
      int64_t halo[NH];
      GF_UNROLL for (int n = 0; n < NH; n++) {
        /* halo vector h: the RY rows above, the RY below, then H left and
         * H right of each of the Y rows; -1: none */
        const int h = tid + n * N;
        int r, c;
        if (h < 2 * RY * W) {
          r = h / W, c = h % W;
          if (r >= RY) r += Y;
        } else {
          const int k = h - 2 * RY * W, j = k % (2 * H);
          r = RY + k / (2 * H), c = j < H ? j : X + j;
        }
        halo_at[n] = h < HALO ? r * W + c : -1;
        halo[n] = h < HALO ? element(y0, r, c) : own;
      }
      const int64_t i0 = m * kPlaneMarch, end = lesser(i0 + kPlaneMarch, w.n0);
      /* plane j's slot in the queues: (j - i0 + R) % Q */
      Vt q[Q], hq[Q][NH], pq[Q][P];
      auto in_at = [&](int64_t e, int64_t j) -> Vt {
        return load<T, V>(s.in + e + lesser(j, w.n0 - 1 + R) * w.s0);
      };
      auto ahead = [&](int slot, int64_t j) { /* plane j's halo and points */
                                              GF_UNROLL for (int n = 0; n < NH; n++) hq[slot][n] =
                                                  in_at(halo[n], j);
                                              const int64_t e = own + lesser(j, w.n0 - 1) * w.s0;
                                              GF_UNROLL for (int p = 0; p < Scheme::kPoints;
                                                             p++) pq[slot][p] =
                                                  s.point[p] ? load<T, V>(s.point[p] + e) : Vt();
      };
      GF_UNROLL for (int k = 0; k < 2 * R + D; k++) q[k] = in_at(own, i0 - R + k);
      GF_UNROLL for (int k = 0; k < D; k++) ahead(R + k, i0 + k);
      for (int64_t i = i0; i < end; i += Q) GF_UNROLL for (int u = 0; u < Q; u++) {
          const int64_t j = i + u; /* the plane computed */
          if (j >= end) break;
          const int at_j = (u + R) % Q, ahead_j = (u + R + D) % Q;
          q[(u + 2 * R + D) % Q] = in_at(own, j + R + D);
          ahead(ahead_j, j + D);
          Vt *buf = plane[j & 1];
          buf[own_at] = q[at_j];
          GF_UNROLL for (int n = 0; n < NH; n++) if (halo_at[n] >= 0) buf[halo_at[n]] = hq[at_j][n];
          __syncthreads();
          Vt lo[H], hi[H], mid[MY];
          GF_UNROLL for (int h = 0; h < H; h++) {
            lo[h] = buf[own_at - 1 - h];
            hi[h] = buf[own_at + 1 + h];
          }
          if (NDIM == 3)
            GF_UNROLL for (int k = 0; k < MY; k++) mid[k] =
                buf[own_at + (k < R ? k - R : k - R + 1) * W];
          Vt out;
          GF_UNROLL for (int c = 0; c < V; c++) {
            /* at(d, k): axis 0 from the queue, the others from the shared plane */
            auto at = [&](int d, int k) -> T {
              if (d == NDIM - 1) return window<T, V, H>(lo, q[at_j], hi, c + k);
              if (d == 0 || k == 0) return q[(u + R + (d == 0 ? k : 0)) % Q].v[c];
              return mid[k < 0 ? k + R : k + R - 1].v[c];
            };
            T points[P];
            GF_UNROLL for (int p = 0; p < P; p++) points[p] = pq[at_j][p].v[c];
            out.v[c] = s.template cell<NDIM, R>(at, points);
          }
          if (stores) store<T, V>(s.out + own + j * w.s0, out, x, w);
        }
      /* the next march's first plane may use the buffer of this one's last */
      __syncthreads();
    }
}

/* Copies into shared memory that the ring keeps in flight: on NVIDIA
 * (sm_80 and later) cp.async, which lands a global vector in shared memory
 * without passing through registers, a group of them committed a plane;
 * elsewhere (AMD, HIP-CPU) a load and a store, each group complete when
 * committed. */
template <typename T, int V>
__device__ __forceinline__ void copy_async(Vec<T, V> *to, const T *from) {
#if defined(GFLOW_HIP_ON_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned at = (unsigned)__cvta_generic_to_shared(to);
  if (sizeof(T) * V == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(at), "l"(from) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(at), "l"(from),
                 "n"((int)(sizeof(T) * V))
                 : "memory");
#else
  *to = load<T, V>(from);
#endif
}
__device__ __forceinline__ void copies_commit() {
#if defined(GFLOW_HIP_ON_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/* Waits until at most N of this thread's groups are in flight. */
template <int N>
__device__ __forceinline__ void copies_wait() {
#if defined(GFLOW_HIP_ON_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* Slot barriers: NVIDIA sm_90's mbarrier objects in shared memory, which
 * complete a phase when `count` arrivals have been made on them (with
 * cp.async, when the arriving thread's copies issued before have landed). */
#if defined(GFLOW_HIP_ON_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GF_FD_SLOT_BARRIERS 1
__device__ __forceinline__ unsigned shared_at(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void barrier_init(uint64_t *b, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(shared_at(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void barrier_inval(uint64_t *b) {
  asm volatile("mbarrier.inval.shared.b64 [%0];\n" ::"r"(shared_at(b)) : "memory");
}
__device__ __forceinline__ void barrier_arrive(uint64_t *b) {
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];\n" ::"r"(shared_at(b)) : "memory");
}
/* Arrives on `b` when this thread's copies issued so far have landed. */
__device__ __forceinline__ void barrier_arrive_copies(uint64_t *b) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(shared_at(b)) : "memory");
}
/* Waits until the phase of `b` of parity `parity` has completed. */
__device__ __forceinline__ void barrier_wait(uint64_t *b, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(shared_at(b)),
      "r"(parity)
      : "memory");
}
#else
#define GF_FD_SLOT_BARRIERS 0
#endif

/* How the ring's threads wait for each other: before a slot is filled with
 * plane k (its use k / S), until every thread has read the plane it held
 * for the last time; before plane k is read, until every thread's copies
 * of it have landed. With slot barriers (`Slots`, NVIDIA sm_90 only) a
 * thread waits for just those, on a `full` and an `empty` barrier a slot,
 * so the block's warps drift apart by up to the ring's slack instead of
 * meeting at every plane; a thread issues a plane's copies before it waits
 * for the plane it reads next. Otherwise the copies are groups, one a
 * plane, and the threads meet at a block barrier a plane, then issue the
 * copies. */
template <int S, int D, bool Slots>
struct RingSync {
  enum { kSlots = Slots && GF_FD_SLOT_BARRIERS };
  uint64_t *full, *empty; /* S each, after the ring's slots */

  __device__ void init(int tid, int threads) {
#if GF_FD_SLOT_BARRIERS
    if (kSlots) {
      if (tid == 0)
        for (int n = 0; n < S; n++)
          barrier_init(full + n, threads), barrier_init(empty + n, threads);
      __syncthreads();
    }
#else
    (void)tid, (void)threads;
#endif
  }
  /* Before plane k's slot is read (k >= R: while computing plane k - R) */
  __device__ __forceinline__ void landed(int slot, int64_t use) {
#if GF_FD_SLOT_BARRIERS
    if (kSlots) return barrier_wait(full + slot, (unsigned)(use & 1));
#endif
    (void)slot, (void)use;
    copies_wait<D - 1>();
    __syncthreads();
  }
  /* Planes 0 .. R - 1 of a march, landed before its first plane is read */
  __device__ __forceinline__ void first_landed(int planes) {
#if GF_FD_SLOT_BARRIERS
    if (kSlots)
      for (int k = 0; k < planes; k++) barrier_wait(full + k, 0);
#endif
    (void)planes;
  }
  __device__ __forceinline__ void before_fill(int slot, int64_t use) {
#if GF_FD_SLOT_BARRIERS
    if (kSlots && use > 0) barrier_wait(empty + slot, (unsigned)((use - 1) & 1));
#endif
    (void)slot, (void)use;
  }
  __device__ __forceinline__ void filled(int slot) {
#if GF_FD_SLOT_BARRIERS
    if (kSlots) return barrier_arrive_copies(full + slot);
#endif
    (void)slot;
    copies_commit();
  }
  __device__ __forceinline__ void release(int slot) {
#if GF_FD_SLOT_BARRIERS
    if (kSlots) barrier_arrive(empty + slot);
#endif
    (void)slot;
  }
  /* After a march whose last plane read was `last` (k), with planes up to
   * last + D filled: every copy landed, every thread done, the barriers
   * new for the next march. */
  __device__ void march_end(int tid, int threads, int64_t last) {
#if GF_FD_SLOT_BARRIERS
    if (kSlots) {
      for (int64_t k = last + 1; k <= last + D; k++)
        barrier_wait(full + k % S, (unsigned)((k / S) & 1));
      __syncthreads();
      if (tid == 0)
        for (int n = 0; n < S; n++) {
          barrier_inval(full + n), barrier_inval(empty + n);
          barrier_init(full + n, threads), barrier_init(empty + n, threads);
        }
      __syncthreads();
      return;
    }
#endif
    (void)tid, (void)threads, (void)last;
    copies_wait<0>();
    __syncthreads();
  }
};

/* The ring's block, 3-D: kX threads along the last axis (a vector each),
 * kY along axis 1; March's planes a block at most; kBlocks an SM (with 2, nvcc
 * gives heat 3-D order 8 109 registers; with 3 it spilled and ran at 0.54
 * of the copy against 0.63). */
struct Ring {
  enum { kX = GF_FD_RING_X, kY = GF_FD_RING_Y, kBlocks = GF_FD_RING_BLOCKS };
  /* Planes in flight ahead of the newest one used, per element type (heat
   * 3-D order 8 on an H100, of the copy: f32 0.633 with 2, 0.621 with 3,
   * 0.568 with 4; f64 0.717 with 2, 0.783 with 3; on an H200, f32 0.596
   * with 3 against 0.575 with 2). */
  template <typename T>
  struct Depth {
    enum { kPlanes = sizeof(T) == 8 ? GF_FD_RING_DEPTH_F64 : GF_FD_RING_DEPTH };
  };
  /* The most planes a block marches, per element type (balanced_march
   * may take fewer, to fill the GPU's last wave of blocks). 3-D order 8 on
   * an H100, of the copy, 400^3 and 512^3: f64 heat 0.802 and 0.827 with
   * marches of up to 1024 planes (100 and 512 taken) against 0.787 and
   * 0.794 with up to 64 (50 and 64), f64 wave 0.839 and 0.835 against
   * 0.824 and 0.838; f32 heat 0.629 and 0.682 with up to 1024 (134 and
   * 512) against 0.641 and 0.684 with up to 64 (45 and 64), and 0.634 and
   * 0.683 with 64 always. */
  template <typename T>
  struct March {
    enum { kMost = sizeof(T) == 8 ? GF_FD_RING_MARCH_F64 : GF_FD_RING_MARCH };
  };
  /* Slots of the ring at radius R: planes j .. j + R + Depth are held
   * while plane j is computed, in a multiple of the queue's length 2R + 1
   * slots, so that with the march unrolled by it every slot is a constant;
   * a slot holds a plane's tile with its halo. */
  template <typename T, int R>
  struct Slots {
    enum { kQueue = 2 * R + 1, kCount = (R + Depth<T>::kPlanes + kQueue) / kQueue * kQueue };
  };
  template <int R, int V>
  struct Slot {
    enum { kW = kX + 2 * ((R + V - 1) / V), kCells = (kY + 2 * R) * kW };
  };
  /* the slots (a multiple of 16 bytes), then with slot barriers a `full`
   * and an `empty` barrier a slot (RingSync) */
  template <typename T, int R, int V>
  struct Bytes {
    enum {
      kSlots = (Slots<T, R>::kCount * Slot<R, V>::kCells * (int)sizeof(Vec<T, V>) + 15) / 16 * 16
    };
  };
  template <typename T, int R, int V>
  static size_t bytes(bool slot_barriers) {
    return Bytes<T, R, V>::kSlots +
           (slot_barriers ? 2 * Slots<T, R>::kCount * sizeof(uint64_t) : 0);
  }
};

/* The ring's shared memory, `count` of `type`: dynamic (its size given at
 * the launch, past the 48 KiB a static array may have); HIP-CPU's own. */
#if defined(__HIP_CPU_RT__)
#define GF_FD_RING_SHARED(type, name, count) \
  __shared__ type name##_[count];            \
  type *name = name##_;
#else
#define GF_FD_RING_SHARED(type, name, count)               \
  extern __shared__ __align__(16) unsigned char name##_[]; \
  type *name = reinterpret_cast<type *>(name##_);
#endif

/* 3-D through a ring of planes in shared memory (kRingTile): a block owns a
 * tile of kX vectors along the last axis by kY rows along axis 1 and marches
 * down axis 0, `march` planes (balanced_march). Each plane's tile with its halo (the H vectors
 * either side along the last axis, R rows either side along axis 1) is
 * copied into a slot of the ring Depth planes ahead of its first use, by all
 * the block's threads (a copy in flight holds no register), so that the
 * copies of Depth planes overlap the computing of one. While plane j is
 * computed the ring holds planes j .. j + R + Depth: j's tile gives a cell's
 * neighbours along the last axis and axis 1; along axis 0 they come from a
 * register queue of each thread's own vector (planes j - R .. j + R, plane
 * j + R taken from its slot). The march is unrolled by the ring's length, a
 * multiple of the queue's, so that every slot and every place in the queue
 * is a constant and no value moves between registers; plane addresses step
 * by a stride. The threads wait for each other as RingSync says: at a block
 * barrier a plane (the slot a plane's copies fill held a plane computed
 * before it), or, where the scheme takes them (Scheme::kSlotBarriers, f64
 * wave), at barriers of each slot: f64 wave 3-D order 8 on an H100 ran at
 * 0.838 of the copy with them against 0.773 (400^3), but heat f32 at
 * 0.627 against 0.634 and f64 heat as fast. The fields read at the cell alone
 * (Scheme::point) are loaded at their plane: loaded a plane ahead, their
 * registers made nvcc spill wave's (3-D order 8 0.46 of the copy on an
 * H100 against 0.75).
 *
 * Against the register march, the ring reads each plane's tile once instead
 * of a thread's 2R rows along axis 1 through L1, and a cell costs fewer
 * instructions (Nsight Compute, heat 3-D order 8, 400^3, an H100: 121
 * million warp instructions a launch against the march's 162 million), so
 * heat there ran at 0.633 of the copy against 0.603, and 0.785 against 0.630
 * in f64. What bounds f32 then is latency: issue slots 60% busy, DRAM 61%,
 * a warp's cycles an instruction spent mostly at the barrier (1.73) and on
 * its loads (1.08); two planes between barriers ran as fast (0.634). Slot
 * barriers take the barrier's wait away (0.16 against 1.45 a warp's
 * instruction, f32) and the wait for the copies grows by as much (1.18 and
 * 0.91 on the loads and fixed latency against 0.81 and 0.59), with 5% more
 * instructions; with one or three planes ahead heat f32 ran at 0.59 and
 * 0.62. What bounds f32 is moving the planes, not computing them: the same
 * ring computing nothing ran at 0.61 against 0.64, fused multiply-adds took
 * 20% of the instructions away for 0.643, and more planes or blocks in
 * flight ran slower (scripts/bench/FINDINGS.md, "What bounds f32 heat's ring").
 *
 * Loads never leave the array: rows and vectors past the box's are clamped
 * to the last the box reads (tile_element), planes i0 - R .. end - 1 + R
 * are read; the cells they feed are computed and not stored. Such a
 * clamped vector of a slot is not copied at all (GF_FD_RING_SKIP): only
 * the threads past the box read it. At 400^3 a row holds 6.25 tiles of 16
 * vectors, and the last column of blocks had copied 18 vectors a row for
 * the 6 it reads; skipped, heat f64 3-D order 8 ran at 0.722 of the copy on
 * an H200 against 0.710, f32 at 0.574 against 0.572. */
template <typename Scheme, int R, int V, bool SlotBarriers>
__global__ void __launch_bounds__(Ring::kX *Ring::kY, Ring::kBlocks)
    ring_kernel(Scheme s, Walk w, int64_t march) {
  typedef typename Scheme::Type T;
  typedef Vec<T, V> Vt;
  enum {
    X = Ring::kX,
    Y = Ring::kY,
    N = X * Y,
    H = (R + V - 1) / V,
    W = Ring::Slot<R, V>::kW,
    CELLS = Ring::Slot<R, V>::kCells,
    NL = (CELLS + N - 1) / N, /* vectors of a slot a thread copies */
    D = Ring::Depth<T>::kPlanes,
    S = Ring::Slots<T, R>::kCount,
    Q = Ring::Slots<T, R>::kQueue, /* the queue: planes j - R .. j + R */
    P = Scheme::kPoints > 0 ? Scheme::kPoints : 1,
    SLOTS_AT = Ring::Bytes<T, R, V>::kSlots / sizeof(Vt), /* the barriers, in vectors */
    BARRIERS = SlotBarriers ? 2 * S * sizeof(uint64_t) / sizeof(Vt) : 0
  };
  GF_FD_RING_SHARED(Vt, ring, SLOTS_AT + BARRIERS)
  uint64_t *barriers = reinterpret_cast<uint64_t *>(ring + SLOTS_AT);
  RingSync<S, D, SlotBarriers> sync = {barriers, barriers + S};
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * X + tx;
  const int64_t v0 = (int64_t)blockIdx.x * X;
  const int64_t t = v0 + tx; /* this thread's vector along the last axis */
  const int64_t x = t * V;
  const int64_t marches = (w.n0 + march - 1) / march;
  const int own_at = (tx + H) + (ty + R) * W; /* the thread's vector in a slot */
  sync.init(tid, N);
  auto walk = [&]() {
    for (int64_t y0 = (int64_t)blockIdx.y * Y; y0 < w.n1; y0 += (int64_t)gridDim.y * Y)
      for (int64_t m = blockIdx.z; m < marches; m += gridDim.z) {
        const int64_t own = tile_element<V, H, R>(w, v0, y0, ty + R, tx + H);
        const bool stores = y0 + ty < w.n1 && t < w.nvec;
        const int64_t i0 = m * march, end = lesser(i0 + march, w.n0);
        /* The vectors of a slot this thread copies, as elements of plane 0;
         * planes i0 - R .. end - 1 + R are read, none past the array. */
        int64_t from[NL];
        bool copies[NL]; /* whether it copies vector n: one a stored cell reads */
        GF_UNROLL for (int n = 0; n < NL; n++) {
          const int e = tid + n * N;
          from[n] = e < CELLS ? tile_element<V, H, R>(w, v0, y0, e / W, e % W) : 0;
          copies[n] = e < CELLS && (!GF_FD_RING_SKIP ||
                                    (v0 + e % W - H < w.nvec + H && y0 + e / W - R < w.n1 + R));
        }
        /* A plane's copies (`plane` its element 0) into `slot`; none where
         * the march reads no such plane (the slot's barrier or the count of
         * groups still moves on) */
        auto copy_plane = [&](int slot, const T *plane, bool read) {
          if (read)
            GF_UNROLL for (int n = 0; n < NL; n++) if (copies[n])
                copy_async<T, V>(ring + slot * CELLS + tid + n * N, plane + from[n]);
          sync.filled(slot);
        };
        /* plane j (k = j - i0) in slot k % S, its use of the slot k / S, and
         * in the queue at (k + R) % Q */
        Vt q[Q];
        GF_UNROLL for (int k = 0; k < R + D; k++)
            copy_plane(k, s.in + (i0 + k) * w.s0, i0 + k < end + R);
        GF_UNROLL for (int k = 0; k < 2 * R; k++) q[k] =
            load<T, V>(s.in + own + (i0 - R + k) * w.s0);
        sync.first_landed(R);
        const T *ahead = s.in + (i0 + R + D) * w.s0; /* plane j + R + D */
        int64_t at = own + i0 * w.s0;                /* this thread's vector of plane j */
        int64_t use = 0;                             /* of slot 0 by plane i */
        for (int64_t i = i0; i < end; i += S, use++) GF_UNROLL for (int u = 0; u < S; u++) {
            const int64_t j = i + u; /* the plane computed */
            if (j >= end) continue;  /* (a break: hipcc would not unroll the loop) */
            if (sync.kSlots) {       /* plane j + R + D's copies, then plane j + R landed */
              sync.before_fill((u + R + D) % S, use + (u + R + D) / S);
              copy_plane((u + R + D) % S, ahead, j + D < end);
              sync.landed((u + R) % S, use + (u + R) / S);
            } else {
              sync.landed((u + R) % S, use + (u + R) / S);
              copy_plane((u + R + D) % S, ahead, j + D < end);
            }
            ahead += w.s0;
            const Vt *plane = ring + u * CELLS;
            q[(u + 2 * R) % Q] = ring[(u + R) % S * CELLS + own_at];
            Vt pt[P];
            GF_UNROLL for (int p = 0; p < Scheme::kPoints; p++) pt[p] =
                s.point[p] ? load<T, V>(s.point[p] + at) : Vt();
            Vt lo[H], hi[H], mid[2 * R];
            GF_UNROLL for (int h = 0; h < H; h++) {
              lo[h] = plane[own_at - 1 - h];
              hi[h] = plane[own_at + 1 + h];
            }
            GF_UNROLL for (int k = 0; k < 2 * R; k++) mid[k] =
                plane[own_at + (k < R ? k - R : k - R + 1) * W];
            sync.release(u); /* plane j's slot is read no more */
            const int at_j = (u + R) % Q;
            Vt out;
            GF_UNROLL for (int c = 0; c < V; c++) {
              /* value(d, k): axis 0 from the queue, the others from the plane's slot */
              auto value = [&](int d, int k) -> T {
                if (d == 2) return window<T, V, H>(lo, q[at_j], hi, c + k);
                if (d == 0 || k == 0) return q[(u + R + (d == 0 ? k : 0)) % Q].v[c];
                return mid[k < 0 ? k + R : k + R - 1].v[c];
              };
              T pts[P];
              GF_UNROLL for (int p = 0; p < P; p++) pts[p] = pt[p].v[c];
              out.v[c] = s.template cell<3, R>(value, pts);
            }
            if (stores) store<T, V>(s.out + at, out, x, w);
            at += w.s0;
          }
        /* the next march's copies fill slots this one's last planes used */
        sync.march_end(tid, N, end - 1 - i0 + R);
      }
  };
  walk_apart(s, walk);
}

/* 1-D: a vector and its neighbours a thread, grid-strided. */
template <typename Scheme, int R, int V>
__global__ void __launch_bounds__(Shape<1>::kX) line_kernel(Scheme s, Walk w) {
  typedef typename Scheme::Type T;
  typedef Vec<T, V> Vt;
  enum { H = (R + V - 1) / V, P = Scheme::kPoints };
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < w.nvec;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t x = t * V, e = w.first + x;
    /* a neighbour vector past the array's ends holds no cell the box reads */
    auto inside = [&](int64_t f) { return f < 0 ? 0 : f > w.total - V ? w.total - V : f; };
    Vt lo[H], hi[H], pt[P];
    const Vt own = load<T, V>(s.in + e);
    GF_UNROLL for (int h = 0; h < H; h++) {
      lo[h] = load<T, V>(s.in + inside(e - (h + 1) * V));
      hi[h] = load<T, V>(s.in + inside(e + (h + 1) * V));
    }
    GF_UNROLL for (int p = 0; p < P; p++) pt[p] = s.point[p] ? load<T, V>(s.point[p] + e) : Vt();
    Vt out;
    GF_UNROLL for (int c = 0; c < V; c++) {
      auto at = [&](int, int k) -> T { return window<T, V, H>(lo, own, hi, c + k); };
      T points[P];
      GF_UNROLL for (int p = 0; p < P; p++) points[p] = pt[p].v[c];
      out.v[c] = s.template cell<1, R>(at, points);
    }
    store<T, V>(s.out + e, out, x, w);
  }
}

/* The point tile's block. */
template <int NDIM>
struct Point;
template <>
struct Point<2> {
  enum { kX = GF_FD_POINT_X_2D, kY = GF_FD_POINT_Y_2D, kZ = 1 };
};
template <>
struct Point<3> {
  enum { kX = GF_FD_POINT_X_3D, kY = GF_FD_POINT_Y_3D, kZ = GF_FD_POINT_Z_3D };
};

/* 2-D and 3-D, a vector a thread: each thread loads its own vector's whole
 * neighbourhood (the 2R rows along axis 0 and, 3-D, axis 1 from L1 or L2,
 * where the block's other threads and its neighbours brought them), keeps
 * nothing and marches nowhere, so every thread's loads are independent
 * (on an H100, a plain kernel of the heat scheme, 2-D order 2, ran at 0.995
 * of the copy where a march of 32 rows ran at 0.74). Threads: x
 * a vector along the last axis, y a row along axis 0 (2-D) or axis 1
 * (3-D), z a plane along axis 0 (3-D); grid-strided past the grid's
 * limits. Every cell computed is the box's, so no load needs clamping
 * beyond the march's. */
template <typename Scheme, int NDIM, int R, int V>
__global__ void __launch_bounds__(Point<NDIM>::kX *Point<NDIM>::kY *Point<NDIM>::kZ,
                                  GF_FD_POINT_BLOCKS) point_kernel(Scheme s, Walk w) {
  typedef typename Scheme::Type T;
  typedef Vec<T, V> Vt;
  enum { H = (R + V - 1) / V, Y = NDIM == 3 ? 2 * R : 1, P = Scheme::kPoints };
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= w.nvec) return;
  const int64_t x = t * V;
  const int64_t rows = NDIM == 3 ? w.n1 : w.n0, planes = NDIM == 3 ? w.n0 : 1;
  auto walk = [&]() {
    for (int64_t p = (int64_t)blockIdx.z * blockDim.z + threadIdx.z; p < planes;
         p += (int64_t)gridDim.z * blockDim.z)
      for (int64_t r = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; r < rows;
           r += (int64_t)gridDim.y * blockDim.y) {
        const int64_t own = w.first + (NDIM == 3 ? p * w.s0 + r * w.s1 : r * w.s0) + x;
        const T *cell = s.in + own;
        Vt col[2 * R + 1], lo[H], hi[H], mid[Y], pt[P];
        GF_UNROLL for (int k = 0; k <= 2 * R; k++) col[k] = load<T, V>(cell + (k - R) * w.s0);
        GF_UNROLL for (int h = 0; h < H; h++) {
          lo[h] = load<T, V>(cell - (h + 1) * V);
          hi[h] = load<T, V>(cell + (h + 1) * V);
        }
        if (NDIM == 3)
          GF_UNROLL for (int k = 0; k < Y; k++) mid[k] =
              load<T, V>(cell + (k < R ? k - R : k - R + 1) * w.s1);
        GF_UNROLL for (int q = 0; q < P; q++) pt[q] =
            s.point[q] ? load<T, V>(s.point[q] + own) : Vt();
        Vt out;
        GF_UNROLL for (int c = 0; c < V; c++) {
          /* at(d, k): axis 0 from the column, the last axis from the window,
           * a 3-D grid's axis 1 from mid */
          auto at = [&](int d, int k) -> T {
            if (d == NDIM - 1) return window<T, V, H>(lo, col[R], hi, c + k);
            if (d == 0 || k == 0) return col[R + (d == 0 ? k : 0)].v[c];
            return mid[k < 0 ? k + R : k + R - 1].v[c];
          };
          T points[P];
          GF_UNROLL for (int q = 0; q < P; q++) points[q] = pt[q].v[c];
          out.v[c] = s.template cell<NDIM, R>(at, points);
        }
        store<T, V>(s.out + own, out, x, w);
      }
  };
  walk_apart(s, walk);
}

inline bool aligned(const void *p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

/* How many blocks of `threads` with `bytes` of dynamic shared memory the
 * current device holds at once of `kernel` (its multiprocessors times the
 * blocks each holds), letting the kernel have the bytes past the 48 KiB a
 * block has unasked. Asked once a device (GPUs 0 to 63; `held` is the
 * caller's, one per kernel, 0 where not yet asked): the attribute is the
 * device's, and asking at every launch put runtime calls on each step's
 * path. HIP-CPU has no limit to lift. */
template <typename Kernel>
hipError_t resident_blocks(Kernel kernel, int threads, size_t bytes,
                           std::atomic<int64_t> (&held)[64], int64_t *resident) {
  int device = 0, per_sm = 0, sms = 0;
  hipError_t err = hipGetDevice(&device);
  if (err != hipSuccess) return err;
  std::atomic<int64_t> *known = device >= 0 && device < 64 ? &held[device] : NULL;
  if (known && (*resident = known->load(std::memory_order_relaxed)) > 0) return hipSuccess;
#if !defined(__HIP_CPU_RT__)
  if (bytes > 48 * 1024)
    err = hipFuncSetAttribute(reinterpret_cast<const void *>(kernel),
                              hipFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
#endif
  if (err == hipSuccess)
    err = hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes);
#if defined(__HIP_CPU_RT__)
  sms = 1; /* HIP-CPU has no such attribute */
#else
  if (err == hipSuccess)
    err = hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, device);
#endif
  if (err != hipSuccess) return err;
  /* none: the launch says why (too much shared memory or too many registers) */
  *resident = per_sm > 0 && sms > 0 ? (int64_t)per_sm * sms : 1;
  if (known) known->store(*resident, std::memory_order_relaxed);
  return hipSuccess;
}

/* The planes a block of the ring marches down axis 0, for `columns`
 * columns of n0 planes with `resident` blocks at once: at most `most`, and
 * of the marches a column from the fewest up to four times as many (64
 * more at most), the one whose waves of blocks cost least, a wave as long
 * as its blocks' planes and their `lead` (planes copied before the first
 * is computed). With 64 planes at 400^3, f32, 1225 blocks made 4.6 waves of
 * 264, the last a third empty; 45 planes make 1575, 6.0 waves. */
inline int64_t balanced_march(int64_t n0, int64_t columns, int64_t resident, int64_t most,
                              int lead) {
  if (!GF_FD_RING_BALANCE) return most;
  const int64_t fewest = (n0 + most - 1) / most;
  int64_t best = most, best_cost = INT64_MAX;
  for (int64_t c = fewest; c <= 4 * fewest && c < fewest + 64; c++) {
    const int64_t planes = (n0 + c - 1) / c, marches = (n0 + planes - 1) / planes;
    const int64_t waves = (columns * marches + resident - 1) / resident;
    const int64_t cost = waves * (planes + lead);
    if (cost < best_cost) best = planes, best_cost = cost;
  }
  return best;
}

/* A sector of memory, in bytes: the unit L2 reads and writes. */
enum { kSector = 32 };

/* Launches Scheme's tile over `box` of `a` in vectors of V cells; `sectors`:
 * every row of every field the launch reads or writes begins at a sector.
 * Then the walk starts at a sector too (but for the 2-D march at order 4:
 * Shape's kSectorStart),
 * so that no sector is written in part by two blocks: the box inside the
 * grid's halo of 4 f32 cells begins 16 bytes into one. On an H200, of the
 * copy: heat f32 3-D orders 2 / 4 / 8 0.769 / 0.688 / 0.608 against
 * 0.696 / 0.664 / 0.598, wave f32 0.943 / 0.874 / 0.707 against 0.905 /
 * 0.852 / 0.697, heat f32 2-D orders 2 and 8 0.927 and 0.877 against 0.908
 * and 0.854, but order 4 0.849 against 0.866 (the 2-D box, 8192 cells
 * from cell 4, is then 2049 vectors, a 65th column of blocks). A copy
 * that marches tiles of 16 x 16 vectors down 400^3
 * (scripts/bench/march_copy.hip) ran at 0.560 of the device's copy from
 * the box's first vector, 0.737 from the sector below it
 * (scripts/bench/FINDINGS.md, "Sectors"). */
template <typename Scheme, int R, int V>
hipError_t launch_walk(const Scheme &s, const gf_array *a, const gf_box &box, bool sectors,
                       hipStream_t stream) {
  typedef typename Scheme::Type T;
  enum { SECTOR_CELLS = kSector / (int)sizeof(T) > V ? kSector / (int)sizeof(T) : V };
  const Tile tile = GF_FD_TILE ? (Tile)GF_FD_TILE : Scheme::tile(a->ndim, R);
  const bool march_2d = a->ndim == 2 && tile != kPointTile && tile != kPlaneTile;
  const bool from_sector =
      sectors && GF_FD_SECTOR_START && (!march_2d || Shape<2, R>::kSectorStart);
  const Walk w = walk_of(a, box, V, from_sector ? SECTOR_CELLS : V);
  auto marches = [&](int64_t march) { return (w.n0 + march - 1) / march; };
  /* A row too long for any grid is passed on for the runtime to reject. */
  auto blocks = [](int64_t n, int64_t per, int64_t most) {
    const int64_t b = (n + per - 1) / per;
    return (unsigned)(b < most ? b : most);
  };
  if (tile == kPointTile && a->ndim >= 2) {
    typedef Point<2> P2;
    typedef Point<3> P3;
    if (a->ndim == 2)
      hipLaunchKernelGGL((point_kernel<Scheme, 2, R, V>),
                         dim3(blocks(w.nvec, P2::kX, UINT32_MAX), blocks(w.n0, P2::kY, kMaxBlocks)),
                         dim3(P2::kX, P2::kY), 0, stream, s, w);
    else
      hipLaunchKernelGGL((point_kernel<Scheme, 3, R, V>),
                         dim3(blocks(w.nvec, P3::kX, UINT32_MAX), blocks(w.n1, P3::kY, kMaxBlocks),
                              blocks(w.n0, P3::kZ, kMaxBlocks)),
                         dim3(P3::kX, P3::kY, P3::kZ), 0, stream, s, w);
    return hipGetLastError();
  }
  if (tile == kRingTile && a->ndim == 3) {
    enum {
      kSlotBarriers =
          GF_FD_RING_SLOT_BARRIERS == 2 || (GF_FD_RING_SLOT_BARRIERS == 1 && Scheme::kSlotBarriers)
    };
    const size_t bytes = Ring::bytes<T, R, V>(kSlotBarriers);
    static std::atomic<int64_t> held[64]; /* this instance's resident blocks a device */
    const unsigned bx = blocks(w.nvec, Ring::kX, UINT32_MAX),
                   by = blocks(w.n1, Ring::kY, kMaxBlocks);
    int64_t resident = 1;
    const hipError_t err = resident_blocks(ring_kernel<Scheme, R, V, kSlotBarriers>,
                                           Ring::kX * Ring::kY, bytes, held, &resident);
    if (err != hipSuccess) return err;
    const int64_t march = balanced_march(w.n0, (int64_t)bx * by, resident, Ring::March<T>::kMost,
                                         R + Ring::Depth<T>::kPlanes);
    hipLaunchKernelGGL((ring_kernel<Scheme, R, V, kSlotBarriers>),
                       dim3(bx, by, blocks(marches(march), 1, kMaxBlocks)),
                       dim3(Ring::kX, Ring::kY), bytes, stream, s, w, march);
    return hipGetLastError();
  }
  if (tile == kPlaneTile && a->ndim >= 2) {
    typedef Plane<2> P2;
    typedef Plane<3> P3;
    if (a->ndim == 2)
      hipLaunchKernelGGL(
          (plane_kernel<Scheme, 2, R, V>),
          dim3(blocks(w.nvec, P2::kX, UINT32_MAX), blocks(marches(kPlaneMarch), 1, kMaxBlocks)),
          dim3(P2::kX), 0, stream, s, w);
    else
      hipLaunchKernelGGL((plane_kernel<Scheme, 3, R, V>),
                         dim3(blocks(w.nvec, P3::kX, UINT32_MAX), blocks(w.n1, P3::kY, kMaxBlocks),
                              blocks(marches(kPlaneMarch), 1, kMaxBlocks)),
                         dim3(P3::kX, P3::kY), 0, stream, s, w);
    return hipGetLastError();
  }
  switch (a->ndim) {
    case 1:
      hipLaunchKernelGGL((line_kernel<Scheme, R, V>), dim3(blocks(w.nvec, Shape<1>::kX, INT32_MAX)),
                         dim3(Shape<1>::kX), 0, stream, s, w);
      break;
    case 2:
      hipLaunchKernelGGL(
          (march_kernel<Scheme, 2, R, V>),
          dim3(blocks(w.nvec, Shape<2>::kX, UINT32_MAX),
               blocks(marches(march_rows<2, R>(Scheme::kShortMarch)), Shape<2>::kY, kMaxBlocks)),
          dim3(Shape<2>::kX, Shape<2>::kY), 0, stream, s, w);
      break;
    default:
      hipLaunchKernelGGL(
          (march_kernel<Scheme, 3, R, V>),
          dim3(blocks(w.nvec, Shape<3>::kX, UINT32_MAX), blocks(w.n1, Shape<3>::kY, kMaxBlocks),
               blocks(marches(march_rows<3, R>(Scheme::kShortMarch)), 1, kMaxBlocks)),
          dim3(Shape<3>::kX, Shape<3>::kY), 0, stream, s, w);
  }
  return hipGetLastError();
}

/* Launches Scheme's tile over `box` of `a` (the shape of every field), of
 * radius R: 1, 2 or 4 (order 2, 4, 8); vectors where the rows and fields
 * allow them. */
template <typename Scheme>
hipError_t launch_tiles(const Scheme &s, int radius, const gf_array *a, const gf_box &box,
                        hipStream_t stream) {
  typedef typename Scheme::Type T;
  enum { VB = GF_FD_VECTOR_BYTES, V = VB >= (int)sizeof(T) ? VB / (int)sizeof(T) : 1 };
  const int64_t row_bytes = a->shape[a->ndim - 1] * (int64_t)sizeof(T);
  bool vectors = V > 1 && row_bytes % (V * sizeof(T)) == 0, sectors = row_bytes % kSector == 0;
  const void *fields[2 + Scheme::kPoints] = {s.in, s.out}; /* NULL: a point field not given */
  for (int p = 0; p < Scheme::kPoints; p++) fields[2 + p] = s.point[p];
  for (const void *field : fields) {
    vectors = vectors && aligned(field, V * sizeof(T));
    sectors = sectors && aligned(field, kSector);
  }
  if (box.lo[0] >= box.hi[0] || gf_fd_rows_of(a, box).len <= 0) return hipSuccess;
  switch (radius * 2 + vectors) {
    case 2:
      return launch_walk<Scheme, 1, 1>(s, a, box, false, stream);
    case 3:
      return launch_walk<Scheme, 1, V>(s, a, box, sectors, stream);
    case 4:
      return launch_walk<Scheme, 2, 1>(s, a, box, false, stream);
    case 5:
      return launch_walk<Scheme, 2, V>(s, a, box, sectors, stream);
    case 8:
      return launch_walk<Scheme, 4, 1>(s, a, box, false, stream);
    default:
      return launch_walk<Scheme, 4, V>(s, a, box, sectors, stream);
  }
}

/* The generic path (stencil.hip's taps that the tile does not take): one
 * thread a column of kRows cells down the middle axis, each cell's value
 * computed on its own. Threads: x along the array's last axis, counted from
 * a multiple of 32 so that a warp's loads start on a 128-byte line whenever
 * the rows do; y over the middle axis; z over the first (3-D); y and z
 * grid-strided past the 65535 blocks a launch allows. */
constexpr int kBlockX = 128;
constexpr int kRows = 4;

struct Grid {
  dim3 grid, block;
  int64_t align;
};

inline Grid grid_of(const gf_fd_rows &rows, const gf_box &box, int ndim) {
  Grid g;
  g.align = box.lo[ndim - 1] % 32;
  int64_t bx = (rows.len + g.align + kBlockX - 1) / kBlockX;
  int64_t by = (rows.n_mid + kRows - 1) / kRows;
  if (by > kMaxBlocks) by = kMaxBlocks;
  int64_t bz = rows.n_outer < kMaxBlocks ? rows.n_outer : kMaxBlocks;
  /* A row too long for any grid is passed on for the runtime to reject. */
  if (bx > (int64_t)UINT32_MAX) bx = UINT32_MAX;
  g.grid = dim3((unsigned)bx, (unsigned)by, (unsigned)bz);
  g.block = dim3(kBlockX, 1, 1);
  return g;
}

/* For this thread's cells (kRows of them down the middle axis in each of
 * its tiles): store(o, value(o)), every value of a full tile before its
 * first store (the output is never an input: the planner refuses that). */
template <typename Value, typename Store>
__device__ __forceinline__ void for_my_cells(const gf_fd_rows &rows, int64_t align, Value value,
                                             Store store) {
  const int64_t x = (int64_t)blockIdx.x * kBlockX + threadIdx.x - align;
  if (x < 0 || x >= rows.len) return;
  const int64_t sm = rows.stride_mid;
  for (int64_t i = blockIdx.z; i < rows.n_outer; i += gridDim.z)
    for (int64_t j = (int64_t)blockIdx.y * kRows; j < rows.n_mid; j += (int64_t)gridDim.y * kRows) {
      const int64_t o = rows.base + i * rows.stride_outer + j * sm + x;
      if (j + kRows <= rows.n_mid) {
        decltype(value(o)) v[kRows];
        GF_UNROLL for (int r = 0; r < kRows; r++) v[r] = value(o + r * sm);
        GF_UNROLL for (int r = 0; r < kRows; r++) store(o + r * sm, v[r]);
      } else {
        for (int64_t r = 0; j + r < rows.n_mid; r++) store(o + r * sm, value(o + r * sm));
      }
    }
}

/* fd_cell.h's functions and types under one name for both element types. */
template <typename T>
struct Fd;
#define GF_FD_GPU_TRAITS(T, S)                                                                  \
  template <>                                                                                   \
  struct Fd<T> {                                                                                \
    typedef gf_fd_lap_##S Lap;                                                                  \
    static Lap lap_of(const gf_array *a, int radius, double scale) {                            \
      return gf_fd_lap_of_##S(a, radius, scale);                                                \
    }                                                                                           \
    __device__ static T wave_update(T u1, T u0, T v, T lap, T dt2) {                            \
      return gf_fd_wave_update_##S(u1, u0, v, lap, dt2);                                        \
    }                                                                                           \
    __device__ static T heat_update(T t0, T lap) { return gf_fd_heat_update_##S(t0, lap); }     \
    __device__ static T force(T x, T amplitude, T pattern) {                                    \
      return gf_fd_force_##S(x, amplitude, pattern);                                            \
    }                                                                                           \
    __device__ static T tap(T acc, T coef, T value) { return gf_fd_tap_##S(acc, coef, value); } \
    __device__ static T pair(T acc, T coef, T value, T mirror) {                                \
      return gf_fd_pair_##S(acc, coef, value, mirror);                                          \
    }                                                                                           \
    __device__ static T terms(T acc, const T *u, int64_t o, int n, const int64_t *offset,       \
                              const T *coef, const unsigned char *pairs) {                      \
      return gf_fd_terms_##S(acc, u, o, n, offset, coef, pairs);                                \
    }                                                                                           \
  };
GF_FD_GPU_TRAITS(float, f32)
GF_FD_GPU_TRAITS(double, f64)
#undef GF_FD_GPU_TRAITS

/* Point sources, a chunk at a time, added by one thread in list order, as
 * gf_fd_add_sources does on the CPU (two sources may share a cell). */
constexpr int kSourcesPerLaunch = 64;
template <typename T>
struct Sources {
  int n;
  int64_t offset[kSourcesPerLaunch];
  T weight[kSourcesPerLaunch];
};

template <typename T>
__global__ void add_sources_kernel(T *u, Sources<T> s, T amplitude) {
  for (int k = 0; k < s.n; k++) u[s.offset[k]] += amplitude * s.weight[k];
}

/* Enqueues the sources of `forcing` that lie in `box` after the update;
 * returns the first launch's error. */
template <typename T>
int add_sources(const gf_array *u, const gf_box &box, const gf_fd_forcing &forcing,
                hipStream_t stream) {
  Sources<T> s;
  s.n = 0;
  for (int64_t k = 0; k <= forcing.sources.count; k++) {
    if (k < forcing.sources.count) {
      const gf_point *p = &forcing.sources.point[k];
      int64_t o = gf_fd_source_offset(u, box, p);
      if (o < 0) continue;
      s.offset[s.n] = o;
      s.weight[s.n++] = (T)p->weight;
    }
    if (s.n == kSourcesPerLaunch || (k == forcing.sources.count && s.n > 0)) {
      hipLaunchKernelGGL(add_sources_kernel<T>, dim3(1), dim3(1), 0, stream,
                         static_cast<T *>(u->data), s, (T)forcing.amplitude);
      hipError_t err = hipGetLastError();
      if (err != hipSuccess) return static_cast<int>(err);
      s.n = 0;
    }
  }
  return hipSuccess;
}

}  // namespace gf_fd_gpu

#endif
