/* comm.c - MPI, or one process. */
#include "comm.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GFLOW_WITH_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

/* Started by a launcher that wires processes together: Open MPI's mpirun,
 * or a PMI/PMIx server (srun --mpi=pmix, MPICH's hydra). */
static int launched_by_mpi(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK") ||
         getenv("PMI_SIZE");
}

static int env_int(const char *name) {
  const char *v = getenv(name);
  return v ? atoi(v) : 0;
}

/* A job step Slurm started with several tasks that MPI does not see as one
 * job: each would run the whole problem and write the same folder. */
static gf_status refuse_lone_task(int size, gf_diag *diag) {
  int tasks = env_int("SLURM_STEP_NUM_TASKS");
  if (tasks <= 1 || size > 1) return GF_OK;
  return gf_diag_error(diag, GF_USAGE,
                       "Slurm started %d tasks for this step, but MPI sees one rank: every task "
                       "would run the whole problem. Start gflow with `srun --mpi=pmix` (or "
                       "mpirun) and a gflow built with MPI",
                       tasks);
}

typedef struct self_message {
  gf_comm_message m;
  int is_send;
} self_message;

struct gf_comm_batch {
  int capacity, count;
#ifdef GFLOW_WITH_MPI
  MPI_Request *requests;
#endif
  self_message *self; /* without MPI: messages to oneself, matched at the wait */
  int nself;
};

struct gf_comm {
  int rank, size, local_rank, node_size, gpu_aware;
  int mpi; /* 1: MPI was initialised here */
  char description[320];
  int vote_pending;
#ifdef GFLOW_WITH_MPI
  MPI_Comm world, vote_comm; /* the vote has a communicator of its own */
  MPI_Request vote_request;
  int vote_in[2], vote_out[2]; /* {value, rank} for MPI_MAXLOC */
#endif
  int vote_value;
};

#ifdef GFLOW_WITH_MPI
/* MPI's own words for an error code. */
static void mpi_error(int code, const char *call, char *why, size_t why_size) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "code %d", code);
  snprintf(why, why_size, "%s: %s", call, text);
}
#endif

gf_status gf_comm_create(int *argc, char ***argv, gf_diag *diag, gf_comm **out) {
  *out = NULL;
  gf_comm *comm = gf_calloc(1, sizeof *comm);
  if (!comm) return gf_oom(diag, "starting MPI");
  comm->size = 1;
  comm->node_size = 1;
  snprintf(comm->description, sizeof comm->description, "one process");
#ifdef GFLOW_WITH_MPI
  if (launched_by_mpi()) {
    int provided = 0;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) {
      free(comm);
      return gf_diag_error(diag, GF_INTERNAL, "MPI_Init_thread failed (error %d)", rc);
    }
    comm->mpi = 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm->world);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm->vote_comm);
    MPI_Comm_rank(comm->world, &comm->rank);
    MPI_Comm_size(comm->world, &comm->size);
    MPI_Comm node;
    MPI_Comm_split_type(comm->world, MPI_COMM_TYPE_SHARED, comm->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &comm->local_rank);
    MPI_Comm_size(node, &comm->node_size);
    MPI_Comm_free(&node);
#if defined(GFLOW_HIP_ON_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    comm->gpu_aware = MPIX_Query_cuda_support();
#elif defined(__HIP_PLATFORM_AMD__) && defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
    comm->gpu_aware = MPIX_Query_rocm_support();
#endif
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(library, &len);
    char *nl = strchr(library, ',');
    if (nl) *nl = '\0';
    snprintf(comm->description, sizeof comm->description, "%.200s, %d rank%s%s", library,
             comm->size, comm->size == 1 ? "" : "s", comm->gpu_aware ? ", GPU-aware" : "");
    *out = comm;
    if (provided < MPI_THREAD_MULTIPLE && comm->size > 1)
      return gf_diag_error(diag, GF_INTERNAL,
                           "this MPI library gives thread level %d, gflow needs "
                           "MPI_THREAD_MULTIPLE (its writer thread writes while the loop "
                           "exchanges ghost cells)",
                           provided);
    return refuse_lone_task(comm->size, diag);
  }
