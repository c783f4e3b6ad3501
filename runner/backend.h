/* backend.h - the device layer: one table of operations per backend.
 *
 * The executor speaks only to this table (as Open MPI's accelerator framework
 * does). The CPU backend runs every stream as a worker thread with its own
 * in-order queue; the GPU backend maps each operation onto the HIP runtime.
 *
 * The contract, that of HIP streams and events. Every backend must keep each
 * rule; tests/backend_contract.h checks each one by the test named after it,
 * on the CPU backend (tests/test_backend_cpu.c) and on the GPU
 * (tests/gpu/test_backend_gpu.c):
 *  1. work on one stream runs in issue order, and stream_synchronize returns
 *     once all of it has run                          [contract_stream_order];
 *  2. event_record captures all work issued to the stream so far; the event
 *     completes when that work has, and event_synchronize waits for it
 *                                                [contract_event_synchronize];
 *  3. stream_wait_event makes later work on the stream wait for what the
 *     event captured at the time of the call; the event may be re-recorded
 *     or destroyed right after                  [contract_wait_orders_streams];
 *  4. re-recording an event does not move a wait already issued on it
 *                                           [contract_rerecord_keeps_wait];
 *  5. an unrecorded event is complete: waiting on it, on a stream or on the
 *     host, holds nothing up                   [contract_unrecorded_event];
 *  6. copy_async copies `bytes` between any two allocations of this backend,
 *     every space to every space, both ordinary and stream-ordered ones
 *                                                 [contract_copy_every_space];
 *  7. alloc/free with a stream are ordered on it: the block is usable by work
 *     issued to that stream at once, and a free on a stream happens only after
 *     the work issued to that stream before it  [contract_stream_ordered_free];
 *  8. synchronize waits for all work on all streams [contract_synchronize_all];
 *  9. every operation returns GF_OK or GF_INTERNAL; on failure (no memory, a
 *     space that does not exist, a kernel this backend cannot run) the backend
 *     has written the cause (API call, error name and text) into `error`,
 *     allocates nothing, and goes on working     [contract_failures_reported];
 * 10. with options.timing and a sink installed, every launch and copy the
 *     sink's `times` accepts (all when it is NULL) is reported to the sink
 *     exactly once, with its tag, kind and bytes and start <= end on
 *     CLOCK_MONOTONIC, one stream's operations in issue order without
 *     overlap, all by the time synchronize returns; the others, or all
 *     without either, are not                      [contract_sink_reports];
 * 11. scan_finite is ordered on its stream like any other work: it sees what
 *     was issued to the stream before it and is done before what follows; its
 *     result holds the first (lowest) index whose value fails, -1 when none,
 *     once an event recorded after it has completed    [contract_scan_finite];
 * 12. event_query answers at once, never waiting: 1 when the work the event
 *     captured has run (an unrecorded event: 1), else 0; once it has said 1
 *     it says 1 until the event is recorded again        [contract_event_query].
 * 13. (backends with channels: channel_register set) channel_register gives
 *     `bytes` of zero-filled memory that this backend's copies and kernels
 *     reach like any allocation, and a handle; channel_open of that handle,
 *     once, in this process or in another process on the same node, maps the
 *     same memory: bytes written through either mapping are read through the
 *     other once the writes are ordered before the reads (rule 14)
 *                                                  [contract_channel_memory];
 * 14. a channel's put, get, signal, put with signal and wait (gf_channel,
 *     below) are ordered on their stream like any other work: put writes
 *     the peer's region, get reads it; signal stores `value` into a slot of
 *     the peer's region once all work issued to its stream before it has
 *     completed (a put with signal: and its own bytes); wait holds the
 *     work issued to its stream after it until the slot of its own region
 *     holds at least `value`, and that work then sees everything the
 *     signalling stream did before the signal, its puts included
 *                                         [contract_channel_put_signal_wait];
 *     a take of packets holds the work after it until the peer's put of
 *     packets in turn with it (its k-th take, the peer's k-th put) has come,
 *     and that work sees the put's bytes in its destination, however the
 *     two ends' streams run             [contract_channel_packets].
 * 15. (backends with graphs: graph_capture_begin set) between
 *     graph_capture_begin and graph_capture_end on a stream, the operations
 *     issued to it, and to every stream that waited for an event recorded on
 *     a capturing stream since, are recorded and not run; graph_capture_end
 *     ends the capture on all of those streams and returns a graph of them,
 *     which graph_launch runs on the stream the capture began on, after the
 *     work issued to it before, as one operation that work issued after it
 *     on that stream waits for, with
 *     the same ordering between the recorded operations as if they had been
 *     issued then; a graph can be launched again and again; a capture that
 *     reuses a graph of the same operations (other arguments) updates it in
 *     place; a wait issued with graph_wait_external while capturing waits,
 *     at each launch, for the event as last recorded before that launch
 *                                                   [contract_graph_replay].
 * The caller adds to a failure which task, stream and step it was.
 */
