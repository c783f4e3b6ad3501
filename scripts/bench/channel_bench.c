/* channel_bench.c - the seed's bidirectional copy (MSCCL++'s MemoryChannel
 * tutorial, seed 004) through gflow's channel (backend.h) and through the
 * plain way, side by side, between two ranks (mpirun -np 2). Each iteration,
 * each rank sends `bytes` into the other's memory and the two meet:
 *
 *   put, signal   gf_channel_put (the backend's copy: a copy engine on a
 *                 GPU), gf_channel_signal, gf_channel_wait: three operations
 *   put+signal    gf_channel_put_signal (one kernel whose threads copy, then
 *                 signal), gf_channel_wait: two operations
 *   one kernel    gf_channel_put_signal_wait: the put, the signal and the
 *                 wait in one kernel, the seed's loop
 *   packets       gf_channel_exchange_packets: one kernel that puts this
 *                 rank's bytes as packets (data beside flags) into the
 *                 other's packet area and takes the other's from its own
 *                 (the seed's put of packets; messages up to 1 MiB)
 *   copy, met     GPU: the plain way to the handshake: a peer copy, its
 *                 stream synchronised and an MPI barrier, each iteration
 *   peer copy     GPU: hipMemcpyPeerAsync into the other rank's memory
 *                 (opened through its IPC handle; in a graph, which takes
 *                 no hipMemcpyPeerAsync, hipMemcpyAsync between the two
 *                 addresses), back to back on a stream,
 *                 the two ranks meeting only before and after the loop (the
 *                 copy engine's bound, no handshake per iteration); CPU: an
 *                 MPI exchange per iteration (MPI_Irecv + MPI_Isend + wait,
 *                 through comm.c)
 *
 * With --graph (GPU), every loop is captured once into a graph and replayed,
 * as the seed's program does (and as gflow's graph schedule would): the
 * channel's through the backend's graph capture, the peer copies' through
 * HIP's. BW = bytes / (elapsed time per iteration), in GB/s (10^9), the
 * seed's formula (134217728 B at 0.388549 ms/iter is its 345.433 GB/s);
 * elapsed is the slower rank's, best of `repeat`. With --gpus 1 both ranks
 * share GPU 0 (IPC on one device); with --gpus 2 rank r takes GPU r (issue
 * 15's figures).
 *
 *   mpirun -np 2 channel_bench [--backend gpu|cpu] [--gpus N] [--repeat R] [--scale S] [--graph]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "comm.h"

#ifdef GFLOW_WITH_GPU
#include "gf_hip.h"
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(gf_comm *comm, const char *what, const char *why) {
  fprintf(stderr, "channel_bench: rank %d: %s: %s\n", gf_comm_rank(comm), what, why);
  gf_comm_abort(comm, 1);
  exit(1);
}

/* Swaps `bytes` with the other rank (blocking). */
static void swap(gf_comm *comm, gf_comm_batch *batch, const void *mine, void *theirs,
                 size_t bytes) {
  int peer = 1 - gf_comm_rank(comm);
  gf_comm_message send = {peer, 7, (void *)mine, bytes}, recv = {peer, 7, theirs, bytes};
  char why[256];
  if (gf_comm_post(comm, batch, &recv, 1, &send, 1, why, sizeof why) != GF_OK ||
      gf_comm_wait(comm, batch, why, sizeof why) != GF_OK)
    die(comm, "exchanging with the other rank", why);
}

typedef struct bench {
  gf_comm *comm;
  gf_comm_batch *batch;
  gf_backend *b;
  gf_stream *s;
  int gpu, device, peer_device;
  void *src;                /* `max` bytes this rank sends */
  void *dst;                /* PACKET_MAX bytes: where packets are taken to */
  gf_channel *ch;           /* inbox of `max` bytes */
  uint64_t signals;         /* the slot's value so far */
  gf_channel_handle peer_h; /* the peer-copy target: the other rank's registered region */
  gf_channel_handle mine_h;
  void *mine, *remote;
  void *host; /* the pattern sent (copied to src); then the CPU baseline receives into it */
} bench;

