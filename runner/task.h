/* task.h - what a kind of task is: one table of operations per kind.
 *
 * A task in the model is the part every kind shares (name, when, stream,
 * after, explicit events, the field regions it touches) plus a payload only
 * its kind reads. Each kind lives in one file, task_KIND.c, and fills one
 * gf_task_kind: the YAML it takes, how it loads that, how it is described in
 * messages, how it turns one planned instance into program operations, and
 * how it frees its payload. The loader, planner, program and executor call
 * through the table; none of them names a kind. tasks.c lists the kinds.
 *
 * Adding a kind: write task_NAME.c with its gf_task_kind, add one line to
 * gf_task_kinds in tasks.c and the file to the source list.
 */
#ifndef GF_TASK_H
#define GF_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "expr.h"
#include "gflow.h"

typedef struct gf_workflow gf_workflow;
typedef struct gf_loader gf_loader;
typedef struct gf_emitter gf_emitter;
typedef struct gf_task gf_task;

/* A field instance reference, `U[n+2]` or `V`. */
typedef struct gf_ref {
  int field;      /* index into fields */
  gf_expr *index; /* NULL: instance 0 */
  gf_loc loc;
} gf_ref;

/* A box of cells, [lo, hi) along each axis (trailing axes [0, 1)). */
typedef struct gf_region {
  int64_t lo[GF_MAX_DIMS], hi[GF_MAX_DIMS];
} gf_region;

/* One access of a task to a field: which instance, how, and which cells. */
typedef struct gf_access_decl {
  gf_ref ref;
  gf_access access; /* GF_ACCESS_READ, _WRITE or _READ_WRITE */
  gf_region region;
  const char *what; /* how messages name it: the kernel argument `U0`, the copy's `from` */
  int in_place;     /* 1: may be the same instance as another access of the task */
  int span;         /* > 1: the `span` instances whose indices end at the ref's (a batch
                       read from a ring, task_output.c); 0 or 1: the one instance */
} gf_access_decl;

#define GF_MAX_TASK_REFS 16 /* field accesses of one task */

/* A stream or event reference, `compute`, `io[n % 5]`, `done[(n + 2) % 5]`:
 * a group and the index of one of its members. */
typedef struct gf_stream_ref {
  int group;      /* -1: none */
  gf_expr *index; /* NULL: member 0 of the group */
  gf_loc loc;
} gf_stream_ref;

/* `after: [step@n-2]`: this task at step n follows `task` at step n - lag. */
typedef struct gf_dep {
  int task;
  int lag; /* >= 0; 0 only for a task listed earlier */
  gf_loc loc;
} gf_dep;

/* What a kind is, for the planner and the schedules. */
enum {
  GF_KIND_ON_HOST = 1,    /* runs on the host in issue order: no stream, touches no field */
  GF_KIND_MOVES_DATA = 2, /* a copy: `auto` puts it on an IO stream, `sync` waits for it */
  GF_KIND_HALO = 4,       /* keeps ghost cells current (task_halo.c): `auto` gives it a stream */
};

/* The YAML of one task as its kind's loader sees it. */
typedef struct gf_task_yaml {
  void *task_node; /* the task's mapping (a yaml_node_t *) */
  void *value;     /* the value of the kind's own key: `kernel: NAME` -> NAME */
  void *extra[4];  /* values of the kind's extra keys, in extra_keys order; NULL: absent */
} gf_task_yaml;

/* One planned instance of a task, as the program compiler hands it to the
 * kind: the task, its stream (-1: the host) and the ring instance of each
 * access, in task->access order. */
typedef struct gf_task_instance {
  int task;
  int stream;
  int inst[GF_MAX_TASK_REFS];
} gf_task_instance;

typedef struct gf_task_kind {
  const char *name;              /* its key in a task mapping, and its name in messages */
  const char *const *extra_keys; /* task keys only this kind takes (NULL-terminated, or NULL) */
  unsigned traits;               /* GF_KIND_* */
  /* Loads the payload into task->data and declares task->access. */
  gf_status (*load)(gf_loader *ld, gf_task *task, const gf_task_yaml *yaml);
  /* Checks the per-step value the kind adds (an output's plane) at step n
   * and returns it in *value; reports at the task and returns GF_INVALID
   * when it is out of range. NULL: none. */
  gf_status (*check_step)(const gf_workflow *wf, const gf_task *task, int64_t n, gf_diag *diag,
                          int64_t *value);
  /* What it works on, for `validate`: the kernel's name, the file, the hook. */
  const char *(*describe)(const gf_workflow *wf, const gf_task *task);
  /* Appends its operations for one instance to the program. */
  gf_status (*emit)(gf_emitter *e, const gf_workflow *wf, const gf_task *task,
                    const gf_task_instance *instance);
  void (*free)(void *data);
} gf_task_kind;

struct gf_task {
  char *name;
  const gf_task_kind *kind;
  void *data; /* the kind's payload */
  gf_loc loc;
  gf_expr *when;        /* NULL: every step */
  gf_stream_ref stream; /* group -1: not given (sync and auto do not need one) */
  gf_dep *after;
  int nafter;

  /* Explicit events (schedules streams and events): the task's stream waits
   * for `wait` before it runs, the host waits for `host_wait` before issuing
   * it, and `record` is recorded on its stream after it. group -1: none. */
  gf_stream_ref *wait;
  int nwait;
  gf_stream_ref *host_wait;
  int nhost_wait;
  gf_stream_ref record;

  gf_access_decl access[GF_MAX_TASK_REFS]; /* declared by the kind's loader */
  int naccess;

  /* 1: on the ghost cells' path (a split kernel's edges, decompose.c):
   * schedule auto issues it on the halo stream, ahead of the ghost cells
   * and beside the interior, which then waits for it alone. */
  int urgent;

  /* 1: its work is the copy of a batch out of a field's ring into the output
   * staging (an output that reads its batches from the ring, task_output.c):
   * schedule auto issues it on the drain stream. */
  int drains;

  /* Why the kind judged this task numerically unstable at load (a kernel's
   * stable()), reported at unstable_loc by gf_workflow_check_stable; NULL:
   * stable, or nothing to judge. */
  char *unstable;
  gf_loc unstable_loc;
};

/* The kinds (task_KIND.c). */
extern const gf_task_kind gf_task_kernel_kind, gf_task_copy_kind, gf_task_hook_kind,
    gf_task_output_kind, gf_task_image_kind;

/* Every kind, in the order messages list them (tasks.c). */
extern const gf_task_kind *const gf_task_kinds[];
extern const int gf_task_kind_count;

/* The whole of a field: [0, shape). */
gf_region gf_region_whole(const gf_workflow *wf, int field);
/* Cells at least `halo` from every edge of the grid's axes. */
gf_region gf_region_interior(const gf_workflow *wf, int field);
/* 1 when the boxes share a cell. */
int gf_region_overlaps(const gf_region *a, const gf_region *b);
/* 1 when `inner` lies within `outer`. */
int gf_region_contains(const gf_region *outer, const gf_region *inner);

/* Declares the next access of `task` (a kind declares at most GF_MAX_TASK_REFS). */
void gf_task_add_access(gf_task *task, gf_ref ref, gf_access access, gf_region region,
                        const char *what);

#endif
