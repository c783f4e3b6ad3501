/* program.c - the planner's steps lowered into instructions, shared bodies,
 * and segments of repeating steps. */
#include "program.h"

#include <stdlib.h>
#include <string.h>

/* Periods the segment finder tries; longer cycles become literal segments. */
#define MAX_PERIOD 256

struct gf_emitter {
  gf_program *program;
  const gf_workflow *wf;
  const gf_task_instance *instance; /* being emitted */
  int64_t step;                     /* the step being emitted */
  gf_instr *instrs;
  int count, cap;
  int out_of_memory; /* an instruction could not be appended */
  gf_instr spare;    /* what gf_emit hands out then */
};

struct gf_program {
  const gf_workflow *wf;
  gf_plan *plan;
  int nslots;     /* event slots per stream */
  int user_event; /* flat index of the workflow's first own event */
  int nevents;

  gf_body *bodies;
  uint64_t *body_hash;
  int nbodies, bodies_cap;
  int *table; /* open addressing: body id + 1, 0 empty */
  int table_cap;

  gf_segment *segments;
  int nsegments;
  int64_t end;

  gf_instance_fn instance; /* binding, once installed */
  void *instance_user;
  void *const *buffers; /* the run buffers, by id */
  size_t *buffer_bytes; /* declared by gf_emit_buffer, by id */
  gf_space *buffer_space;
  int bound; /* bodies [0, bound) are bound */

  gf_emitter emitter;

  /* per task: the steps of its counted instances (gf_emit_count_instance) */
  int64_t **instance_steps;
  int64_t *ninstances;
  int *instances_cap;
};

static const char *const instr_kind_names[GF_I_KIND_COUNT] = {
    "launch", "copy",  "record", "wait", "host wait",     "host sync",  "host call",
    "stage",  "write", "alloc",  "free", "capture begin", "capture end"};

const char *gf_instr_kind_name(gf_instr_kind kind) {
  return kind >= 0 && kind < GF_I_KIND_COUNT ? instr_kind_names[kind] : "?";
}

/* ---- emitting ---- */

gf_instr *gf_emit(gf_emitter *e, gf_instr_kind kind) {
  gf_instr *in = &e->spare;
  if (GF_GROW(e->instrs, e->cap, e->count + 1) == GF_OK)
    in = &e->instrs[e->count++];
  else
    e->out_of_memory = 1;
  memset(in, 0, sizeof *in);
  in->kind = kind;
  in->task = e->instance ? e->instance->task : -1;
  in->stream = e->instance ? e->instance->stream : -1;
  in->other = -1;
  in->event = -1;
  in->file = -1;
  return in;
}

/* The temporary a scratch field is at every step. */
static int scratch_temp(const gf_workflow *wf, int field) {
  return wf->ntasks * GF_MAX_TASK_TEMPS + field;
}

gf_operand gf_emit_access(gf_emitter *e, int a) {
  const gf_task *task = &e->wf->tasks[e->instance->task];
  int field = task->access[a].ref.field;
  if (e->wf->fields[field].scratch)
    return (gf_operand){.kind = GF_OPND_TEMP, .field = field, .temp = scratch_temp(e->wf, field)};
  return (gf_operand){.kind = GF_OPND_INSTANCE, .field = field, .inst = e->instance->inst[a]};
}

static int on_host(const gf_instr *in) {
  switch (in->kind) {
    case GF_I_HOST_WAIT:
    case GF_I_HOST_SYNC:
    case GF_I_HOST_CALL:
    case GF_I_STAGE:
    case GF_I_WRITE:
      return 1;
    default:
      return 0;
  }
}

/* Stream work a captured graph can hold: fixed addresses and fixed events.
 * A temporary's address changes with the step (the pool's bookkeeping is
 * on the host), so its alloc, free and uses are left out. */
static int capturable(const gf_workflow *wf, const gf_instr *in) {
  switch (in->kind) {
    case GF_I_LAUNCH:
      for (int a = 0; a < wf->tasks[in->task].naccess; a++)
        if (wf->fields[wf->tasks[in->task].access[a].ref.field].scratch) return 0;
      return 1;
    case GF_I_COPY: /* between fixed addresses: instances and run buffers */
      return (in->dst.kind == GF_OPND_INSTANCE || in->dst.kind == GF_OPND_BUFFER) &&
             (in->src.kind == GF_OPND_INSTANCE || in->src.kind == GF_OPND_BUFFER);
    case GF_I_RECORD:
    case GF_I_WAIT:
      return in->event >= 0;
    default:
      return 0;
  }
}

