/* error.h - status codes and the one way gflow reports a problem.
 *
 * Every function that can fail returns a gf_status. The values are the exit
 * codes the `gflow` command ends with (sysexits.h; 76 for a failed numerical
 * check; 128 + the signal for a run stopped by SIGINT or SIGTERM, as a shell
 * reports it), generated from one table so the enum, the names and the
 * meanings cannot drift.
 *
 * A message about the workflow goes through gf_diag_at(), which prints
 *   gflow: FILE:LINE:COL: message
 *     the offending source line
 *     ^ under the column
 * A line longer than GF_DIAG_QUOTE_COLUMNS is quoted as that many columns
 * around the caret, with `...` where it was cut.
 * Everything else goes through gf_diag_error(): `gflow: message`.
 *
 * A gf_diag may be shared by threads (the output writer reports through the
 * run's diag): each message is formatted, counted and written under the
 * diag's lock, so `count`, `last` and the output lines never mix two
 * messages. Read `count` and `last` directly only when no other thread can
 * report (tests, after joining).
 */
#ifndef GF_ERROR_H
#define GF_ERROR_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define GF_STATUS_MAP(X)                             \
  X(OK, 0, "success")                                \
  X(USAGE, 64, "command line usage error")           \
  X(INVALID, 65, "invalid workflow")                 \
  X(NOINPUT, 66, "input file missing or unreadable") \
  X(INTERNAL, 70, "internal or device failure")      \
  X(CANTCREATE, 73, "cannot create output")          \
  X(IOERR, 74, "output write failed")                \
  X(CHECKPOINTED, 75, "checkpointed, then stopped")  \
  X(DIVERGED, 76, "numerical check failed")          \
  X(INTERRUPTED, 130, "interrupted by SIGINT")       \
  X(TERMINATED, 143, "terminated by SIGTERM")

typedef enum gf_status {
#define GF_STATUS_ENUM(name, code, text) GF_##name = code,
  GF_STATUS_MAP(GF_STATUS_ENUM)
#undef GF_STATUS_ENUM
} gf_status;

const char *gf_status_name(gf_status status); /* "INVALID" */
const char *gf_status_text(gf_status status); /* "invalid workflow" */

#define GF_DIAG_QUOTE_COLUMNS 100 /* of a source line quoted under a message */

/* A position in a source text, 1-based. line == 0: no position known.
 * `source` says which text: 0 the diag's own, k > 0 its k-th extra source
 * (the k-th `--set` of a workflow; see gf_diag_set_sources). */
typedef struct gf_loc {
  int line;
  int col;
  int source;
} gf_loc;

/* A text besides the diag's own that locations may point into. */
typedef struct gf_diag_source {
  const char *origin; /* e.g. `--set grid.shape=[8,8]` */
  const char *text;   /* e.g. `grid.shape=[8,8]` */
} gf_diag_source;

/* Where messages about one source text go. `origin` names the text (a file
 * path, or `--set grid.shape=[8,8]`); `text` is its content, kept so the
 * offending line can be quoted. Messages are written to `out` (stderr unless a
 * test redirects it) and the last one is kept in `last` for tests. A diag
 * lives where gf_diag_init set it up: never copy one by value (its lock). */
typedef struct gf_diag {
  const char *origin;
  const char *text;
  const gf_diag_source *sources; /* what a gf_loc's `source` k > 0 names: sources[k - 1] */
  int nsources;
  FILE *out;
  char last[1024];
  int count;
  pthread_mutex_t lock; /* held while one message is recorded and written */
} gf_diag;

/* Sets every field, the lock included (a diag needs no clean-up). Calling it
 * again resets the diag; no thread may be reporting through it then. */
void gf_diag_init(gf_diag *diag, const char *origin, const char *text);
/* Lets locations name `sources` too (the caller keeps them alive). */
void gf_diag_set_sources(gf_diag *diag, const gf_diag_source *sources, int count);
/* Under MPI (ranks > 1) every message starts `rank R: `; call once, first. */
void gf_diag_set_rank(int rank, int ranks);

/* `gflow: ORIGIN:LINE:COL: message`, the source line and a caret. Returns
 * `status` so callers can write `return gf_diag_at(d, loc, GF_INVALID, ...)`. */
gf_status gf_diag_at(gf_diag *diag, gf_loc loc, gf_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* `gflow: message` (no location). Returns `status`. */
gf_status gf_diag_error(gf_diag *diag, gf_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

gf_status gf_diag_verror(gf_diag *diag, gf_loc loc, gf_status status, const char *fmt, va_list ap);

/* Allocation that reports failure instead of ending the process: NULL from
 * the pointer functions, GF_INTERNAL from gf_grow, and no message. The caller
 * unwinds and reports once, through gf_oom(), where it knows what it was
 * doing; the gflow command then exits 70. A zero size allocates one byte, so
 * NULL always means failure. In a build with GFLOW_ALLOC_FAULTS (the test
 * build) the environment variable GFLOW_FAIL_ALLOC=N makes the N-th of these
 * allocations in the process fail, and the test says so on stderr. */
void *gf_malloc(size_t size);
void *gf_calloc(size_t count, size_t size);
void *gf_realloc(void *ptr, size_t size);
char *gf_strdup(const char *s);
char *gf_strndup(const char *s, size_t n);
/* printf into a fresh heap string, or NULL. */
char *gf_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Makes room for `need` elements of `size` bytes in *array, whose capacity
 * *cap it doubles (from 8); *array is kept when this fails. */
gf_status gf_grow(void **array, int *cap, int need, size_t size);
/* gf_grow for a typed array: GF_GROW(plan->ops, plan->ops_cap, plan->nops + 1). */
#define GF_GROW(array, cap, need) gf_grow((void **)&(array), &(cap), (need), sizeof *(array))

/* `gflow: out of memory: <what>`; returns GF_INTERNAL. */
gf_status gf_oom(gf_diag *diag, const char *what);

/* A byte count for people: "256.0 KiB", "1.5 TiB". Returns buf. */
const char *gf_format_bytes(double bytes, char *buf, size_t size);

#endif