#ifndef GF_BACKEND_H
#define GF_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gflow.h"
#include "space.h"

typedef struct gf_backend gf_backend;
typedef struct gf_stream gf_stream;
typedef struct gf_event gf_event;
typedef struct gf_graph gf_graph;

/* What an operation belongs to, for timing and for error messages. */
typedef struct gf_tag {
  int task;     /* index into the workflow's tasks, -1 for gflow's own work */
  int64_t step; /* the time step, -1 outside the loop */
  int stream;   /* the caller's index of the stream it runs on, -1 when none */
} gf_tag;

/* What a timed operation was. Backends time launches and copies; the
 * executor reports the host's own work of the loop to the same sink. */
enum {
  GF_TIMED_LAUNCH = 0,
  GF_TIMED_COPY = 1,
  GF_TIMED_HOST_WAIT = 2, /* the host waited for an event or a stream */
  GF_TIMED_HOST_CALL = 3, /* a host function of a task (a hook, handing a plane to the writer) */
  GF_TIMED_WRITE = 4,     /* the writer thread wrote a plane to its file (tag.stream: -2) */
  /* Counter samples, not operations: the value `bytes` from start_ns on. */
  GF_TIMED_MEMORY = 5,  /* bytes the run holds in space tag.stream (memory.c) */
  GF_TIMED_STAGING = 6, /* output staging buffers in use (output.c) */
};

/* One operation as it ran: start and end in nanoseconds on the host's
 * CLOCK_MONOTONIC timeline (the GPU backend converts its event times onto it,
 * see backend_gpu.c). `bytes` is a copy's size, else 0; a counter's value. */
typedef struct gf_op_timing {
  gf_tag tag;
  int kind; /* GF_TIMED_* */
  size_t bytes;
  int64_t start_ns, end_ns;
} gf_op_timing;

/* Where a backend reports the operations it timed (rule 10 above). `report`
 * may be called from several threads at once (the CPU backend calls it from
 * each stream's worker) and from inside any backend operation that waits,
 * so it must be thread-safe and must not call the backend. NULL: nobody
 * listens and nothing is timed. */
typedef struct gf_op_sink {
  void (*report)(void *user, const gf_op_timing *timing);
  void *user;
  /* The host-side records the listener wants too, bits 1u << GF_TIMED_*
   * (GF_TIMED_HOST_WAIT, _HOST_CALL, _WRITE: the executor's and the writer
   * thread's; the counters _MEMORY, _STAGING). 0: none, and the host times
   * and counts none of its own work. */
  unsigned host_kinds;
  /* Which launches and copies to time: asked on the issuing thread, inside
   * launch and copy_async, so it may read the caller's state; NULL: every
   * one. A listener that samples (the executor's --timing on a GPU, where a
   * timed operation costs two event records) leaves the others untimed. */
  int (*times)(void *user, gf_tag tag);
} gf_op_sink;

/* Whether a backend times the launch or copy `tag` for `sink`. */
static inline int gf_sink_times(const gf_op_sink *sink, gf_tag tag) {
  return sink->report && (!sink->times || sink->times(sink->user, tag));
}

/* Whether `sink` wants the host-side records of `kind`. */
static inline int gf_sink_wants(const gf_op_sink *sink, int kind) {
  return sink->report && (sink->host_kinds & (1u << kind));
}

/* Busy time of one task on the device: gf_task_timing_report sums the
 * launches and copies reported into an array of these indexed by tag.task
 * (gflow's own work, task -1, and the host's work are left out). */
typedef struct gf_task_timing {
  _Atomic int64_t busy_ns;
  _Atomic int64_t count;
} gf_task_timing;

void gf_task_timing_report(void *timings, const gf_op_timing *timing);

/* What scan_finite found. The backend writes it asynchronously: read it only
 * once the stream has passed the scan (an event recorded after it). */
typedef struct gf_scan_result {
  int64_t index; /* the first value refused, -1 when none */
  double value;  /* that value, converted to double */
} gf_scan_result;