enum { PUT_SIGNAL_WAIT, PUT_WITH_SIGNAL, ONE_KERNEL, PACKETS, PEER_COPY, PEER_MET, VARIANTS };
static const char *const variant_names[VARIANTS] = {"put, signal", "put+signal", "one kernel",
                                                    "packets",     "peer copy",  "copy, met"};
#define PACKET_MAX ((size_t)1 << 20)

/* One channel iteration on the bench's stream. */
static gf_status channel_iteration(bench *x, int variant, size_t bytes) {
  gf_tag tag = {-1, -1, -1};
  uint64_t v = ++x->signals;
  switch (variant) {
    case PUT_SIGNAL_WAIT: {
      gf_status st = gf_channel_put(x->ch, x->s, 0, x->src, bytes, tag);
      if (st == GF_OK) st = gf_channel_signal(x->ch, x->s, 0, v, tag);
      return st == GF_OK ? gf_channel_wait(x->ch, x->s, 0, v, tag) : st;
    }
    case PUT_WITH_SIGNAL: {
      gf_status st = gf_channel_put_signal(x->ch, x->s, 0, x->src, bytes, 0, v, tag);
      return st == GF_OK ? gf_channel_wait(x->ch, x->s, 0, v, tag) : st;
    }
    case PACKETS:
      return gf_channel_exchange_packets(x->ch, x->s, x->src, bytes, x->dst, bytes, tag);
    default:
      return gf_channel_put_signal_wait(x->ch, x->s, 0, x->src, bytes, 0, v, tag);
  }
}

/* Seconds per iteration of `iters` channel iterations, this rank: issued one
 * by one, or captured into one graph first and timed as its launch. */
static double run_channel(bench *x, int variant, size_t bytes, int iters, int graph) {
  gf_backend *b = x->b;
  gf_graph *g = NULL;
  if (graph) {
    if (b->ops->graph_capture_begin(b, x->s) != GF_OK) die(x->comm, "capturing", b->error);
    for (int i = 0; i < iters; i++)
      if (channel_iteration(x, variant, bytes) != GF_OK) die(x->comm, "channel", b->error);
    if (b->ops->graph_capture_end(b, x->s, NULL, &g) != GF_OK) die(x->comm, "capturing", b->error);
    /* the captured signals' values are what this launch must reach */
  }
  gf_comm_barrier(x->comm);
  double t0 = now_s();
  if (graph) {
    if (b->ops->graph_launch(b, g, x->s) != GF_OK) die(x->comm, "graph launch", b->error);
  } else {
    for (int i = 0; i < iters; i++)
      if (channel_iteration(x, variant, bytes) != GF_OK) die(x->comm, "channel", b->error);
  }
  if (b->ops->stream_synchronize(b, x->s) != GF_OK) die(x->comm, "synchronize", b->error);
  double t = (now_s() - t0) / iters;
  if (g) b->ops->graph_destroy(b, g);
  return t;
}

#ifdef GFLOW_WITH_GPU
/* The peer copies' own stream, created once, for the baselines. */
static hipError_t peer_stream(hipStream_t *out) {
  static hipStream_t stream;
  hipError_t err = stream ? hipSuccess : hipStreamCreateWithFlags(&stream, hipStreamNonBlocking);
  *out = stream;
  return err;
}
#endif