#else
  (void)argc, (void)argv;
  int ranks = env_int("OMPI_COMM_WORLD_SIZE");
  if (ranks < 1) ranks = env_int("PMI_SIZE");
  if (launched_by_mpi() && ranks > 1) {
    free(comm);
    return gf_diag_error(diag, GF_USAGE,
                         "started as one of %d MPI ranks, but this gflow was built without MPI "
                         "(install libopenmpi-dev and rebuild: scripts/setup.sh)",
                         ranks);
  }
#endif
  *out = comm;
  return refuse_lone_task(1, diag);
}

void gf_comm_free(gf_comm *comm) {
  if (!comm) return;
#ifdef GFLOW_WITH_MPI
  if (comm->mpi) {
    if (comm->vote_pending) MPI_Wait(&comm->vote_request, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm->vote_comm);
    MPI_Comm_free(&comm->world);
    MPI_Finalize();
  }
#endif
  free(comm);
}

int gf_comm_rank(const gf_comm *comm) {
  return comm ? comm->rank : 0;
}
int gf_comm_size(const gf_comm *comm) {
  return comm ? comm->size : 1;
}
int gf_comm_local_rank(const gf_comm *comm) {
  return comm ? comm->local_rank : 0;
}
int gf_comm_node_size(const gf_comm *comm) {
  return comm ? comm->node_size : 1;
}
int gf_comm_gpu_aware(const gf_comm *comm) {
  return comm ? comm->gpu_aware : 0;
}
const char *gf_comm_description(const gf_comm *comm) {
  return comm ? comm->description : "one process";
}
const void *gf_comm_mpi_handle(const gf_comm *comm) {
#ifdef GFLOW_WITH_MPI
  if (comm && comm->mpi) return &comm->world;
#endif
  (void)comm;
  return NULL;
}

void gf_comm_abort(gf_comm *comm, int status) {
  fflush(stderr);
#ifdef GFLOW_WITH_MPI
  if (comm && comm->mpi && comm->size > 1) MPI_Abort(MPI_COMM_WORLD, status);
#else
  (void)comm, (void)status;
#endif
}

/* ---- point to point ---- */

gf_status gf_comm_batch_create(int capacity, gf_comm_batch **out) {
  gf_comm_batch *batch = gf_calloc(1, sizeof *batch);
  if (!batch) return GF_INTERNAL;
  batch->capacity = capacity;
  batch->self = gf_calloc((size_t)capacity + 1, sizeof *batch->self);
  int failed = !batch->self;
#ifdef GFLOW_WITH_MPI
  batch->requests = gf_calloc((size_t)capacity + 1, sizeof *batch->requests);
  failed |= !batch->requests;
#endif
  if (failed) {
    gf_comm_batch_free(batch);
    return GF_INTERNAL;
  }
  *out = batch;
  return GF_OK;
}

void gf_comm_batch_free(gf_comm_batch *batch) {
  if (!batch) return;
#ifdef GFLOW_WITH_MPI
  free(batch->requests);
#endif
  free(batch->self);
  free(batch);
}