/* What a peer needs to open a region of registered memory (rule 13): opaque
 * bytes, sent to the peer as they are (through MPI, comm.c). */
#define GF_CHANNEL_HANDLE_BYTES 192
/* A backend's own handle uses at most these first bytes (gf_channel puts the
 * sizes of the inbox and of the packet area before them in the handle it
 * gives the peer). */
#define GF_CHANNEL_BACKEND_HANDLE_BYTES (GF_CHANNEL_HANDLE_BYTES - 16)
typedef struct gf_channel_handle {
  _Alignas(8) unsigned char bytes[GF_CHANNEL_HANDLE_BYTES];
} gf_channel_handle;

/* A stream's priority: the blocks of an URGENT stream's kernels are started
 * ahead of those of NORMAL streams already waiting for room on the device
 * (a GPU's stream priority), so a short kernel (the ghost cells' pack and
 * unpack) need not wait for a long one issued before it to drain. The CPU
 * backend's streams are threads of equal standing. */
typedef enum gf_stream_priority { GF_STREAM_NORMAL, GF_STREAM_URGENT } gf_stream_priority;

typedef struct gf_backend_ops {
  gf_status (*stream_create)(gf_backend *b, gf_stream_priority priority, gf_stream **out);
  void (*stream_destroy)(gf_backend *b, gf_stream *s);
  gf_status (*stream_synchronize)(gf_backend *b, gf_stream *s);

  gf_status (*event_create)(gf_backend *b, gf_event **out);
  void (*event_destroy)(gf_backend *b, gf_event *e);
  gf_status (*event_record)(gf_backend *b, gf_event *e, gf_stream *s);
  gf_status (*stream_wait_event)(gf_backend *b, gf_stream *s, gf_event *e);
  gf_status (*event_synchronize)(gf_backend *b, gf_event *e);
  /* Without blocking: *done = 1 when the event has completed (rule 12). */
  gf_status (*event_query)(gf_backend *b, gf_event *e, int *done);

  /* With `stream` NULL an ordinary allocation, usable by every stream at once;
   * the caller frees it when no queued work uses it any more. With a stream,
   * ordered on it (rule 7): a GF_SPACE_POOL block comes from the stream-ordered
   * pool and is usable by other streams only after an event from that stream;
   * a free on a stream may be issued while earlier work on it still uses the
   * block. Either free may follow either alloc. */
  gf_status (*alloc)(gf_backend *b, gf_space space, size_t bytes, gf_stream *stream, void **out);
  void (*free)(gf_backend *b, gf_space space, void *ptr, gf_stream *stream);
  /* Bytes free in a space now (0 when unknown). */
  size_t (*bytes_free)(gf_backend *b, gf_space space);
  /* Managed memory, before the loop: advise the device as preferred location
   * (and read-mostly), and with `prefetch` move the pages there now. NULL on
   * backends where managed memory is plain host memory. */
  gf_status (*managed_prepare)(gf_backend *b, void *ptr, size_t bytes, int prefetch,
                               int read_mostly);

  gf_status (*copy_async)(gf_backend *b, gf_stream *s, void *dst, const void *src, size_t bytes,
                          gf_tag tag);
  /* `args` is copied before the call returns. */
  gf_status (*launch)(gf_backend *b, gf_stream *s, const gf_kernel *kernel, const void *args,
                      gf_tag tag);
  /* Optional (NULL: nothing to load). Makes the code that launch would run
   * for `args` resident, without running it, before the loop's clock: CUDA
   * loads a module at its first launch (CUDA_MODULE_LOADING=LAZY, its
   * default), which took 2.5 ms inside a 40 ms loop of the heat kernel on
   * an H100. The GPU backend captures one launch into a graph, instantiates
   * it and throws both away. Best effort: where it fails, the code loads at
   * the first launch as before, and that launch reports any error. */
  void (*load_kernel)(gf_backend *b, const gf_kernel *kernel, const void *args);

  /* The numerical guard's reduction, on the device: finds the first of the
   * `count` values at `data` that is not finite (with `finite`) or whose
   * magnitude exceeds `max_abs` (INFINITY: no bound), and writes it into
   * `result`, host memory from alloc(GF_SPACE_PINNED), when the stream gets
   * there. Only 16 bytes come back to the host, never the field. */
  gf_status (*scan_finite)(gf_backend *b, gf_stream *s, const void *data, int64_t count,
                           gf_dtype dtype, int finite, double max_abs, gf_scan_result *result);

  /* Waits for all work on all streams. */
  gf_status (*synchronize)(gf_backend *b);
  /* Optional (NULL: none). Names the tasks (tag.task indexes `names`) for an
   * external profiler: the GPU backend registers them once with NVTX (or
   * roctx) and wraps each launch and copy of a task in a range of its name.
   * Called before the loop; the backend keeps what it needs. */
  void (*name_tasks)(gf_backend *b, const char *const *names, int count);
  void (*destroy)(gf_backend *b);

  /* Optional (NULL: this backend has no channels). Registered memory (rule
   * 13), the ground of gf_channel: the CPU backend's is POSIX shared memory
   * (shm_open, mmap), the GPU backend's device memory exported with
   * hipIpcGetMemHandle and opened with hipIpcOpenMemHandle, or, within one
   * process, the pointer itself (peer access enabled when the GPUs differ).
   * A handle is opened at most once; close and unregister take it back. */
  gf_status (*channel_register)(gf_backend *b, size_t bytes, void **local,
                                gf_channel_handle *handle);
  gf_status (*channel_open)(gf_backend *b, const gf_channel_handle *handle, void **remote);
  void (*channel_close)(gf_backend *b, const gf_channel_handle *handle, void *remote);
  void (*channel_unregister)(gf_backend *b, const gf_channel_handle *handle, void *local);

  /* Optional (NULL: this backend has no graphs). Stream capture (rule 15),
   * the ground of the graph schedule: the GPU backend's is HIP's stream
   * capture into a graph instantiated once and updated in place
   * (hipGraphExecUpdate) when `reuse` has the same nodes; the CPU backend's
   * a recorded list of its queue entries, issued again at each launch.
   * graph_capture_end: *out is `reuse` when it was updated, else a new graph
   * (`reuse` untouched, still the caller's); on failure the capture is over
   * and *out NULL. Work captured must not be timed (options.timing off). */
  gf_status (*graph_capture_begin)(gf_backend *b, gf_stream *origin);
  gf_status (*graph_capture_end)(gf_backend *b, gf_stream *origin, gf_graph *reuse, gf_graph **out);
  gf_status (*graph_launch)(gf_backend *b, gf_graph *graph, gf_stream *s);
  /* While `s` captures: work issued to `s` after this waits, at each launch
   * of the graph, for the work event `e` captured when it was last recorded
   * outside any capture before that launch (HIP's external event wait). */
  gf_status (*graph_wait_external)(gf_backend *b, gf_stream *s, gf_event *e);
  void (*graph_destroy)(gf_backend *b, gf_graph *graph);
} gf_backend_ops;

