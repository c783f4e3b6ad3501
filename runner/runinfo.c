/* runinfo.c - run.json, the self-description of a run's output folder.
 *
 * Written by the executor's report hook next to timings.json (whose text it
 * embeds, so both files hold the same figures), before the outputs take their
 * final names: no run's outputs appear without it. */
#include "runinfo.h"

#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "output.h"
#include "schedule.h"
#include "text.h"

#ifndef GFLOW_REVISION
#define GFLOW_REVISION "unknown"
#endif

/* `t` as UTC ISO 8601, "2024-05-01T12:00:00Z". */
static void iso8601(time_t t, char *buf, size_t size) {
  struct tm tm;
  if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(buf, size, "unknown");
}

static void int_list(gf_text *j, const int64_t *v, int n) {
  gf_text_puts(j, "[");
  for (int d = 0; d < n; d++) gf_text_printf(j, "%s%" PRId64, d ? ", " : "", v[d]);
  gf_text_puts(j, "]");
}

/* The workflow's key figures, as resolved (after --set, parameters evaluated). */
static void key_figures(gf_text *j, const gf_workflow *wf) {
  gf_text_puts(j, "{\n    \"name\": ");
  gf_text_json(j, wf->name);
  gf_text_puts(j, ",\n    \"grid\": {\"shape\": ");
  int_list(j, wf->shape, wf->ndim);
  gf_text_puts(j, ", \"spacing\": [");
  for (int d = 0; d < wf->ndim; d++) gf_text_printf(j, "%s%.17g", d ? ", " : "", wf->spacing[d]);
  gf_text_printf(j, "], \"halo\": %d},\n    \"steps\": %" PRId64 ",\n    \"schedule\": ", wf->halo,
                 wf->steps);
  gf_text_json(j, wf->schedule->name);
  gf_text_puts(j, ",\n    \"memory\": {\"default\": ");
  gf_text_json(j, gf_space_name(wf->default_space));
  gf_text_printf(j, ", \"staging\": %d, \"staging_budget\": %lld},\n    \"fields\": {", wf->staging,
                 (long long)wf->staging_budget);
  for (int f = 0; f < wf->nfields; f++) {
    gf_text_puts(j, f ? ", " : "");
    gf_text_json(j, wf->fields[f].name);
    gf_text_puts(j, ": {\"space\": ");
    gf_text_json(j, gf_space_name(wf->fields[f].space));
    gf_text_puts(j, ", \"dtype\": ");
    gf_text_json(j, gf_dtype_name(wf->fields[f].dtype));
    gf_text_puts(j, "}");
  }
  gf_text_printf(j, "},\n    \"ranks\": %d,\n    \"decomposition\": [", wf->decomp.ranks);
  for (int d = 0; d < wf->ndim; d++) gf_text_printf(j, "%s%d", d ? ", " : "", wf->decomp.dims[d]);
  gf_text_puts(j, "]\n  }");
}

/* The --set list as an object, a key given twice once with its last value. */
static void set_list(gf_text *j, const gf_run_options *o) {
  int first = 1;
  gf_text_puts(j, "{");
  for (int i = 0; i < o->noverrides; i++) {
    int later = 0;
    for (int k = i + 1; k < o->noverrides && !later; k++)
      later = strcmp(o->overrides[i].key, o->overrides[k].key) == 0;
    if (later) continue;
    gf_text_puts(j, first ? "" : ", ");
    gf_text_json(j, o->overrides[i].key);
    gf_text_puts(j, ": ");
    gf_text_json(j, o->overrides[i].value);
    first = 0;
  }
  gf_text_puts(j, "}");
}

gf_status gf_runinfo_write(const gf_runinfo *info, const char *dir, gf_diag *diag) {
  const gf_run_options *o = info->options;
  const gf_workflow *wf = info->wf;
  if (!info->timings_json) return gf_oom(diag, "writing run.json");
  time_t ended = time(NULL);
  char start[32], end[32], host[256] = "unknown";
  iso8601(ended - (time_t)(info->flushed_s + 0.5), start, sizeof start);
  iso8601(ended, end, sizeof end);
  if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "unknown");

  gf_text j = {0};
  gf_text_puts(&j, "{\n  \"gflow_version\": ");
  gf_text_json(&j, GFLOW_VERSION);
  gf_text_puts(&j, ",\n  \"git_revision\": ");
  gf_text_json(&j, GFLOW_REVISION);
  gf_text_printf(&j, ",\n  \"started\": \"%s\",\n  \"ended\": \"%s\",\n  \"host\": ", start, end);
  gf_text_json(&j, host);
  gf_text_puts(&j, ",\n  \"backend\": ");
  gf_text_json(&j, info->backend);
  gf_text_puts(&j, ",\n  \"device\": ");
  gf_text_json(&j, info->device);
  gf_text_printf(&j, ",\n  \"threads\": %d,\n  \"command_line\": [",
                 o->threads > 0 ? o->threads : omp_get_max_threads());
  for (int i = 0; i < o->argc; i++) {
    gf_text_puts(&j, i ? ", " : "");
    gf_text_json(&j, o->argv[i]);
  }
  gf_text_puts(&j, "],\n  \"set\": ");
  set_list(&j, o);
  gf_text_puts(&j, ",\n  \"workflow_file\": ");
  gf_text_json(&j, wf->path);
  gf_text_puts(&j, ",\n  \"workflow\": ");
  key_figures(&j, wf);
  gf_text_puts(&j, ",\n  \"timings\": ");
  /* timings.json's object, indented one level */
  const char *t = info->timings_json;
  size_t len = strlen(t);
  while (len && t[len - 1] == '\n') len--;
  for (const char *p = t; p < t + len; p++) {
    gf_text_append(&j, p, 1);
    if (*p == '\n') gf_text_puts(&j, "  ");
  }
  gf_text_puts(&j, ",\n  \"restarted_from_step\": ");
  if (info->restarted_from >= 0)
    gf_text_printf(&j, "%" PRId64, info->restarted_from);
  else
    gf_text_puts(&j, "null");
  gf_text_puts(&j, ",\n  \"checkpoint_step\": ");
  if (info->checkpoint_step >= 0)
    gf_text_printf(&j, "%" PRId64, info->checkpoint_step);
  else
    gf_text_puts(&j, "null");
  gf_text_printf(&j, ",\n  \"steps_run\": %" PRId64 ",\n  \"complete\": %s\n}\n", info->steps_run,
                 info->steps_run == wf->steps ? "true" : "false");
  char *text = gf_text_take(&j);
  gf_status st = gf_write_file_atomic(dir, "run.json", text, diag);
  free(text);
  return st;
}