gf_status gf_comm_post(gf_comm *comm, gf_comm_batch *batch, const gf_comm_message *recvs,
                       int nrecvs, const gf_comm_message *sends, int nsends, char *why,
                       size_t why_size) {
  if (nrecvs + nsends > batch->capacity) {
    snprintf(why, why_size, "internal: %d messages in a batch of %d", nrecvs + nsends,
             batch->capacity);
    return GF_INTERNAL;
  }
  batch->count = 0;
  batch->nself = 0;
#ifdef GFLOW_WITH_MPI
  if (comm->mpi) {
    for (int i = 0; i < nrecvs + nsends; i++) {
      const gf_comm_message *m = i < nrecvs ? &recvs[i] : &sends[i - nrecvs];
      if (m->bytes > (size_t)INT32_MAX) {
        snprintf(why, why_size, "a ghost-cell message of %zu bytes is more than MPI's 2^31 - 1",
                 m->bytes);
        return GF_INTERNAL;
      }
      int rc = i < nrecvs ? MPI_Irecv(m->buf, (int)m->bytes, MPI_BYTE, m->peer, m->tag, comm->world,
                                      &batch->requests[batch->count])
                          : MPI_Isend(m->buf, (int)m->bytes, MPI_BYTE, m->peer, m->tag, comm->world,
                                      &batch->requests[batch->count]);
      if (rc != MPI_SUCCESS) {
        mpi_error(rc, i < nrecvs ? "MPI_Irecv" : "MPI_Isend", why, why_size);
        return GF_INTERNAL;
      }
      batch->count++;
    }
    return GF_OK;
  }
#endif
  (void)comm;
  for (int i = 0; i < nrecvs + nsends; i++) {
    const gf_comm_message *m = i < nrecvs ? &recvs[i] : &sends[i - nrecvs];
    batch->self[batch->nself++] = (self_message){*m, i >= nrecvs};
  }
  return GF_OK;
}

gf_status gf_comm_wait(gf_comm *comm, gf_comm_batch *batch, char *why, size_t why_size) {
#ifdef GFLOW_WITH_MPI
  if (comm->mpi) {
    /* A message of more than the eager size moves in steps (a handshake,
     * then fragments), each made only inside an MPI call: so test without
     * pause, yielding the core between tests (to another rank where ranks
     * share cores), for 2 ms; only then nap 20 us between tests, a rank
     * waiting for a neighbour far behind. A nap in a handshake costs the
     * timer's slack (50 us or more) per step. */
    int rc = MPI_SUCCESS, done = 0;
    struct timespec start, now, nap = {0, 20000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (rc == MPI_SUCCESS && !done) {
      rc = MPI_Testall(batch->count, batch->requests, &done, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS || done) break;
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) > 2000000)
        nanosleep(&nap, NULL);
      else
        sched_yield();
    }
    batch->count = 0;
    if (rc != MPI_SUCCESS) {
      mpi_error(rc, "MPI_Waitall", why, why_size);
      return GF_INTERNAL;
    }
    return GF_OK;
  }
#endif
  (void)comm;
  /* One process: each receive is the send to itself with the same tag. */
  for (int r = 0; r < batch->nself; r++) {
    const self_message *recv = &batch->self[r];
    if (recv->is_send) continue;
    int found = 0;
    for (int s = 0; s < batch->nself && !found; s++) {
      const self_message *send = &batch->self[s];
      if (!send->is_send || send->m.tag != recv->m.tag) continue;
      if (send->m.bytes != recv->m.bytes) break;
      memcpy(recv->m.buf, send->m.buf, recv->m.bytes);
      found = 1;
    }
    if (!found) {
      snprintf(why, why_size, "internal: a message (tag %d) to this process has no matching send",
               recv->m.tag);
      return GF_INTERNAL;
    }
  }
  batch->nself = 0;
  return GF_OK;
}

/* ---- agreement ---- */

gf_status gf_comm_vote_post(gf_comm *comm, int value) {
  comm->vote_pending = 1;
  comm->vote_value = value;
#ifdef GFLOW_WITH_MPI
  if (comm->mpi) {
    comm->vote_in[0] = value;
    comm->vote_in[1] = comm->rank;
    if (MPI_Iallreduce(comm->vote_in, comm->vote_out, 1, MPI_2INT, MPI_MAXLOC, comm->vote_comm,
                       &comm->vote_request) != MPI_SUCCESS)
      return GF_INTERNAL;
  }
#endif
  return GF_OK;
}

gf_status gf_comm_vote_result(gf_comm *comm, int *max_value, int *from_rank) {
  *max_value = comm->vote_value;
  *from_rank = comm->rank;
  if (!comm->vote_pending) return GF_OK;
  comm->vote_pending = 0;
#ifdef GFLOW_WITH_MPI
  if (comm->mpi) {
    if (MPI_Wait(&comm->vote_request, MPI_STATUS_IGNORE) != MPI_SUCCESS) return GF_INTERNAL;
    *max_value = comm->vote_out[0];
    *from_rank = comm->vote_out[1];
  }
#endif
  return GF_OK;
}

