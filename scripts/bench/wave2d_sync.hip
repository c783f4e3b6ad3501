/* wave2d_sync.hip - the seed's synchronous schedule (the HIP course's wave2d_sync.cpp).
 *
 * Three wavefields (nscratch = 3) on the null stream; each step launches the
 * kernel, then a blocking copy of U0 (the field step n-2 wrote) into plane n of
 * the pageable output, for 1 < n < NT-1.
 */
#include "wave2d_common.hip"

int main(int argc, char **argv) {
  seed_setup s = seed_setup_from_args(argc, argv);
  const int nscratch = 3;
  float_type *U_ds[nscratch], *V_d = NULL;
  seed_fields(s, nscratch, U_ds, &V_d);
  const size_t nbytes_U = s.N0 * s.N1 * sizeof(float_type);
  float_type *out_h = NULL;
  if (s.io) out_h = (float_type *)calloc((size_t)s.NT * s.N0 * s.N1, sizeof(float_type));

  for (int r = 0; r < s.repeat; r++) {
    seed_zero_fields(s, nscratch, U_ds);
    double start = now_ms();
    for (int n = 0; n < s.NT; n++) {
      float_type *U0_d = U_ds[n % nscratch];
      float_type *U1_d = U_ds[(n + 1) % nscratch];
      float_type *U2_d = U_ds[(n + 2) % nscratch];
      hipLaunchKernelGGL(wave2d_4o, s.grid, s.block, 0, 0, U0_d, U1_d, U2_d, V_d, s.N0, s.N1, s.dt2,
                         s.inv_dx02, s.inv_dx12, s.P0, s.P1, seed_pi2fm2t2(s, n));
      BENCH_CHECK(hipGetLastError());
      if (s.io && n > 1 && n < s.NT - 1)
        BENCH_CHECK(hipMemcpy((void *)&out_h[(size_t)n * s.N0 * s.N1], U0_d, nbytes_U,
                              hipMemcpyDeviceToHost));
    }
    BENCH_CHECK(hipDeviceSynchronize());
    seed_report(s, "synchronous", now_ms() - start);
  }
  seed_write(s, out_h);
  free(out_h);
  for (int i = 0; i < nscratch; i++) BENCH_CHECK(hipFree(U_ds[i]));
  BENCH_CHECK(hipFree(V_d));
  return 0;
}
