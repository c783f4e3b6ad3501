/* heat.hip - `heat` on the GPU: fd_gpu.h's tile holds T0's neighbourhood,
 * fd_cell.h's gf_fd_heat_update computes each cell from it (so the CPU
 * loop's bits, built without contraction), an instance per type,
 * dimension, order and vector width. */
#include "fd_gpu.h"
#include "heat.h"

namespace {

using namespace gf_fd_gpu;

/* T1 = T0 + alpha dt lap(T0) (+ amplitude * pattern). */
template <typename T>
struct HeatScheme {
  typedef T Type;
  enum { kPoints = 1, kSlotBarriers = 0, kCapMarch = 1, kShortMarch = 0 };
  const T *in;       /* T0 */
  const T *point[1]; /* pattern (NULL: none) */
  T *out;            /* T1 */
  typename Fd<T>::Lap L;
  T amplitude;

  /* As measured on an H100 (scripts/bench/fd-tiles.sh, f32, of the copy,
   * before the vector stores): the register march (2-D 0.93, 0.91 and 0.87
   * at orders 2, 4 and 8 against the point tile's 0.87, 0.75 and 0.59; 3-D
   * 0.66 and 0.58 at orders 4 and 8), but the point tile at 3-D order 2
   * (0.65 against 0.62; 0.69 with the vector stores). The shared-memory
   * tile was no faster (2-D 0.74 / 0.72 / 0.68, 3-D order 8 0.47; 0.54
   * with the vector stores). The ring at 3-D order 8 (f32 0.633 against
   * the march's 0.603, f64 0.783 against 0.630; at orders 2 and 4 it was
   * slower: 0.64 and 0.65 against 0.69 and 0.73); the ring without slot
   * barriers (with them, f32 0.627 against 0.634 at 400^3; f64 0.806 and
   * 0.816 against 0.802 and 0.827 at 400^3 and 512^3). On an H200 the
   * march took 3-D order 2 back from the point tile (0.691 against 0.607,
   * 400^3). */
  static Tile tile(int ndim, int radius) {
    return ndim == 3 && radius == 4 ? kRingTile : kMarchTile;
  }

  /* no forcing pattern (fd_gpu.h walks apart then: GF_FD_SPLIT) */
  __device__ bool plain() const { return !point[0]; }

  template <int NDIM, int R, typename At>
  __device__ __forceinline__ T cell(At at, const T *p) const {
    const T t = Fd<T>::heat_update(at(0, 0), laplacian<NDIM, R, T>(L, at));
    return point[0] ? Fd<T>::force(t, amplitude, p[0]) : t;
  }
};

template <typename T>
int launch(const gf_heat_args *a, hipStream_t stream) {
  const int radius = gf_fd_radius(a->order);
  HeatScheme<T> s;
  s.in = static_cast<const T *>(a->T0.data);
  s.point[0] = a->forcing.pattern.ndim ? static_cast<const T *>(a->forcing.pattern.data) : NULL;
  s.out = static_cast<T *>(a->T1.data);
  s.L = Fd<T>::lap_of(&a->T0, radius, a->alpha * a->dt);
  s.amplitude = (T)a->forcing.amplitude;
  hipError_t err = launch_tiles(s, radius, &a->T0, a->box, stream);
  if (err != hipSuccess) return static_cast<int>(err);
  return add_sources<T>(&a->T1, a->box, a->forcing, stream);
}

}  // namespace

extern "C" int gf_heat_launch_gpu(const void *args, void *stream) {
  const gf_heat_args *a = static_cast<const gf_heat_args *>(args);
  hipStream_t s = static_cast<hipStream_t>(stream);
  return a->T0.dtype == GF_F64 ? launch<double>(a, s) : launch<float>(a, s);
}