/* Lowers one planned operation. */
static gf_status lower(gf_program *p, const gf_op *op) {
  gf_emitter *e = &p->emitter;
  gf_instr *in = NULL;
  e->instance = NULL;
  switch (op->kind) {
    case GF_OP_TASK: {
      gf_task_instance instance = {.task = op->task, .stream = op->stream};
      memcpy(instance.inst, op->inst, sizeof instance.inst);
      e->instance = &instance;
      const gf_task *task = &p->wf->tasks[op->task];
      int first = e->count;
      gf_status st = task->kind->emit(e, p->wf, task, &instance);
      if (e->count > first) e->instrs[first].starts_task = 1;
      e->instance = NULL;
      return st;
    }
    case GF_OP_RECORD:
      in = gf_emit(e, GF_I_RECORD);
      in->stream = op->stream;
      in->event = op->stream * p->nslots + op->slot;
      break;
    case GF_OP_STREAM_WAIT:
      in = gf_emit(e, GF_I_WAIT);
      in->stream = op->stream;
      in->event = op->other * p->nslots + op->slot;
      break;
    case GF_OP_HOST_WAIT_EVENT:
      in = gf_emit(e, GF_I_HOST_WAIT);
      in->other = op->other;
      in->event = op->other * p->nslots + op->slot;
      break;
    case GF_OP_HOST_WAIT_STREAM:
      in = gf_emit(e, GF_I_HOST_SYNC);
      in->other = op->other;
      break;
    case GF_OP_EVENT_RECORD:
      in = gf_emit(e, GF_I_RECORD);
      in->stream = op->stream;
      in->event = p->user_event + op->slot;
      break;
    case GF_OP_EVENT_WAIT:
      in = gf_emit(e, GF_I_WAIT);
      in->stream = op->stream;
      in->event = p->user_event + op->slot;
      break;
    case GF_OP_HOST_EVENT_WAIT:
      in = gf_emit(e, GF_I_HOST_WAIT);
      in->event = p->user_event + op->slot;
      break;
    case GF_OP_ALLOC:
    case GF_OP_FREE: {
      const gf_field *field = &p->wf->fields[op->other];
      in = gf_emit(e, op->kind == GF_OP_ALLOC ? GF_I_ALLOC : GF_I_FREE);
      in->stream = op->stream;
      in->temp = scratch_temp(p->wf, op->other);
      in->bytes = field->bytes;
      in->space = field->space;
      break;
    }
  }
  in->task = op->task;
  return GF_OK;
}

/* Brackets each run of capturable stream work with markers. */
static void mark_capture_runs(gf_emitter *e, int first) {
  int n = e->count - first;
  if (n <= 0) return; /* a step where no task runs: nothing to bracket */
  gf_instr *step = gf_malloc((size_t)n * sizeof *step);
  if (!step) {
    e->out_of_memory = 1;
    return;
  }
  memcpy(step, e->instrs + first, (size_t)n * sizeof *step);
  e->count = first;
  int open = 0;
  for (int i = 0; i < n; i++) {
    int c = capturable(e->wf, &step[i]);
    if (c && !open) gf_emit(e, GF_I_CAPTURE_BEGIN);
    if (!c && open) gf_emit(e, GF_I_CAPTURE_END);
    open = c;
    gf_instr *in = gf_emit(e, step[i].kind);
    *in = step[i];
  }
  if (open) gf_emit(e, GF_I_CAPTURE_END);
  free(step);
}

/* ---- bodies ---- */

/* The part of an instruction that says what it does (not what binding adds). */
typedef struct instr_key {
  int kind, task, starts_task, stream, other, event, temp, file, space;
  int dst_kind, dst_field, dst_inst, dst_temp;
  int src_kind, src_field, src_inst, src_temp;
  size_t dst_offset, src_offset;
  int batch;
  size_t bytes;
  int inst[GF_MAX_TASK_REFS];
  int has_box;
  gf_box box;
  const void *param, *kernel, *call_data;
  void (*bind)(void), (*call)(void);
} instr_key;

