/* task_copy.c - `copy: {from: REF, to: REF}`: one field instance into another. */
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "program.h"

enum { FROM, TO }; /* the task's accesses */

static const gf_key_spec copy_keys[] = {{"from", 1, NULL}, {"to", 1, NULL}};

static gf_status load(loader *ld, gf_task *task, const gf_task_yaml *yaml) {
  const gf_workflow *wf = gf_load_workflow(ld);
  yaml_node_t *node = yaml->value, *values[2] = {NULL};
  gf_ref from, to;
  gf_status status = gf_load_mapping(ld, node, "copy", copy_keys, 2, NULL, NULL, values);
  if (status || (status = gf_load_ref(ld, values[0], &from))) return status;
  gf_task_add_access(task, from, GF_ACCESS_READ, gf_region_whole(wf, from.field), "from");
  if ((status = gf_load_ref(ld, values[1], &to))) return status;
  gf_task_add_access(task, to, GF_ACCESS_WRITE, gf_region_whole(wf, to.field), "to");
  const gf_field *f = &wf->fields[from.field], *t = &wf->fields[to.field];
  if (from.field == to.field) {
    const char *a = from.index ? gf_expr_text(from.index) : "0";
    const char *b = to.index ? gf_expr_text(to.index) : "0";
    if (strcmp(a, b) == 0)
      return gf_load_fail(ld, node, "copy from '%s' to itself", gf_load_scalar(values[0]));
  }
  if (f->dtype != t->dtype || f->elems != t->elems)
    return gf_load_fail(ld, node,
                        "cannot copy '%s' (%s, %lld elements) to '%s' (%s, %lld elements): dtype "
                        "and element count must match",
                        f->name, gf_dtype_name(f->dtype), (long long)f->elems, t->name,
                        gf_dtype_name(t->dtype), (long long)t->elems);
  return GF_OK;
}

static gf_status emit(gf_emitter *e, const gf_workflow *wf, const gf_task *task,
                      const gf_task_instance *instance) {
  (void)instance;
  gf_instr *copy = gf_emit(e, GF_I_COPY);
  copy->src = gf_emit_access(e, FROM);
  copy->dst = gf_emit_access(e, TO);
  copy->bytes = wf->fields[task->access[FROM].ref.field].bytes;
  return GF_OK;
}

static const char *describe(const gf_workflow *wf, const gf_task *task) {
  return wf->fields[task->access[TO].ref.field].name;
}

const gf_task_kind gf_task_copy_kind = {
    .name = "copy",
    .traits = GF_KIND_MOVES_DATA,
    .load = load,
    .describe = describe,
    .emit = emit,
};