/* Seconds per iteration of the baseline, this rank. */
static double run_baseline(bench *x, size_t bytes, int iters, int graph) {
  double t0 = 0;
  if (x->gpu) {
#ifdef GFLOW_WITH_GPU
    hipStream_t stream = NULL;
    hipGraph_t captured = NULL;
    hipGraphExec_t exec = NULL;
    hipError_t err = peer_stream(&stream);
    if (err == hipSuccess && graph)
      err = hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal);
    /* A capture takes no hipMemcpyPeerAsync: the same copy as a plain
     * one between the two devices' addresses (unified addressing). */
    for (int i = 0; i < iters && err == hipSuccess && graph; i++)
      err = hipMemcpyAsync(x->remote, x->src, bytes, hipMemcpyDeviceToDevice, stream);
    if (err == hipSuccess && graph) err = hipStreamEndCapture(stream, &captured);
    if (err == hipSuccess && graph) err = hipGraphInstantiateWithFlags(&exec, captured, 0);
    gf_comm_barrier(x->comm);
    t0 = now_s();
    if (err == hipSuccess && graph) err = hipGraphLaunch(exec, stream);
    for (int i = 0; i < iters && err == hipSuccess && !graph; i++)
      err = hipMemcpyPeerAsync(x->remote, x->peer_device, x->src, x->device, bytes, stream);
    if (err == hipSuccess) err = hipStreamSynchronize(stream);
    if (err != hipSuccess) die(x->comm, "hipMemcpyPeerAsync", hipGetErrorString(err));
    if (exec) (void)hipGraphExecDestroy(exec);
    if (captured) (void)hipGraphDestroy(captured);
#endif
    gf_comm_barrier(x->comm); /* both copies have landed */
  } else {
    (void)graph;
    gf_comm_barrier(x->comm);
    t0 = now_s();
    int peer = 1 - gf_comm_rank(x->comm);
    char why[256];
    for (int i = 0; i < iters; i++) {
      gf_comm_message send = {peer, 9, x->src, bytes}, recv = {peer, 9, x->host, bytes};
      if (gf_comm_post(x->comm, x->batch, &recv, 1, &send, 1, why, sizeof why) != GF_OK ||
          gf_comm_wait(x->comm, x->batch, why, sizeof why) != GF_OK)
        die(x->comm, "MPI exchange", why);
    }
  }
  return (now_s() - t0) / iters;
}

/* Seconds per iteration of the plain way to the channel's handshake (GPU):
 * each iteration a peer copy, its stream synchronised and the two ranks met
 * (an MPI barrier), so that each knows the other's bytes have landed, as a
 * wait on the channel does. Issued one by one, graph or not: a capture holds
 * no host wait. */
static double run_peer_met(bench *x, size_t bytes, int iters) {
  double t0 = 0;
#ifdef GFLOW_WITH_GPU
  hipStream_t stream = NULL;
  hipError_t err = peer_stream(&stream);
  gf_comm_barrier(x->comm);
  t0 = now_s();
  for (int i = 0; i < iters && err == hipSuccess; i++) {
    err = hipMemcpyPeerAsync(x->remote, x->peer_device, x->src, x->device, bytes, stream);
    if (err == hipSuccess) err = hipStreamSynchronize(stream);
    gf_comm_barrier(x->comm);
  }
  if (err != hipSuccess) die(x->comm, "hipMemcpyPeerAsync", hipGetErrorString(err));
#else
  (void)x, (void)bytes;
#endif
  return (now_s() - t0) / iters;
}

/* Byte i of what `rank` sends. */
static unsigned char pattern(int rank, size_t i) {
  return (unsigned char)(i * 7 + (size_t)rank * 131 + i / 251);
}

/* The packets' bytes, as the last iteration took them: the other rank's. */
static void check_packets(bench *x, size_t bytes) {
  gf_backend *b = x->b;
  unsigned char *got = malloc(bytes);
  if (!got) die(x->comm, "checking the packets", "out of memory");
  if (b->ops->copy_async(b, x->s, got, x->dst, bytes, (gf_tag){-1, -1, -1}) != GF_OK ||
      b->ops->stream_synchronize(b, x->s) != GF_OK)
    die(x->comm, "checking the packets", b->error);
  int peer = 1 - gf_comm_rank(x->comm);
  for (size_t i = 0; i < bytes; i++)
    if (got[i] != pattern(peer, i)) {
      char why[160];
      snprintf(why, sizeof why, "byte %zu of %zu is %u, the other rank sent %u", i, bytes, got[i],
               pattern(peer, i));
      die(x->comm, "the packets taken", why);
    }
  free(got);
}

