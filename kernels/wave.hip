/* wave.hip - `wave` on the GPU: fd_gpu.h's tile holds U1's neighbourhood,
 * fd_cell.h's gf_fd_wave_update computes each cell from it (so the CPU
 * loop's bits, built without contraction), an instance per type,
 * dimension, order and vector width. */
#include "fd_gpu.h"
#include "wave.h"

namespace {

using namespace gf_fd_gpu;

/* U2 = 2 U1 - U0 + dt^2 V^2 lap(U1) (+ amplitude * pattern). */
template <typename T>
struct WaveScheme {
  typedef T Type;
  enum { kPoints = 3, kSlotBarriers = sizeof(T) == 8, kCapMarch = 1, kShortMarch = 1 };
  const T *in;       /* U1 */
  const T *point[3]; /* U0, V, pattern (NULL: none) */
  T *out;            /* U2 */
  typename Fd<T>::Lap L;
  T dt2, amplitude;

  /* As measured on an H100 (scripts/bench/fd-tiles.sh, of the copy): the
   * point tile in 2-D up to order 4 (1.01 and 0.97 against the register
   * march's 0.98 and 0.97), the shared-memory tile at f32 order 8 (2-D
   * 0.87 against the march's 0.80, 3-D 0.73 against 0.72), the march
   * elsewhere (3-D orders 2 and 4 0.85 and 0.83 against the point tile's
   * 0.84 and 0.62), but the ring at f64 3-D order 8 (0.77 against the
   * march's 0.73; at f32 the ring's 0.75 against the shared plane's 0.78),
   * with slot barriers (kSlotBarriers: 0.838 against 0.773 at 400^3,
   * 0.835 against 0.790 at 512^3; at f32 the ring with them ran at 0.752
   * and 0.815 against the shared plane's 0.782 and 0.833). On an H200 the
   * march, stepped and capped (march_blocks), took f32 2-D order 8 from the
   * shared plane's 0.866 to 0.915, and to 0.952 in wave's shorter marches
   * (kShortMarch, march_rows) with the order-8 prefetch. */
  static Tile tile(int ndim, int radius) {
    if (ndim == 2 && radius <= 2) return kPointTile;
    if (ndim == 3 && radius == 4) return sizeof(T) == 8 ? kRingTile : kPlaneTile;
    return kMarchTile;
  }

  /* no forcing pattern (fd_gpu.h walks apart then: GF_FD_SPLIT) */
  __device__ bool plain() const { return !point[2]; }

  template <int NDIM, int R, typename At>
  __device__ __forceinline__ T cell(At at, const T *p) const {
    const T u = Fd<T>::wave_update(at(0, 0), p[0], p[1], laplacian<NDIM, R, T>(L, at), dt2);
    return point[2] ? Fd<T>::force(u, amplitude, p[2]) : u;
  }
};

template <typename T>
int launch(const gf_wave_args *a, hipStream_t stream) {
  const int radius = gf_fd_radius(a->order);
  WaveScheme<T> s;
  s.in = static_cast<const T *>(a->U1.data);
  s.point[0] = static_cast<const T *>(a->U0.data);
  s.point[1] = static_cast<const T *>(a->V.data);
  s.point[2] = a->forcing.pattern.ndim ? static_cast<const T *>(a->forcing.pattern.data) : NULL;
  s.out = static_cast<T *>(a->U2.data);
  s.L = Fd<T>::lap_of(&a->U1, radius, 1.0);
  s.dt2 = (T)(a->dt * a->dt);
  s.amplitude = (T)a->forcing.amplitude;
  hipError_t err = launch_tiles(s, radius, &a->U1, a->box, stream);
  if (err != hipSuccess) return static_cast<int>(err);
  return add_sources<T>(&a->U2, a->box, a->forcing, stream);
}

}  // namespace

extern "C" int gf_wave_launch_gpu(const void *args, void *stream) {
  const gf_wave_args *a = static_cast<const gf_wave_args *>(args);
  hipStream_t s = static_cast<hipStream_t>(stream);
  return a->U1.dtype == GF_F64 ? launch<double>(a, s) : launch<float>(a, s);
}