struct gf_backend {
  const gf_backend_ops *ops;
  const char *name;                   /* "cpu", "gpu" */
  char description[256];              /* one line for the start-up banner */
  char error[512];                    /* cause of the last failure */
  gf_op_sink sink;                    /* set by the caller; report NULL: none */
  int can_run_kernels_on_host_memory; /* 1 on the CPU backend */
  int graphs; /* 1: graph_* may capture now (a GPU timing its operations cannot) */
};

typedef struct gf_backend_options {
  int device;      /* GPU index, -1: from SLURM_LOCALID or local_rank (modulo the GPUs), else 0 */
  int local_rank;  /* this process's rank among the node's MPI processes (comm.h), 0: none */
  int threads;     /* CPU: OpenMP threads per kernel, 0: all cores */
  int queue_depth; /* CPU: operations a stream queue holds before enqueue blocks, 0: 1024 */
  int timing;      /* 1: time each launch and copy for gf_backend.sink */
} gf_backend_options;

/* Creates the CPU backend. Always available. */
gf_status gf_backend_cpu_create(const gf_backend_options *options, gf_backend **out);
/* The cores this process may run on (its affinity mask's, under OpenMP). */
int gf_cpu_cores(void);
/* OpenMP threads per kernel on `cores` when neither --threads nor
 * OMP_NUM_THREADS says: a core less for each of the runner's threads that
 * work beside the kernels at most steps (`runner_threads`: the writer and the
 * copies of a loop that writes often), where at least 6 stay; 0, all cores,
 * otherwise. On 16 cores the seed workload (a plane written every step)
 * ran 2.3x faster on 14 threads than on 16, whose idle threads spin after
 * each 14 us kernel on the cores the writer and the copies need. */
int gf_cpu_kernel_threads(int cores, int runner_threads);

/* Creates the GPU backend; GF_INTERNAL with a reason in `why` when gflow was
 * built without GPU support or no device answers. */