static instr_key key_of(const gf_instr *in) {
  instr_key k;
  memset(&k, 0, sizeof k);
  k.kind = in->kind, k.task = in->task, k.starts_task = in->starts_task, k.stream = in->stream,
  k.other = in->other;
  k.event = in->event, k.temp = in->temp, k.file = in->file, k.space = in->space;
  k.dst_kind = in->dst.kind, k.dst_field = in->dst.field, k.dst_inst = in->dst.inst;
  k.dst_temp = in->dst.temp, k.dst_offset = in->dst.offset, k.src_offset = in->src.offset;
  k.batch = in->batch;
  k.src_kind = in->src.kind, k.src_field = in->src.field, k.src_inst = in->src.inst;
  k.src_temp = in->src.temp;
  k.bytes = in->bytes;
  memcpy(k.inst, in->inst, sizeof k.inst);
  k.has_box = in->has_box;
  if (in->has_box) k.box = in->box;
  k.param = in->param, k.kernel = in->kernel, k.call_data = in->call_data;
  k.bind = (void (*)(void))in->bind, k.call = (void (*)(void))in->call;
  return k;
}

/* Eight bytes at a time (byte by byte, hashing was a quarter of a long
 * run's start-up); a key holds pointers, so its size is a multiple of 8. */
_Static_assert(sizeof(instr_key) % 8 == 0, "instr_key is hashed in 8-byte words");
static uint64_t hash_instrs(const gf_instr *instrs, int n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
  for (int i = 0; i < n; i++) {
    instr_key k = key_of(&instrs[i]);
    for (size_t j = 0; j < sizeof k; j += 8) {
      uint64_t w;
      memcpy(&w, (const unsigned char *)&k + j, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
  }
  return h;
}

static int same_instrs(const gf_instr *a, const gf_instr *b, int n) {
  for (int i = 0; i < n; i++) {
    instr_key ka = key_of(&a[i]), kb = key_of(&b[i]);
    if (memcmp(&ka, &kb, sizeof ka) != 0) return 0;
  }
  return 1;
}

static gf_status bind_body(gf_program *p, gf_body *body, gf_diag *diag);

static void table_insert(gf_program *p, int id) {
  size_t mask = (size_t)p->table_cap - 1;
  for (size_t i = p->body_hash[id] & mask;; i = (i + 1) & mask)
    if (!p->table[i]) {
      p->table[i] = id + 1;
      return;
    }
}

/* The id of the body holding `instrs`, adding it when new; -1 when out of
 * memory (the program is unchanged then). */
static int intern(gf_program *p, const gf_instr *instrs, int n) {
  uint64_t h = hash_instrs(instrs, n);
  if (p->table_cap) {
    size_t mask = (size_t)p->table_cap - 1;
    for (size_t i = h & mask; p->table[i]; i = (i + 1) & mask) {
      int id = p->table[i] - 1;
      if (p->body_hash[id] == h && p->bodies[id].ninstrs == n &&
          same_instrs(p->bodies[id].instrs, instrs, n))
        return id;
    }
  }
  int hash_cap = p->bodies_cap;
  if (GF_GROW(p->bodies, p->bodies_cap, p->nbodies + 1) != GF_OK ||
      GF_GROW(p->body_hash, hash_cap, p->bodies_cap) != GF_OK)
    return -1;
  /* The table keeps at most half its slots used. */
  if (2 * (p->nbodies + 1) > p->table_cap) {
    int table_cap = p->table_cap ? 2 * p->table_cap : 64;
    int *table = gf_calloc((size_t)table_cap, sizeof *table);
    if (!table) return -1;
    free(p->table);
    p->table = table;
    p->table_cap = table_cap;
    for (int i = 0; i < p->nbodies; i++) table_insert(p, i);
  }
  gf_instr *copy = gf_malloc((size_t)(n ? n : 1) * sizeof *copy); /* a step may do nothing */
  if (!copy) return -1;
  int id = p->nbodies++;
  gf_body *body = &p->bodies[id];
  body->ninstrs = n;
  body->instrs = copy;
  if (n) memcpy(body->instrs, instrs, (size_t)n * sizeof *instrs);
  body->host_instrs = 0;
  for (int i = 0; i < n; i++) body->host_instrs += on_host(&instrs[i]);
  p->body_hash[id] = h;
  table_insert(p, id);
  return id;
}

/* ---- segments ---- */

static void free_segments(gf_program *p) {
  for (int i = 0; i < p->nsegments; i++) free(p->segments[i].bodies);
  free(p->segments);
  p->segments = NULL;
  p->nsegments = 0;
}

static gf_status add_segment(gf_program *p, int *cap, int64_t first, int64_t steps, int period,
                             const int *ids) {
  int *bodies = gf_malloc((size_t)period * sizeof(int));
  if (!bodies || GF_GROW(p->segments, *cap, p->nsegments + 1) != GF_OK) {
    free(bodies);
    return GF_INTERNAL;
  }
  gf_segment *seg = &p->segments[p->nsegments++];
  seg->first = first;
  seg->steps = steps;
  seg->period = period;
  seg->bodies = bodies;
  memcpy(seg->bodies, ids, (size_t)period * sizeof(int));
  seg->capturable = 1;
  for (int i = 0; i < period; i++) seg->capturable &= p->bodies[ids[i]].host_instrs == 0;
  return GF_OK;
}

/* Splits the body ids of steps first .. first + n - 1 into segments: at
 * each step the period that repeats furthest (at least twice), else a
 * literal run up to where a period starts. GF_INTERNAL, unreported, when out
 * of memory. */
static gf_status find_segments(gf_program *p, int64_t first, const int *ids, int64_t n) {
  int cap = 0;
  int64_t literal = -1; /* start of an open literal run */
  gf_status st = GF_OK;
  for (int64_t i = 0; i < n && st == GF_OK;) {
    int best_period = 0;
    int64_t best_len = 0;
    for (int period = 1; period <= MAX_PERIOD && i + 2 * period <= n; period++) {
      int64_t j = i + period;
      while (j < n && ids[j] == ids[j - period]) j++;
      int64_t len = j - i;
      if (len >= 2 * period && len > best_len) {
        best_len = len;
        best_period = period;
      }
    }
    if (!best_period) {
      if (literal < 0) literal = i;
      i++;
      continue;
    }
    if (literal >= 0) {
      st = add_segment(p, &cap, first + literal, i - literal, (int)(i - literal), ids + literal);
      literal = -1;
    }
    if (st == GF_OK) st = add_segment(p, &cap, first + i, best_len, best_period, ids + i);
    i += best_len;
  }
  if (literal >= 0 && st == GF_OK)
    st = add_segment(p, &cap, first + literal, n - literal, (int)(n - literal), ids + literal);
  return st;
}

/* ---- the program ---- */

gf_status gf_program_create(const gf_workflow *wf, gf_plan *plan, gf_diag *diag, gf_program **out) {
  *out = NULL;
  gf_program *p = gf_calloc(1, sizeof *p);
  if (!p) return gf_oom(diag, "creating the program");
  p->wf = wf;
  p->plan = plan;
  p->nslots = gf_plan_event_slots(plan);
  p->user_event = gf_plan_stream_count(plan) * p->nslots;
  p->nevents = p->user_event + wf->nevents + wf->ntasks * GF_MAX_TASK_EVENTS;
  p->instance_steps = gf_calloc((size_t)wf->ntasks + 1, sizeof *p->instance_steps);
  p->ninstances = gf_calloc((size_t)wf->ntasks + 1, sizeof *p->ninstances);
  p->instances_cap = gf_calloc((size_t)wf->ntasks + 1, sizeof *p->instances_cap);
  if (!p->instance_steps || !p->ninstances || !p->instances_cap) {
    gf_program_free(p);
    *out = NULL;
    return gf_oom(diag, "creating the program");
  }
  p->emitter.program = p;
  p->emitter.wf = wf;
  *out = p;
  return GF_OK;
}

gf_status gf_program_compile(gf_program *p, int64_t from, int64_t max_steps, gf_diag *diag) {
  if (from != p->end)
    return gf_diag_error(diag, GF_INTERNAL, "internal: compiling from step %lld, expected %lld",
                         (long long)from, (long long)p->end);
  if (from == 0) {
    gf_plan_reset(p->plan);
    memset(p->ninstances, 0, (size_t)p->wf->ntasks * sizeof *p->ninstances);
  }
  int64_t to = p->wf->steps - from < max_steps ? p->wf->steps : from + max_steps;
  int64_t n = to - from;
  int *ids = gf_malloc((size_t)n * sizeof(int));
  if (!ids) return gf_oom(diag, "compiling the program");
  gf_emitter *e = &p->emitter;
  gf_status st = GF_OK;
  int first_new = p->nbodies;
  int out_of_memory = 0; /* in the emitter, a body or the segments: not reported yet */
  for (int64_t k = 0; k < n && st == GF_OK; k++) {
    const gf_op *ops = NULL;
    int nops = 0;
    if ((st = gf_plan_step(p->plan, from + k, diag, &ops, &nops)) != GF_OK) break;
    e->count = 0;
    e->step = from + k;
    for (int i = 0; i < nops && st == GF_OK; i++) st = lower(p, &ops[i]);
    if (st != GF_OK) break;
    if (!e->out_of_memory) mark_capture_runs(e, 0);
    ids[k] = e->out_of_memory ? -1 : intern(p, e->instrs, e->count);
    if (ids[k] < 0) {
      out_of_memory = 1;
      break;
    }
  }
  if (st == GF_OK && !out_of_memory) {
    free_segments(p);
    if (find_segments(p, from, ids, n) == GF_OK)
      p->end = to;
    else
      out_of_memory = 1;
  }
  free(ids);
  e->out_of_memory = 0;
  if (out_of_memory) return gf_oom(diag, "compiling the program");
  if (st == GF_OK && p->instance)
    for (int b = first_new; b < p->nbodies && st == GF_OK; b++)
      st = bind_body(p, &p->bodies[b], diag);
  if (st == GF_OK) p->bound = p->instance ? p->nbodies : 0;
  return st;
}

/* ---- binding ---- */

static gf_status bind_body(gf_program *p, gf_body *body, gf_diag *diag) {
  const gf_workflow *wf = p->wf;
  for (int i = 0; i < body->ninstrs; i++) {
    gf_instr *in = &body->instrs[i];
    if (in->kind == GF_I_COPY) {
      if (in->dst.kind == GF_OPND_INSTANCE)
        in->dst.bound = p->instance(p->instance_user, in->dst.field, in->dst.inst);
      if (in->src.kind == GF_OPND_INSTANCE)
        in->src.bound = p->instance(p->instance_user, in->src.field, in->src.inst);
      gf_operand *ends[2] = {&in->dst, &in->src};
      for (int j = 0; j < 2; j++) /* a run buffer's address is fixed from now on */
        if (ends[j]->kind == GF_OPND_BUFFER && p->buffers && p->buffers[ends[j]->temp])
          ends[j]->bound = (char *)p->buffers[ends[j]->temp] + ends[j]->offset;
    } else if (in->kind == GF_I_LAUNCH) {
      const gf_task *task = &wf->tasks[in->task];
      void *data[GF_MAX_TASK_REFS];
      /* A scratch field's address changes every step: bind a marker (an
       * address no allocation has) and note where the struct holds it. */
      for (int a = 0; a < task->naccess; a++)
        data[a] = wf->fields[task->access[a].ref.field].scratch
                      ? (void *)&in->inst[a]
                      : p->instance(p->instance_user, task->access[a].ref.field, in->inst[a]);
      int nparams = 0;
      while (in->kernel->params[nparams].name) nparams++;
      in->args = aligned_alloc(64, GF_MAX_KERNEL_ARGS_SIZE);
      in->params = gf_calloc((size_t)nparams + 1, sizeof *in->params);
      if (!in->args || !in->params) return gf_oom(diag, "binding the program");
      gf_status st = in->bind(wf, task, in->has_box ? &in->box : NULL, data,
                              p->buffers ? p->buffers + (size_t)in->task * GF_MAX_TASK_TEMPS : NULL,
                              in->args, in->params, &in->nparams);
      if (st != GF_OK) return st;
      in->ntemps = 0;
      for (size_t at = 0; at + sizeof(void *) <= in->kernel->args_size; at += sizeof(void *)) {
        void *word;
        memcpy(&word, (unsigned char *)in->args + at, sizeof word);
        for (int a = 0; a < task->naccess; a++)
          if (word == (void *)&in->inst[a] && in->ntemps < GF_MAX_TASK_REFS)
            in->temps[in->ntemps++] =
                (gf_instr_temp){at, scratch_temp(wf, task->access[a].ref.field)};
      }
      in->points = in->kernel->points ? in->kernel->points(in->args) : 0;
    }
  }
  return GF_OK;
}

gf_status gf_program_bind(gf_program *p, gf_instance_fn instance, void *user, void *const *buffers,
                          gf_diag *diag) {
  p->instance = instance;
  p->instance_user = user;
  p->buffers = buffers;
  for (int b = p->bound; b < p->nbodies; b++) {
    gf_status st = bind_body(p, &p->bodies[b], diag);
    if (st != GF_OK) return st;
  }
  p->bound = p->nbodies;
  return GF_OK;
}

void gf_program_free(gf_program *p) {
  if (!p) return;
  for (int b = 0; b < p->nbodies; b++) {
    for (int i = 0; i < p->bodies[b].ninstrs; i++) {
      free(p->bodies[b].instrs[i].args);
      free(p->bodies[b].instrs[i].params);
    }
    free(p->bodies[b].instrs);
  }
  free(p->bodies);
  free(p->body_hash);
  free(p->table);
  free_segments(p);
  free(p->emitter.instrs);
  free(p->buffer_bytes);
  free(p->buffer_space);
  for (int t = 0; p->instance_steps && t < p->wf->ntasks; t++) free(p->instance_steps[t]);
  free(p->instance_steps);
  free(p->ninstances);
  free(p->instances_cap);
  free(p);
}

gf_plan *gf_program_plan(const gf_program *p) {
  return p->plan;
}
const gf_segment *gf_program_segments(const gf_program *p, int *count) {
  *count = p->nsegments;
  return p->segments;
}
const gf_body *gf_program_body(const gf_program *p, int body) {
  return &p->bodies[body];
}
int gf_program_body_count(const gf_program *p) {
  return p->nbodies;
}
int64_t gf_program_end(const gf_program *p) {
  return p->end;
}
int gf_program_event_count(const gf_program *p) {
  return p->nevents;
}
int gf_program_temp_count(const gf_program *p) {
  return p->wf->ntasks * GF_MAX_TASK_TEMPS + p->wf->nfields;
}

int gf_emit_temp(gf_emitter *e, int j) {
  return e->instance->task * GF_MAX_TASK_TEMPS + j;
}

void gf_emit_buffer(gf_emitter *e, int j, size_t bytes, gf_space space) {
  gf_program *p = e->program;
  int id = gf_emit_temp(e, j);
  if (!p->buffer_bytes) {
    size_t count = (size_t)gf_program_temp_count(p);
    p->buffer_bytes = gf_calloc(count, sizeof *p->buffer_bytes);
    p->buffer_space = gf_calloc(count, sizeof *p->buffer_space);
    if (!p->buffer_bytes || !p->buffer_space) { /* both or neither */
      free(p->buffer_bytes);
      free(p->buffer_space);
      p->buffer_bytes = NULL;
      p->buffer_space = NULL;
      e->out_of_memory = 1;
      return;
    }
  }
  if (bytes > p->buffer_bytes[id]) p->buffer_bytes[id] = bytes;
  p->buffer_space[id] = space;
}

int gf_emit_drain_stream(gf_emitter *e) {
  int s = gf_plan_drain_stream(e->program->plan);
  return s >= 0 ? s : e->instance->stream;
}

int64_t gf_emit_step(const gf_emitter *e) {
  return e->step;
}

int gf_emit_stream(const gf_emitter *e) {
  return e->instance->stream;
}

int gf_emit_event(gf_emitter *e, int j) {
  const gf_program *p = e->program;
  return p->user_event + p->wf->nevents + e->instance->task * GF_MAX_TASK_EVENTS + j;
}

int64_t gf_emit_count_instance(gf_emitter *e) {
  gf_program *p = e->program;
  int t = e->instance->task;
  if (p->ninstances[t] >= INT32_MAX ||
      GF_GROW(p->instance_steps[t], p->instances_cap[t], (int)p->ninstances[t] + 1) != GF_OK) {
    e->out_of_memory = 1;
    return p->ninstances[t];
  }
  p->instance_steps[t][p->ninstances[t]] = e->step;
  return p->ninstances[t]++;
}

int64_t gf_program_instance_step(const gf_program *p, int task, int64_t i) {
  return p->instance_steps[task][i];
}

int64_t gf_program_instances_through(const gf_program *p, int task, int64_t n) {
  int64_t lo = 0, hi = p->ninstances[task]; /* the first instance after step n */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (p->instance_steps[task][mid] <= n)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

size_t gf_program_buffer(const gf_program *p, int id, gf_space *space) {
  if (!p->buffer_bytes) return 0;
  *space = p->buffer_space[id];
  return p->buffer_bytes[id];
}

void gf_program_write_summary(const gf_program *p, FILE *out) {
  int64_t instrs = 0, capturable_steps = 0;
  for (int b = 0; b < p->nbodies; b++) instrs += p->bodies[b].ninstrs;
  for (int i = 0; i < p->nsegments; i++)
    if (p->segments[i].capturable) capturable_steps += p->segments[i].steps;
  fprintf(out,
          "  program   %lld steps in %d segments of %d distinct step bodies (%lld instructions); "
          "host work in all but %lld steps\n",
          (long long)p->end, p->nsegments, p->nbodies, (long long)instrs,
          (long long)capturable_steps);
}
