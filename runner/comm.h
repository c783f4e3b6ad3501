/* comm.h - the processes of one run: MPI when gflow runs under a launcher,
 * one process otherwise.
 *
 * The only file that includes mpi.h is comm.c. Without MPI (gflow built
 * without it, or started without mpirun/srun) the same calls serve one
 * process: messages a process sends to itself (a periodic boundary along an
 * axis it does not share) are copied when they are waited for, collectives
 * return their input. Every MPI call is checked; a failure is reported with
 * MPI's own text and returns GF_INTERNAL.
 */
#ifndef GF_COMM_H
#define GF_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gflow.h"

typedef struct gf_comm gf_comm;

/* Starts MPI when the process was started by an MPI launcher (mpirun, or
 * srun with PMI/PMIx) and gflow has MPI; else a communicator of one. Refuses
 * (GF_USAGE, with the reason written to `diag`) a job that asked for several
 * tasks when MPI reports one rank (srun without --mpi=pmix), and an MPI
 * launch of a gflow built without MPI. */
gf_status gf_comm_create(int *argc, char ***argv, gf_diag *diag, gf_comm **out);
/* Finalizes MPI (after the run; nothing may follow but exit). */
void gf_comm_free(gf_comm *comm);

int gf_comm_rank(const gf_comm *comm);
int gf_comm_size(const gf_comm *comm);
/* Rank among the processes of this node, from MPI_COMM_TYPE_SHARED (the
 * order of world ranks), for the GPU a rank takes. 0 without MPI. */
int gf_comm_local_rank(const gf_comm *comm);
/* How many of the run's processes share this node (MPI_COMM_TYPE_SHARED):
 * the run's size when they all do, the condition of a channel (backend.h). */
int gf_comm_node_size(const gf_comm *comm);
/* 1 when MPI can send from and receive into GPU memory (checked at run time
 * with MPIX_Query_cuda_support where mpi-ext.h has it); 0 otherwise. */
int gf_comm_gpu_aware(const gf_comm *comm);
/* "MPI (Open MPI 4.1.4), 4 ranks" or "one process", for banners. */
const char *gf_comm_description(const gf_comm *comm);
/* The run's MPI communicator, a `const MPI_Comm *`, for a library that
 * takes one and duplicates it (parallel HDF5, output_hdf5.c); NULL without
 * MPI. */
const void *gf_comm_mpi_handle(const gf_comm *comm);

/* Ends every process of the job at once with `status` (MPI_Abort), after
 * this one has said why. Returns only without MPI. */
void gf_comm_abort(gf_comm *comm, int status);

/* ---- point to point: the ghost-cell exchange ---- */

typedef struct gf_comm_message {
  int peer;  /* rank */
  int tag;   /* matches a receive to its send */
  void *buf; /* host memory, or GPU memory when gf_comm_gpu_aware */
  size_t bytes;
} gf_comm_message;

/* Messages in flight, started by gf_comm_post and ended by gf_comm_wait. */
typedef struct gf_comm_batch gf_comm_batch;
gf_status gf_comm_batch_create(int capacity, gf_comm_batch **out);
void gf_comm_batch_free(gf_comm_batch *batch);

/* Posts the receives, then the sends (non-blocking); returns at once. */
gf_status gf_comm_post(gf_comm *comm, gf_comm_batch *batch, const gf_comm_message *recvs,
                       int nrecvs, const gf_comm_message *sends, int nsends, char *why,
                       size_t why_size);
/* Waits until every message of the batch has arrived and been sent. */
gf_status gf_comm_wait(gf_comm *comm, gf_comm_batch *batch, char *why, size_t why_size);

/* ---- agreement ---- */

/* The stop vote at fences: posts this rank's value (a signal number or a
 * status, 0: go on) as a non-blocking maximum over the ranks; the result
 * is read with gf_comm_vote_result, which waits for it. One vote at a time. */
gf_status gf_comm_vote_post(gf_comm *comm, int value);
gf_status gf_comm_vote_result(gf_comm *comm, int *max_value, int *from_rank);
/* 1 while a vote is posted and not yet read. */
int gf_comm_vote_pending(const gf_comm *comm);

/* Blocking: the minimum of `value` over the ranks (1 when every rank says 1). */
int gf_comm_all(gf_comm *comm, int value);
/* Element-wise maximum of `n` doubles over the ranks, in place. */
void gf_comm_max(gf_comm *comm, double *values, int n);
/* Rank 0's `n` doubles from every rank, into `all` (size * n; rank 0 only,
 * may be NULL elsewhere). */
void gf_comm_gather(gf_comm *comm, const double *values, int n, double *all);
/* Every rank's `text` joined with `separator`, in rank order, on rank 0
 * (the caller frees it); NULL on the other ranks and when out of memory. */
char *gf_comm_gather_text(gf_comm *comm, const char *text, const char *separator);
/* Rank 0's value to every rank. */
int64_t gf_comm_broadcast(gf_comm *comm, int64_t value);
void gf_comm_barrier(gf_comm *comm);

/* ---- a file every rank writes a block of (MPI-IO) ---- */

typedef struct gf_comm_file gf_comm_file;

/* The geometry of one rank's part of a stack of planes: a plane is
 * `global` cells (C order), this rank holds a local array of `local` cells
 * of which the box [lo, hi) (local indices) is its part, at `origin` in the
 * plane. Trailing dimensions are 1. */
typedef struct gf_comm_block {
  int ndim;
  gf_dtype dtype;
  int64_t global[GF_MAX_DIMS], local[GF_MAX_DIMS];
  int64_t lo[GF_MAX_DIMS], hi[GF_MAX_DIMS];
  int64_t origin[GF_MAX_DIMS];
} gf_comm_block;

/* Collective: every rank opens `path` (created) to write its block of each
 * plane. */
gf_status gf_comm_file_open(gf_comm *comm, const char *path, const gf_comm_block *block,
                            gf_comm_file **out, char *why, size_t why_size);
/* Independent: writes this rank's block of plane `plane` from its local
 * array `data`. Any thread may call it (one at a time per file). */
gf_status gf_comm_file_write(gf_comm_file *file, int64_t plane, const void *data, char *why,
                             size_t why_size);
/* Collective: sizes the file to `bytes`, makes it durable, closes it. */
gf_status gf_comm_file_close(gf_comm_file *file, int64_t bytes, char *why, size_t why_size);
/* Closes without sizing (a failed run; rank 0 then removes the file). */
void gf_comm_file_abandon(gf_comm_file *file);

#endif
