/* task_hook.c - `hook: NAME`: calls the Lua hook NAME(n) on the host, in issue order. */
#include <stdint.h>
#include <stdlib.h>

#include "eval.h"
#include "load.h"
#include "program.h"
#include "task_hook.h"

static gf_status load(loader *ld, gf_task *task, const gf_task_yaml *yaml) {
  gf_hook_task *h = gf_calloc(1, sizeof *h);
  if (!h) return gf_oom(gf_load_diag(ld), "loading a hook task");
  task->data = h;
  return gf_load_hook(ld, yaml->value, &h->hook);
}

static gf_status call(gf_host_ctx *ctx, const gf_workflow *wf, int task, int64_t n,
                      const void *data) {
  (void)wf;
  const gf_hook_task *h = data;
  double arg = (double)n;
  return gf_eval_hook(gf_host_eval(ctx), h->hook, &arg, 1, NULL, task, n);
}

static gf_status emit(gf_emitter *e, const gf_workflow *wf, const gf_task *task,
                      const gf_task_instance *instance) {
  (void)wf, (void)instance;
  gf_instr *host = gf_emit(e, GF_I_HOST_CALL);
  host->call = call;
  host->call_data = task->data;
  return GF_OK;
}

static const char *describe(const gf_workflow *wf, const gf_task *task) {
  return wf->hooks[((const gf_hook_task *)task->data)->hook].name;
}

const gf_task_kind gf_task_hook_kind = {
    .name = "hook",
    .traits = GF_KIND_ON_HOST,
    .load = load,
    .describe = describe,
    .emit = emit,
    .free = free,
};