static double run_variant(bench *x, int variant, size_t bytes, int iters, int graph) {
  if (variant == PEER_MET) return x->gpu ? run_peer_met(x, bytes, iters) : NAN;
  if (variant == PACKETS && bytes > PACKET_MAX) return NAN;
  return variant == PEER_COPY ? run_baseline(x, bytes, iters, graph)
                              : run_channel(x, variant, bytes, iters, graph);
}

int main(int argc, char **argv) {
  gf_diag diag;
  gf_diag_init(&diag, "channel_bench", NULL);
  gf_comm *comm = NULL;
  if (gf_comm_create(&argc, &argv, &diag, &comm) != GF_OK) return 70;
  const char *backend = "gpu";
  int gpus = 1, repeat = 5, graph = 0;
  double scale = 1;
  for (int i = 1; i < argc; i += 2) {
    if (!strcmp(argv[i], "--graph")) {
      graph = 1, i--;
      continue;
    }
    if (i + 1 == argc) die(comm, "an option without its value", argv[i]);
    if (!strcmp(argv[i], "--backend"))
      backend = argv[i + 1];
    else if (!strcmp(argv[i], "--gpus"))
      gpus = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--repeat"))
      repeat = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--scale"))
      scale = atof(argv[i + 1]);
    else
      die(comm, "unknown option", argv[i]);
  }
  if (gf_comm_size(comm) != 2)
    die(comm, "usage", "run it as two ranks: mpirun -np 2 channel_bench");
  if (gpus < 1 || repeat < 1 || scale <= 0) die(comm, "usage", "--gpus >= 1, --repeat >= 1");
  int rank = gf_comm_rank(comm);
  bench x = {.comm = comm};
  x.gpu = strcmp(backend, "cpu") != 0;
  x.device = rank % gpus;
  x.peer_device = (1 - rank) % gpus;
  gf_backend_options options = {.device = x.device};
  char why[256] = "";
  gf_status st = x.gpu ? gf_backend_gpu_create(&options, &x.b, why, sizeof why)
                       : gf_backend_cpu_create(&options, &x.b);
  if (st != GF_OK) die(comm, "no backend", why);
  if (graph && (!x.gpu || !x.b->graphs))
    die(comm, "--graph", "graphs need the GPU backend, built with them");
  if (gf_comm_batch_create(2, &x.batch) != GF_OK) die(comm, "batch", "out of memory");
  /* The seed's three sizes, and two between where packets give way to the
   * put with signal (exchange.protocol auto's threshold). */
  enum { SIZES = 5 };
  const size_t sizes[SIZES] = {1024, 64 << 10, 256 << 10, 1 << 20, (size_t)128 << 20};
  const int iters[SIZES] = {2000, 1000, 1000, 500, 20};
  const size_t max = sizes[SIZES - 1];
  gf_backend *b = x.b;
  if (b->ops->stream_create(b, GF_STREAM_NORMAL, &x.s) != GF_OK ||
      b->ops->alloc(b, GF_SPACE_DEVICE, max, NULL, &x.src) != GF_OK ||
      b->ops->alloc(b, GF_SPACE_DEVICE, PACKET_MAX, NULL, &x.dst) != GF_OK)
    die(comm, "setting up", b->error);
  if (!(x.host = malloc(max))) die(comm, "setting up", "out of memory");
  for (size_t i = 0; i < max; i++) ((unsigned char *)x.host)[i] = pattern(rank, i);
  if (b->ops->copy_async(b, x.s, x.src, x.host, max, (gf_tag){-1, -1, -1}) != GF_OK ||
      b->ops->stream_synchronize(b, x.s) != GF_OK)
    die(comm, "setting up", b->error);
  /* The channel: each rank's inbox, handles swapped through MPI. */
  gf_channel_handle mine, theirs;
  if (gf_channel_create(b, max, PACKET_MAX, &x.ch, &mine) != GF_OK)
    die(comm, "registering", b->error);
  swap(comm, x.batch, &mine, &theirs, sizeof mine);
  if (gf_channel_connect(x.ch, &theirs) != GF_OK) die(comm, "opening the peer's inbox", b->error);
  /* The peer copy's target: another registered region, opened by the other rank. */
  if (x.gpu) {
    if (b->ops->channel_register(b, max, &x.mine, &x.mine_h) != GF_OK)
      die(comm, "registering", b->error);
    swap(comm, x.batch, &x.mine_h, &x.peer_h, sizeof x.mine_h);
    if (b->ops->channel_open(b, &x.peer_h, &x.remote) != GF_OK)
      die(comm, "opening the peer's region", b->error);
  }
  const char *base = x.gpu ? "hipMemcpyPeerAsync" : "MPI Isend/Irecv";
  if (rank == 0) {
    printf("%s\n2 ranks, %s, %s, best of %d; BW = bytes / (ms per iteration), GB/s\n",
           b->description,
           x.gpu ? (gpus == 1 ? "both on GPU 0 (IPC on one device)" : "one GPU each")
                 : "shared memory",
           graph ? "each loop captured into a graph and replayed" : "issued one by one", repeat);
    printf("%-10s", "bytes");
    for (int v = 0; v < VARIANTS; v++) printf(" %13s ms %8s", variant_names[v], "GB/s");
    printf(" %10s\n", "ratio");
  }
  for (int k = 0; k < SIZES; k++) {
    int n = (int)(iters[k] * scale) > 2 ? (int)(iters[k] * scale) : 2;
    double best[VARIANTS];
    for (int v = 0; v < VARIANTS; v++) {
      best[v] = 1e30;
      run_variant(&x, v, sizes[k], n / 10 + 1, graph); /* warm-up */
    }
    for (int r = 0; r < repeat; r++) {
      double t[VARIANTS];
      for (int v = 0; v < VARIANTS; v++) {
        t[v] = run_variant(&x, v, sizes[k], n, graph);
        if (v == PACKETS && sizes[k] <= PACKET_MAX) check_packets(&x, sizes[k]);
      }
      gf_comm_max(comm, t, VARIANTS); /* the slower rank's */
      for (int v = 0; v < VARIANTS; v++)
        if (t[v] < best[v]) best[v] = t[v];
    }
    if (rank == 0) {
      printf("%-10zu", sizes[k]);
      for (int v = 0; v < VARIANTS; v++)
        if (best[v] < 1e30)
          printf(" %16.4f %8.2f", best[v] * 1e3, (double)sizes[k] / best[v] / 1e9);
        else
          printf(" %16s %8s", "-", "-"); /* not on this backend */
      double channel = best[PACKETS] < best[ONE_KERNEL] ? best[PACKETS] : best[ONE_KERNEL];
      printf(" %10.3f\n", best[PEER_COPY] / channel);
    }
  }
  if (rank == 0)
    printf(
        "peer copy: %s back to back; copy, met: each a peer copy, its stream synchronised and "
        "an MPI barrier (GPU; issued one by one in both tables); ratio: the faster of one "
        "kernel and packets, its BW over the peer copy's\n",
        base);
  gf_comm_barrier(comm); /* no rank still writes into another's memory */
  if (x.remote) b->ops->channel_close(b, &x.peer_h, x.remote);
  if (x.mine) b->ops->channel_unregister(b, &x.mine_h, x.mine);
  gf_channel_free(x.ch);
  b->ops->free(b, GF_SPACE_DEVICE, x.src, NULL);
  b->ops->free(b, GF_SPACE_DEVICE, x.dst, NULL);
  free(x.host);
  b->ops->stream_destroy(b, x.s);
  b->ops->destroy(b);
  gf_comm_batch_free(x.batch);
  gf_comm_free(comm);
  return 0;
}