int gf_comm_vote_pending(const gf_comm *comm) {
  return comm->vote_pending;
}

int gf_comm_all(gf_comm *comm, int value) {
#ifdef GFLOW_WITH_MPI
  if (comm && comm->mpi) {
    int all = value;
    MPI_Allreduce(&value, &all, 1, MPI_INT, MPI_MIN, comm->world);
    return all;
  }
#endif
  (void)comm;
  return value;
}

void gf_comm_max(gf_comm *comm, double *values, int n) {
#ifdef GFLOW_WITH_MPI
  if (comm && comm->mpi) MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_MAX, comm->world);
#else
  (void)comm, (void)values, (void)n;
#endif
}

void gf_comm_gather(gf_comm *comm, const double *values, int n, double *all) {
#ifdef GFLOW_WITH_MPI
  if (comm && comm->mpi) {
    MPI_Gather(values, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, comm->world);
    return;
  }
#endif
  (void)comm;
  if (all) memcpy(all, values, (size_t)n * sizeof *values);
}

char *gf_comm_gather_text(gf_comm *comm, const char *text, const char *separator) {
#ifdef GFLOW_WITH_MPI
  if (comm && comm->mpi && comm->size > 1) {
    int len = (int)strlen(text), *lens = NULL, *at = NULL;
    char *all = NULL;
    if (comm->rank == 0) {
      lens = gf_calloc((size_t)comm->size, sizeof *lens);
      at = gf_calloc((size_t)comm->size, sizeof *at);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm->world);
    size_t total = 0, sep = strlen(separator);
    for (int r = 0; lens && r < comm->size; r++) total += (size_t)lens[r] + sep;
    if (comm->rank == 0 && lens && at) all = gf_malloc(total + 1);
    char *packed = all ? gf_malloc(total + 1) : NULL;
    for (int r = 0, off = 0; packed && r < comm->size; off += lens[r], r++) at[r] = off;
    if (comm->rank == 0 && !packed) { /* the others are sending: no way back */
      fputs("gflow: out of memory: gathering the ranks' traces\n", stderr);
      gf_comm_abort(comm, GF_INTERNAL);
    }
    MPI_Gatherv(text, len, MPI_CHAR, packed, lens, at, MPI_CHAR, 0, comm->world);
    if (all && packed) {
      size_t n = 0;
      for (int r = 0; r < comm->size; r++) {
        if (r) memcpy(all + n, separator, sep), n += sep;
        memcpy(all + n, packed + at[r], (size_t)lens[r]);
        n += (size_t)lens[r];
      }
      all[n] = '\0';
    } else {
      free(all);
      all = NULL;
    }
    free(packed);
    free(lens);
    free(at);
    return all;
  }
#endif
  (void)comm, (void)separator;
  return gf_strdup(text);
}

int64_t gf_comm_broadcast(gf_comm *comm, int64_t value) {
#ifdef GFLOW_WITH_MPI
  if (comm && comm->mpi) MPI_Bcast(&value, 1, MPI_INT64_T, 0, comm->world);
#else
  (void)comm;
#endif
  return value;
}

void gf_comm_barrier(gf_comm *comm) {
#ifdef GFLOW_WITH_MPI
  if (comm && comm->mpi) MPI_Barrier(comm->world);
#else
  (void)comm;
#endif
}

/* ---- MPI-IO ---- */

struct gf_comm_file {
#ifdef GFLOW_WITH_MPI
  MPI_File fh;
  MPI_Datatype memtype, filetype;
#endif
  int64_t block_elems; /* cells of this rank's block of one plane */
};