gf_status gf_backend_gpu_create(const gf_backend_options *options, gf_backend **out, char *why,
                                size_t why_size);

/* ---- channels (runner/channel.c): MSCCL++'s MemoryChannel, seed 004 ----
 *
 * One end of a channel between two streams that may be in different
 * processes of one node: a region of registered memory of `bytes` (its
 * inbox, which the peer's puts write and gets read) and slots the peer's
 * signals write, plus the peer's region once connected. Put, get, signal and
 * wait are stream operations (rule 14): a put is a copy into the peer's
 * region, a signal a one-thread kernel that stores a slot's value after the
 * stream's earlier work, a wait a kernel that polls its own slot until the
 * value arrives. A put with signal is a put and a signal in one kernel whose
 * threads copy (on a GPU, stores over NVLink rather than the copy engines):
 * one launch instead of two, and the signal as soon as the bytes land; its
 * source must be memory the backend's kernels reach, and a slot's puts with
 * signal are issued on one stream. Slot values only grow: a sequence number
 * per use.
 *
 * Small messages go faster as packets (MSCCL++'s LL protocol): a put of
 * packets writes data and flag together into the peer's packet area, and
 * the peer's take of packets waits until every packet of its message has
 * come and copies the data out: one kernel each side, no fence, no signal,
 * no inbox copy. The area has two halves, used in turn, and a put may reuse
 * a half only once the peer has taken what it held: so each end issues its
 * puts and takes of packets on one stream, its k-th put after its (k-1)-th
 * take (put, take, put, ... or take, put, take, ...; an exchange is a put
 * and a take), as a symmetric exchange does; the peer's k-th take takes
 * this end's k-th put.
 *
 * The backend must have channel_register (GF_INTERNAL with the reason in
 * b->error otherwise). */
typedef struct gf_channel gf_channel;
#define GF_CHANNEL_SLOTS 8

/* Registers this end with an inbox of `bytes` and a packet area for
 * messages of up to `packet_bytes` (0: none); `handle` is what the peer
 * passes to connect. */
gf_status gf_channel_create(gf_backend *b, size_t bytes, size_t packet_bytes, gf_channel **out,
                            gf_channel_handle *handle);
/* Opens the peer's end from its handle; gf_channel_peer_bytes: the size of its region. */
gf_status gf_channel_connect(gf_channel *ch, const gf_channel_handle *peer);
/* This end's region: what the peer's puts wrote. */
void *gf_channel_inbox(const gf_channel *ch);
size_t gf_channel_peer_bytes(const gf_channel *ch);
gf_status gf_channel_put(gf_channel *ch, gf_stream *s, size_t offset, const void *src, size_t bytes,
                         gf_tag tag);
gf_status gf_channel_get(gf_channel *ch, gf_stream *s, void *dst, size_t offset, size_t bytes,
                         gf_tag tag);
gf_status gf_channel_signal(gf_channel *ch, gf_stream *s, int slot, uint64_t value, gf_tag tag);
gf_status gf_channel_put_signal(gf_channel *ch, gf_stream *s, size_t offset, const void *src,
                                size_t bytes, int slot, uint64_t value, gf_tag tag);
/* A symmetric exchange step (the seed's loop) in one kernel: a put with
 * signal, then a wait until this end's same slot holds `value` too. */
gf_status gf_channel_put_signal_wait(gf_channel *ch, gf_stream *s, size_t offset, const void *src,
                                     size_t bytes, int slot, uint64_t value, gf_tag tag);
gf_status gf_channel_wait(gf_channel *ch, gf_stream *s, int slot, uint64_t value, gf_tag tag);
/* Packets: `bytes` of `src` into the peer's area; `bytes` from one's own
 * area into `dst`, once they have come; both in one kernel, the put first
 * (the seed's bidirectional put of packets). Sizes may differ by side. */
gf_status gf_channel_put_packets(gf_channel *ch, gf_stream *s, const void *src, size_t bytes,
                                 gf_tag tag);
gf_status gf_channel_take_packets(gf_channel *ch, gf_stream *s, void *dst, size_t bytes,
                                  gf_tag tag);
gf_status gf_channel_exchange_packets(gf_channel *ch, gf_stream *s, const void *src,
                                      size_t put_bytes, void *dst, size_t take_bytes, gf_tag tag);
/* Closes the peer's region and unregisters this end's; no queued work may
 * still use either. */
void gf_channel_free(gf_channel *ch);

#endif