gf_status gf_comm_file_open(gf_comm *comm, const char *path, const gf_comm_block *block,
                            gf_comm_file **out, char *why, size_t why_size) {
  *out = NULL;
#ifdef GFLOW_WITH_MPI
  gf_comm_file *f = gf_calloc(1, sizeof *f);
  if (!f) {
    snprintf(why, why_size, "out of memory");
    return GF_INTERNAL;
  }
  int global[GF_MAX_DIMS], local[GF_MAX_DIMS], sizes[GF_MAX_DIMS], lstart[GF_MAX_DIMS],
      gstart[GF_MAX_DIMS];
  f->block_elems = 1;
  for (int d = 0; d < block->ndim; d++) {
    global[d] = (int)block->global[d];
    local[d] = (int)block->local[d];
    sizes[d] = (int)(block->hi[d] - block->lo[d]);
    lstart[d] = (int)block->lo[d];
    gstart[d] = (int)(block->origin[d] + block->lo[d]);
    f->block_elems *= sizes[d];
  }
  MPI_Datatype etype = block->dtype == GF_F64 ? MPI_DOUBLE : MPI_FLOAT;
  MPI_Type_create_subarray(block->ndim, local, sizes, lstart, MPI_ORDER_C, etype, &f->memtype);
  MPI_Type_create_subarray(block->ndim, global, sizes, gstart, MPI_ORDER_C, etype, &f->filetype);
  MPI_Type_commit(&f->memtype);
  MPI_Type_commit(&f->filetype);
  int rc =
      MPI_File_open(comm->world, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &f->fh);
  if (rc == MPI_SUCCESS)
    rc = MPI_File_set_view(f->fh, 0, etype, f->filetype, "native", MPI_INFO_NULL);
  if (rc != MPI_SUCCESS) {
    mpi_error(rc, "MPI_File_open", why, why_size);
    MPI_Type_free(&f->memtype);
    MPI_Type_free(&f->filetype);
    free(f);
    return GF_CANTCREATE;
  }
  *out = f;
  return GF_OK;
#else
  (void)comm, (void)path, (void)block;
  snprintf(why, why_size, "gflow was built without MPI");
  return GF_INTERNAL;
#endif
}

gf_status gf_comm_file_write(gf_comm_file *f, int64_t plane, const void *data, char *why,
                             size_t why_size) {
#ifdef GFLOW_WITH_MPI
  int rc = MPI_File_write_at(f->fh, (MPI_Offset)(plane * f->block_elems), data, 1, f->memtype,
                             MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    mpi_error(rc, "MPI_File_write_at", why, why_size);
    return GF_IOERR;
  }
  return GF_OK;
#else
  (void)f, (void)plane, (void)data;
  snprintf(why, why_size, "gflow was built without MPI");
  return GF_INTERNAL;
#endif
}

static void file_free(gf_comm_file *f) {
#ifdef GFLOW_WITH_MPI
  MPI_Type_free(&f->memtype);
  MPI_Type_free(&f->filetype);
#endif
  free(f);
}

gf_status gf_comm_file_close(gf_comm_file *f, int64_t bytes, char *why, size_t why_size) {
  gf_status st = GF_OK;
#ifdef GFLOW_WITH_MPI
  int rc = MPI_File_set_size(f->fh, (MPI_Offset)bytes);
  if (rc != MPI_SUCCESS) mpi_error(rc, "MPI_File_set_size", why, why_size);
  int rc2 = MPI_File_sync(f->fh);
  if (rc == MPI_SUCCESS && rc2 != MPI_SUCCESS) mpi_error(rc = rc2, "MPI_File_sync", why, why_size);
  rc2 = MPI_File_close(&f->fh);
  if (rc == MPI_SUCCESS && rc2 != MPI_SUCCESS) mpi_error(rc = rc2, "MPI_File_close", why, why_size);
  if (rc != MPI_SUCCESS) st = GF_IOERR;
#else
  (void)bytes, (void)why, (void)why_size;
#endif
  file_free(f);
  return st;
}

void gf_comm_file_abandon(gf_comm_file *f) {
  if (!f) return;
#ifdef GFLOW_WITH_MPI
  MPI_File_close(&f->fh);
#endif
  file_free(f);
}
