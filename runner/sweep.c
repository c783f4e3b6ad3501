/* sweep.c - `gflow sweep`: points of a parameter grid, each a generated config
 * file and a run of its own, here N at a time or as a Slurm job array.
 *
 * The sweep never edits the workflow: a point is the workflow loaded through
 * gf_workflow_load with that point's overrides, and the file the point runs is
 * gf_workflow_resolved_yaml() of it, written into the point's folder and
 * checked to load back to the same workflow. A point runs as `gflow run
 * config.yaml --out FOLDER`, the same binary (/proc/self/exe) in a child
 * process, so a point run by the sweep and a point run by hand are one thing.
 */
#include "sweep.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml.h>

#include "error.h"
#include "output.h"
#include "registry.h"
#include "text.h"
#include "workflow.h"

#define MAX_SPEC_BYTES ((size_t)1 << 20)
#define MAX_POINTS 100000
#define MAX_JOBS 1024

static const char usage_sweep[] =
    "usage: gflow sweep SPEC.yaml [options]\n"
    "       gflow sweep WORKFLOW.yaml -m KEY=V1,V2,... [-m ...] [-z KEY=V1,V2,...]... [options]\n"
    "\n"
    "Runs a workflow at every point of a parameter grid: the cartesian product of\n"
    "the -m keys (a spec's `matrix:`), with the -z keys (a spec's `zip:` group)\n"
    "advancing together. KEY is a dotted key as --set takes it; values are split at\n"
    "top-level commas: -m 'grid.shape=[256,256],[1024,1024]'. Each point gets a\n"
    "folder OUT/pNNN-KEY=VALUE... holding config.yaml (the resolved workflow it\n"
    "runs), gflow.log and its outputs. A point whose timings.json says complete is\n"
    "skipped when the sweep runs again; the others are retried.\n"
    "\n"
    "  -m, --matrix KEY=VALUES  a key of the product (repeatable)\n"
    "  -z, --zip KEY=VALUES     a key of the zipped group (repeatable; equal lengths)\n"
    "  --set KEY=VALUE          an override for every point (repeatable)\n"
    "  -j, --jobs N             points run at once (default 1; with --slurm: array tasks at once)\n"
    "  --out DIR                the sweep's folder (default sweeps/NAME)\n"
    "  --name NAME              the sweep's name (default: the file's base name)\n"
    "  --plugin FILE            load a kernel plugin, in the sweep and every point\n"
    "  --slurm                  write OUT/sweep.sbatch, a job array of one point per task\n"
    "                           over OUT/points.txt, and submit it with sbatch\n"
    "  --dry-run                with --slurm: write the files, submit nothing\n"
    "  --gpus N, --tasks N, --cpus N, --time T   resources per point for Slurm\n"
    "\n"
    "A spec file (see README, \"Running on a cluster\"):\n"
    "  workflow: wave2d.yaml        # relative to the spec's folder\n"
    "  matrix: {schedule: [sync, events], grid.shape: [[256, 256], [512, 512]]}\n"
    "  zip: [{params.cfl: [0.3, 0.4], loop.steps: [100, 200]}]\n"
    "  set: {check.every: 10}       # overrides for every point\n"
    "  jobs: 2\n"
    "  out: sweeps/wave             # default sweeps/NAME, NAME the spec's base name\n"
    "  resources: {gpus: 1, tasks: 1, cpus: 8, time: \"00:30:00\"}\n"
    "  sbatch: [\"--partition=gpu\"]\n"
    "\n"
    "The table (point, parameters, status, total ms, GPts/s) goes to stdout; exit 0\n"
    "when every point completed, else the exit status of the first that did not.\n";

typedef struct sweep_param {
  char *key;
  char **values; /* YAML flow text, as --set takes it */
  int nvalues;
  int axis;            /* the params of one zip group share an axis */
  gf_loc loc;          /* of the key in the spec; line 0: from the command line */
  char *origin, *text; /* the command line's `-m KEY=VALUES`, for messages */
} sweep_param;

typedef enum point_state { PT_PENDING, PT_SKIPPED, PT_OK, PT_FAILED } point_state;

typedef struct sweep_point {
  char *dir;    /* OUT/p003-schedule=events-grid.shape=256x256 */
  char *params; /* "schedule=events grid.shape=[256,256]" */
  point_state state;
  int exit_code;
  double total_ms, gpts;
  pid_t pid;
} sweep_point;

typedef struct sweep {
  const char *file; /* as given */
  char *spec_text;  /* the spec's text; NULL: the file is the workflow */
  gf_diag spec_diag;
  char *workflow, *name, *out;
  int jobs;
  sweep_param *params;
  int nparams, params_cap, naxes;
  gf_override *sets; /* keys and values owned */
  int nsets, sets_cap;
  const char **plugins;
  int nplugins, plugins_cap;
  int gpus, tasks, cpus;
  char *time;
  char **sbatch;
  int nsbatch, sbatch_cap;
  int slurm, dry_run;
  sweep_point *points;
  int npoints;
  char exe[PATH_MAX];
  gf_registry *registry;
} sweep;

static volatile sig_atomic_t sweep_stop;

static void on_sweep_signal(int sig) {
  sweep_stop = sig;
}

static gf_status sweep_oom(const char *what) {
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  return gf_oom(&diag, what);
}

static gf_status usage_fail(const char *fmt, const char *arg) {
  fprintf(stderr, "gflow: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n%s", usage_sweep);
  return GF_USAGE;
}

/* ---- reading ------------------------------------------------------------------ */

static gf_status read_text(const char *path, size_t limit, char **out, gf_diag *diag) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", path, strerror(errno));
  gf_text t = {0};
  gf_text_puts(&t, "");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0 && t.len <= limit) gf_text_append(&t, buf, n);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    gf_text_free(&t);
    return gf_diag_error(diag, GF_NOINPUT, "cannot read %s", path);
  }
  if (t.len > limit) {
    gf_text_free(&t);
    return gf_diag_error(diag, GF_INVALID, "%s is more than %zu bytes", path, limit);
  }
  if (!(*out = gf_text_take(&t))) return gf_oom(diag, "reading a file");
  return GF_OK;
}

/* ---- values and names ------------------------------------------------------------ */

/* A YAML node as flow text: what `--set KEY=VALUE` takes after the `=`. */
static void node_flow(yaml_document_t *doc, yaml_node_t *node, gf_text *t) {
  if (node->type == YAML_SCALAR_NODE) {
    const char *s = (const char *)node->data.scalar.value;
    if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
      gf_text_puts(t, s);
    else
      gf_text_json(t, s); /* a JSON string is a YAML double-quoted scalar */
  } else if (node->type == YAML_SEQUENCE_NODE) {
    gf_text_puts(t, "[");
    for (yaml_node_item_t *i = node->data.sequence.items.start; i < node->data.sequence.items.top;
         i++) {
      if (i > node->data.sequence.items.start) gf_text_puts(t, ", ");
      node_flow(doc, yaml_document_get_node(doc, *i), t);
    }
    gf_text_puts(t, "]");
  } else if (node->type == YAML_MAPPING_NODE) {
    gf_text_puts(t, "{");
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
      if (p > node->data.mapping.pairs.start) gf_text_puts(t, ", ");
      node_flow(doc, yaml_document_get_node(doc, p->key), t);
      gf_text_puts(t, ": ");
      node_flow(doc, yaml_document_get_node(doc, p->value), t);
    }
    gf_text_puts(t, "}");
  }
}

/* Splits `text` at commas outside brackets, braces and quotes. Returns the
 * number of values (0: out of memory, or an empty value: *empty set). */
static int split_values(const char *text, char ***out, int *empty) {
  int n = 0, cap = 0, depth = 0;
  char quote = 0;
  char **values = NULL;
  *empty = 0;
  const char *start = text;
  for (const char *s = text;; s++) {
    if (quote) {
      if (*s == '\\' && quote == '"' && s[1])
        s++;
      else if (*s == quote)
        quote = 0;
      if (*s) continue;
    }
    if (*s == '"' || *s == '\'')
      quote = *s;
    else if (*s == '[' || *s == '{')
      depth++;
    else if ((*s == ']' || *s == '}') && depth > 0)
      depth--;
    else if ((*s == ',' && depth == 0) || !*s) {
      const char *a = start, *b = s;
      while (a < b && (*a == ' ' || *a == '\t')) a++;
      while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
      if (a == b) *empty = 1;
      if (GF_GROW(values, cap, n + 1) != GF_OK || !(values[n] = gf_strndup(a, (size_t)(b - a)))) {
        for (int i = 0; i < n; i++) free(values[i]);
        free(values);
        *out = NULL;
        return 0;
      }
      n++;
      start = s + 1;
    }
    if (!*s) break;
  }
  *out = values;
  return n;
}

/* A value as part of a folder name: [256, 256] -> 256x256. */
static void append_label(gf_text *t, const char *value) {
  size_t len = 0;
  for (const char *s = value; *s && len < 40; s++) {
    char c = *s;
    if (c == '[' || c == ']' || c == '{' || c == '}' || c == ' ' || c == '"' || c == '\'') continue;
    if (c == ',')
      c = 'x';
    else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '-' || c == '+' || c == '_' || c == ':'))
      c = '_';
    gf_text_append(t, &c, 1);
    len++;
  }
}

static gf_status add_set(sweep *s, char *key, char *value) {
  if (!key || !value || GF_GROW(s->sets, s->sets_cap, s->nsets + 1) != GF_OK) {
    free(key);
    free(value);
    return sweep_oom("reading the sweep");
  }
  s->sets[s->nsets++] = (gf_override){key, value};
  return GF_OK;
}

static sweep_param *find_param(sweep *s, const char *key) {
  for (int i = 0; i < s->nparams; i++)
    if (strcmp(s->params[i].key, key) == 0) return &s->params[i];
  return NULL;
}

static sweep_param *new_param(sweep *s) {
  if (GF_GROW(s->params, s->params_cap, s->nparams + 1) != GF_OK) return NULL;
  sweep_param *p = &s->params[s->nparams++];
  memset(p, 0, sizeof *p);
  return p;
}

/* ---- the spec file ------------------------------------------------------------- */

static gf_loc node_loc(const yaml_node_t *node) {
  return (gf_loc){(int)node->start_mark.line + 1, (int)node->start_mark.column + 1, 0};
}

static gf_status spec_fail(sweep *s, const yaml_node_t *node, const char *fmt, const char *arg) {
  return gf_diag_at(&s->spec_diag, node_loc(node), GF_INVALID, fmt, arg);
}

static const char *plain(const yaml_node_t *node) {
  return node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

static gf_status spec_string(sweep *s, const yaml_node_t *node, const char *what, char **out) {
  const char *text = plain(node);
  if (!text || !*text) return spec_fail(s, node, "%s must be a non-empty string", what);
  free(*out);
  if (!(*out = gf_strdup(text))) return sweep_oom("reading the sweep");
  return GF_OK;
}

static gf_status spec_int(sweep *s, const yaml_node_t *node, const char *what, int lo, int hi,
                          int *out) {
  const char *text = plain(node);
  char *end = NULL;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || end == text || *end || v < lo || v > hi) {
    char msg[128];
    snprintf(msg, sizeof msg, "%%s must be an integer from %d to %d", lo, hi);
    return spec_fail(s, node, msg, what);
  }
  *out = (int)v;
  return GF_OK;
}

/* `KEY: [V1, V2, ...]` pairs of `matrix:` or of one `zip:` group. */
static gf_status spec_params(sweep *s, yaml_document_t *doc, yaml_node_t *map, int zip) {
  if (map->type != YAML_MAPPING_NODE)
    return spec_fail(s, map, "%s must be a mapping of KEY: [values]",
                     zip ? "a zip group" : "matrix");
  if (map->data.mapping.pairs.start == map->data.mapping.pairs.top)
    return spec_fail(s, map, "%s is empty", zip ? "a zip group" : "matrix");
  int axis = s->naxes;
  int first = s->nparams;
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *k = yaml_document_get_node(doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(doc, pr->value);
    const char *key = plain(k);
    if (!key || !*key) return spec_fail(s, k, "%s", "a key must be a dotted workflow key");
    if (find_param(s, key)) return spec_fail(s, k, "'%s' is swept twice", key);
    if (v->type != YAML_SEQUENCE_NODE)
      return spec_fail(s, v, "'%s' needs a list of values, e.g. [a, b]", key);
    int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (n == 0) return spec_fail(s, v, "'%s' has an empty list of values", key);
    if (zip && s->nparams > first && n != s->params[first].nvalues) {
      char msg[160];
      snprintf(msg, sizeof msg,
               "zipped keys need lists of one length: '%%s' has %d values, '%s' %d", n,
               s->params[first].key, s->params[first].nvalues);
      return spec_fail(s, v, msg, key);
    }
    sweep_param *p = new_param(s);
    if (!p || !(p->key = gf_strdup(key)) || !(p->values = gf_calloc((size_t)n, sizeof(char *))))
      return sweep_oom("reading the sweep");
    p->loc = node_loc(k);
    p->axis = zip ? axis : s->naxes++;
    for (int i = 0; i < n; i++) {
      gf_text t = {0};
      node_flow(doc, yaml_document_get_node(doc, v->data.sequence.items.start[i]), &t);
      if (!(p->values[i] = gf_text_take(&t))) return sweep_oom("reading the sweep");
      p->nvalues++;
    }
  }
  if (zip) s->naxes++;
  return GF_OK;
}

static const char *const spec_keys[] = {"workflow", "name", "out",       "jobs",  "set",
                                        "matrix",   "zip",  "resources", "sbatch"};

static gf_status spec_resources(sweep *s, yaml_document_t *doc, yaml_node_t *map) {
  if (map->type != YAML_MAPPING_NODE)
    return spec_fail(s, map, "%s", "resources must be a mapping: {gpus: N, tasks: N, time: T}");
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *k = yaml_document_get_node(doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(doc, pr->value);
    const char *key = plain(k);
    gf_status st;
    if (key && strcmp(key, "gpus") == 0)
      st = spec_int(s, v, "gpus", 0, 1024, &s->gpus);
    else if (key && strcmp(key, "tasks") == 0)
      st = spec_int(s, v, "tasks", 1, 1 << 20, &s->tasks);
    else if (key && strcmp(key, "cpus") == 0)
      st = spec_int(s, v, "cpus", 1, 1 << 16, &s->cpus);
    else if (key && strcmp(key, "time") == 0)
      st = spec_string(s, v, "time", &s->time);
    else
      st = spec_fail(s, k, "unknown key '%s' in resources; expected gpus, tasks, cpus or time",
                     key ? key : "?");
    if (st != GF_OK) return st;
  }
  return GF_OK;
}

static gf_status spec_load(sweep *s, yaml_document_t *doc) {
  yaml_node_t *root = yaml_document_get_root_node(doc);
  gf_status st = GF_OK;
  yaml_node_t *seen[sizeof spec_keys / sizeof *spec_keys] = {0};
  for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
       st == GF_OK && pr < root->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(doc, pr->value);
    const char *key = plain(k);
    int which = -1;
    for (int i = 0; key && i < (int)(sizeof spec_keys / sizeof *spec_keys); i++)
      if (strcmp(key, spec_keys[i]) == 0) which = i;
    if (which < 0)
      return spec_fail(s, k,
                       "unknown key '%s' in the sweep; expected workflow, name, out, jobs, set, "
                       "matrix, zip, resources or sbatch",
                       key ? key : "?");
    if (seen[which]) return spec_fail(s, k, "'%s' is given twice", key);
    seen[which] = v;
    if (which == 0) {
      char *file = NULL;
      st = spec_string(s, v, "workflow", &file);
      if (st != GF_OK) return st;
      const char *slash = strrchr(s->file, '/');
      if (file[0] != '/' && slash) {
        s->workflow = gf_asprintf("%.*s/%s", (int)(slash - s->file), s->file, file);
        free(file);
      } else {
        s->workflow = file;
      }
      if (!s->workflow) return sweep_oom("reading the sweep");
    } else if (which == 1) {
      st = spec_string(s, v, "name", &s->name);
      if (st == GF_OK && strchr(s->name, '/'))
        st = spec_fail(s, v, "%s", "the name must not contain '/'");
    } else if (which == 2) {
      st = spec_string(s, v, "out", &s->out);
    } else if (which == 3) {
      st = spec_int(s, v, "jobs", 1, MAX_JOBS, &s->jobs);
    } else if (which == 4) {
      if (v->type != YAML_MAPPING_NODE)
        return spec_fail(s, v, "%s", "set must be a mapping of KEY: VALUE");
      for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
        yaml_node_t *sk = yaml_document_get_node(doc, q->key);
        if (!plain(sk)) return spec_fail(s, sk, "%s", "a key must be a dotted workflow key");
        gf_text t = {0};
        node_flow(doc, yaml_document_get_node(doc, q->value), &t);
        if ((st = add_set(s, gf_strdup(plain(sk)), gf_text_take(&t))) != GF_OK) return st;
      }
    } else if (which == 5) {
      st = spec_params(s, doc, v, 0);
    } else if (which == 6) {
      if (v->type == YAML_MAPPING_NODE) {
        st = spec_params(s, doc, v, 1);
      } else if (v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *i = v->data.sequence.items.start;
             st == GF_OK && i < v->data.sequence.items.top; i++)
          st = spec_params(s, doc, yaml_document_get_node(doc, *i), 1);
      } else {
        st = spec_fail(s, v, "%s", "zip must be a list of groups {KEY: [values], ...}");
      }
    } else if (which == 7) {
      st = spec_resources(s, doc, v);
    } else if (which == 8) {
      if (v->type != YAML_SEQUENCE_NODE)
        return spec_fail(s, v, "%s", "sbatch must be a list of options, e.g. [--partition=gpu]");
      for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top;
           i++) {
        yaml_node_t *o = yaml_document_get_node(doc, *i);
        const char *opt = plain(o);
        if (!opt || strncmp(opt, "--", 2) != 0 || strpbrk(opt, "\n\r"))
          return spec_fail(s, o, "%s", "an sbatch option is one line starting with --");
        if (GF_GROW(s->sbatch, s->sbatch_cap, s->nsbatch + 1) != GF_OK ||
            !(s->sbatch[s->nsbatch] = gf_strdup(opt)))
          return sweep_oom("reading the sweep");
        s->nsbatch++;
      }
    }
  }
  if (st == GF_OK && !seen[0])
    st = gf_diag_at(&s->spec_diag, node_loc(root), GF_INVALID,
                    "the sweep needs `workflow:`, the workflow file it runs");
  if (st == GF_OK && !seen[5] && !seen[6])
    st = gf_diag_at(&s->spec_diag, node_loc(root), GF_INVALID,
                    "the sweep needs `matrix:` or `zip:`, the keys it sweeps");
  return st;
}

/* Reads FILE: a sweep spec when its top level has `workflow:`; else FILE is
 * the workflow itself and the command line says what to sweep. */
static gf_status read_spec(sweep *s) {
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  char *text = NULL;
  gf_status st = read_text(s->file, MAX_SPEC_BYTES, &text, &diag);
  if (st != GF_OK) return st;
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
  int loaded = yaml_parser_load(&parser, &doc);
  int spec = 0;
  if (loaded) {
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && root->type == YAML_MAPPING_NODE)
      for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
           p++) {
        const char *key = plain(yaml_document_get_node(&doc, p->key));
        if (key && strcmp(key, "workflow") == 0) spec = 1;
      }
  } else if (parser.problem) {
    /* Unreadable YAML: a spec's error is located here, a workflow's by the loader. */
    spec = strstr(text, "workflow:") && !strstr(text, "gflow:");
    if (spec) {
      s->spec_text = text;
      gf_diag_init(&s->spec_diag, s->file, s->spec_text);
      st = gf_diag_at(
          &s->spec_diag,
          (gf_loc){(int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1, 0},
          GF_INVALID, "%s", parser.problem);
    }
  }
  yaml_parser_delete(&parser);
  if (spec && st == GF_OK) {
    s->spec_text = text;
    gf_diag_init(&s->spec_diag, s->file, s->spec_text);
    st = spec_load(s, &doc);
  }
  if (loaded) yaml_document_delete(&doc);
  if (!spec) {
    free(text);
    if (!(s->workflow = gf_strdup(s->file))) st = sweep_oom("reading the sweep");
  }
  return st;
}

/* ---- the command line ------------------------------------------------------------ */

static gf_status cli_param(sweep *s, const char *arg, int zip, int *zip_axis) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg)
    return usage_fail(zip ? "-z needs KEY=V1,V2,..., got '%s'" : "-m needs KEY=V1,V2,..., got '%s'",
                      arg);
  char *key = gf_strndup(arg, (size_t)(eq - arg));
  if (!key) return sweep_oom("reading the command line");
  if (find_param(s, key)) {
    gf_status st = usage_fail("'%s' is swept twice", key);
    free(key);
    return st;
  }
  sweep_param *p = new_param(s);
  if (!p) {
    free(key);
    return sweep_oom("reading the command line");
  }
  p->key = key;
  int empty;
  p->nvalues = split_values(eq + 1, &p->values, &empty);
  p->origin = gf_asprintf("%s %s", zip ? "-z" : "-m", arg);
  p->text = gf_strdup(arg);
  if (!p->nvalues || !p->origin || !p->text) return sweep_oom("reading the command line");
  p->loc = (gf_loc){0, 0, 0};
  if (empty) {
    gf_diag d;
    gf_diag_init(&d, p->origin, p->text);
    return gf_diag_at(&d, (gf_loc){1, (int)(eq - arg) + 2, 0}, GF_USAGE,
                      "'%s' has an empty value in its list", key);
  }
  if (zip) {
    if (*zip_axis < 0) *zip_axis = s->naxes++;
    p->axis = *zip_axis;
    for (int i = 0; i < s->nparams - 1; i++)
      if (s->params[i].axis == p->axis && s->params[i].nvalues != p->nvalues) {
        gf_diag d;
        gf_diag_init(&d, p->origin, p->text);
        return gf_diag_at(&d, (gf_loc){1, 1, 0}, GF_USAGE,
                          "zipped keys need lists of one length: '%s' has %d values, '%s' %d", key,
                          p->nvalues, s->params[i].key, s->params[i].nvalues);
      }
  } else {
    p->axis = s->naxes++;
  }
  return GF_OK;
}

static gf_status parse_count(const char *opt, const char *arg, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(arg, &end, 10);
  if (errno || end == arg || *end || v < lo || v > hi) {
    fprintf(stderr, "gflow: %s takes an integer from %d to %d, not '%s'\n%s", opt, lo, hi, arg,
            usage_sweep);
    return GF_USAGE;
  }
  *out = (int)v;
  return GF_OK;
}

typedef struct cli_sweep {
  const char **m, **z;
  int nm, nz, m_cap, z_cap;
  const char *out, *name, *time;
  int jobs, gpus, tasks, cpus;
} cli_sweep;

static gf_status parse_args(int argc, char **argv, sweep *s, cli_sweep *c) {
  enum {
    OPT_SET = 256,
    OPT_OUT,
    OPT_NAME,
    OPT_PLUGIN,
    OPT_SLURM,
    OPT_DRY,
    OPT_GPUS,
    OPT_TASKS,
    OPT_CPUS,
    OPT_TIME,
    OPT_HELP
  };
  static const struct option options[] = {{"matrix", required_argument, NULL, 'm'},
                                          {"zip", required_argument, NULL, 'z'},
                                          {"jobs", required_argument, NULL, 'j'},
                                          {"set", required_argument, NULL, OPT_SET},
                                          {"out", required_argument, NULL, OPT_OUT},
                                          {"name", required_argument, NULL, OPT_NAME},
                                          {"plugin", required_argument, NULL, OPT_PLUGIN},
                                          {"slurm", no_argument, NULL, OPT_SLURM},
                                          {"dry-run", no_argument, NULL, OPT_DRY},
                                          {"gpus", required_argument, NULL, OPT_GPUS},
                                          {"tasks", required_argument, NULL, OPT_TASKS},
                                          {"cpus", required_argument, NULL, OPT_CPUS},
                                          {"time", required_argument, NULL, OPT_TIME},
                                          {"help", no_argument, NULL, OPT_HELP},
                                          {NULL, 0, NULL, 0}};
  optind = 2;
  opterr = 0;
  int opt;
  gf_status st = GF_OK;
  while (st == GF_OK && (opt = getopt_long(argc, argv, "m:z:j:", options, NULL)) != -1) {
    switch (opt) {
      case OPT_HELP:
        fputs(usage_sweep, stdout);
        exit(0);
      case 'm':
      case 'z':
        if ((opt == 'm' ? GF_GROW(c->m, c->m_cap, c->nm + 1)
                        : GF_GROW(c->z, c->z_cap, c->nz + 1)) != GF_OK)
          return sweep_oom("reading the command line");
        if (opt == 'm')
          c->m[c->nm++] = optarg;
        else
          c->z[c->nz++] = optarg;
        break;
      case 'j':
        st = parse_count("-j", optarg, 1, MAX_JOBS, &c->jobs);
        break;
      case OPT_SET: {
        const char *eq = strchr(optarg, '=');
        if (!eq || eq == optarg) return usage_fail("--set needs KEY=VALUE, got '%s'", optarg);
        st = add_set(s, gf_strndup(optarg, (size_t)(eq - optarg)), gf_strdup(eq + 1));
        break;
      }
      case OPT_OUT:
        c->out = optarg;
        break;
      case OPT_NAME:
        if (!*optarg || strchr(optarg, '/'))
          return usage_fail("--name takes a name without '/', not '%s'", optarg);
        c->name = optarg;
        break;
      case OPT_PLUGIN:
        if (GF_GROW(s->plugins, s->plugins_cap, s->nplugins + 1) != GF_OK)
          return sweep_oom("reading the command line");
        s->plugins[s->nplugins++] = optarg;
        break;
      case OPT_SLURM:
        s->slurm = 1;
        break;
      case OPT_DRY:
        s->dry_run = 1;
        break;
      case OPT_GPUS:
        st = parse_count("--gpus", optarg, 0, 1024, &c->gpus);
        break;
      case OPT_TASKS:
        st = parse_count("--tasks", optarg, 1, 1 << 20, &c->tasks);
        break;
      case OPT_CPUS:
        st = parse_count("--cpus", optarg, 1, 1 << 16, &c->cpus);
        break;
      case OPT_TIME:
        if (!*optarg || strpbrk(optarg, " \t\n\r'\""))
          return usage_fail("--time takes a Slurm time such as 01:30:00, not '%s'", optarg);
        c->time = optarg;
        break;
      default:
        return usage_fail("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (st != GF_OK) return st;
  if (optind >= argc) return usage_fail("%s", "'sweep' needs a SPEC or WORKFLOW file");
  s->file = argv[optind++];
  if (optind < argc) return usage_fail("unexpected argument '%s'", argv[optind]);
  if (s->dry_run && !s->slurm) return usage_fail("%s", "--dry-run goes with --slurm");
  return GF_OK;
}

/* ---- points --------------------------------------------------------------------- */

/* The value index of param `p` at point `i`: the first axis varies slowest. */
static int point_choice(const sweep *s, int i, int p) {
  int axis = s->params[p].axis;
  for (int a = s->naxes - 1; a > axis; a--) {
    int len = 0;
    for (int q = 0; q < s->nparams; q++)
      if (s->params[q].axis == a) len = s->params[q].nvalues;
    i /= len;
  }
  return i % s->params[p].nvalues;
}

static gf_status make_points(sweep *s) {
  int64_t n = 1;
  for (int a = 0; a < s->naxes; a++) {
    for (int q = 0; q < s->nparams; q++)
      if (s->params[q].axis == a) {
        n *= s->params[q].nvalues;
        break;
      }
    if (n > MAX_POINTS) {
      fprintf(stderr, "gflow: the sweep has more than %d points\n", MAX_POINTS);
      return GF_USAGE;
    }
  }
  s->points = gf_calloc((size_t)n, sizeof *s->points);
  if (!s->points) return sweep_oom("listing the points");
  s->npoints = (int)n;
  int width = n > 1000 ? (n > 10000 ? 5 : 4) : 3;
  for (int i = 0; i < s->npoints; i++) {
    gf_text dir = {0}, params = {0};
    gf_text_printf(&dir, "%s/p%0*d", s->out, width, i);
    for (int p = 0; p < s->nparams; p++) {
      const char *v = s->params[p].values[point_choice(s, i, p)];
      if (dir.len < strlen(s->out) + 160) {
        gf_text_printf(&dir, "-%s=", s->params[p].key);
        append_label(&dir, v);
      }
      gf_text_printf(&params, "%s%s=%s", p ? " " : "", s->params[p].key, v);
    }
    s->points[i].dir = gf_text_take(&dir);
    s->points[i].params = gf_text_take(&params);
    if (!s->points[i].dir || !s->points[i].params) return sweep_oom("naming the points");
  }
  return GF_OK;
}

/* The overrides of point i: the fixed ones, then the point's values, then `extra`. */
static gf_override *point_overrides(const sweep *s, int i, const gf_override *extra, int nextra,
                                    int *count) {
  *count = s->nsets + s->nparams + nextra;
  gf_override *o = gf_calloc((size_t)*count + 1, sizeof *o);
  if (!o) return NULL;
  for (int k = 0; k < s->nsets; k++) o[k] = s->sets[k];
  for (int p = 0; p < s->nparams; p++)
    o[s->nsets + p] = (gf_override){s->params[p].key, s->params[p].values[point_choice(s, i, p)]};
  for (int k = 0; k < nextra; k++) o[s->nsets + s->nparams + k] = extra[k];
  return o;
}

/* Loads the workflow with `overrides`; the loader's messages go to *messages. */
static gf_status load_quietly(const sweep *s, const char *path, const gf_override *overrides, int n,
                              gf_workflow **wf, char **messages) {
  size_t size = 0;
  FILE *out = open_memstream(messages, &size);
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  if (out) diag.out = out;
  gf_status st = gf_workflow_load(path, overrides, n, s->registry, NULL, &diag, wf, NULL);
  if (out) fclose(out);
  return st;
}

/* timings.json of a finished run: complete, total_s, gpts_per_s. */
static int read_timings(const char *dir, double *total_ms, double *gpts) {
  char *path = gf_asprintf("%s/timings.json", dir), *text = NULL;
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  FILE *quiet = fopen("/dev/null", "w");
  if (quiet) diag.out = quiet;
  int complete = 0;
  if (path && read_text(path, MAX_SPEC_BYTES, &text, &diag) == GF_OK) {
    complete = strstr(text, "\"complete\": true") != NULL;
    const char *t = strstr(text, "\"total_s\":"), *g = strstr(text, "\"gpts_per_s\":");
    *total_ms = t ? 1e3 * strtod(t + 10, NULL) : 0;
    *gpts = g ? strtod(g + 13, NULL) : 0;
  }
  if (quiet) fclose(quiet);
  free(text);
  free(path);
  return complete;
}

static void report_point(const sweep_point *p, const char *messages) {
  fprintf(stderr, "gflow: sweep: point %s cannot load:\n%s", p->dir, messages ? messages : "");
  char *log = gf_asprintf("%s/gflow.log", p->dir);
  FILE *f = log ? fopen(log, "w") : NULL;
  if (f) {
    fputs(messages ? messages : "", f);
    fclose(f);
  }
  free(log);
}

/* Writes point i's config.yaml (the resolved workflow, hook files made
 * absolute so the file runs from its folder), checks that it loads back to the
 * same workflow, and marks the point skipped when that same file already ran
 * to completion. */
static gf_status generate_point(sweep *s, int i) {
  sweep_point *pt = &s->points[i];
  int n;
  gf_override *o = point_overrides(s, i, NULL, 0, &n);
  if (!o) return sweep_oom("generating a point");
  gf_workflow *wf = NULL;
  char *messages = NULL;
  gf_status st = load_quietly(s, s->workflow, o, n, &wf, &messages);
  gf_override *hooks = NULL;
  char **paths = NULL;
  int nhooks = 0;
  if (st == GF_OK) {
    hooks = gf_calloc((size_t)wf->nhooks + 1, sizeof *hooks);
    paths = gf_calloc((size_t)wf->nhooks * 2 + 1, sizeof *paths);
    if (!hooks || !paths) st = GF_INTERNAL;
    for (int h = 0; st == GF_OK && h < wf->nhooks; h++) {
      char *abs = realpath(wf->hooks[h].path, NULL);
      gf_text v = {0};
      gf_text_json(&v, abs ? abs : wf->hooks[h].path);
      free(abs);
      paths[2 * nhooks] = gf_asprintf("hooks.%s.lua", wf->hooks[h].name);
      paths[2 * nhooks + 1] = gf_text_take(&v);
      if (!paths[2 * nhooks] || !paths[2 * nhooks + 1]) st = GF_INTERNAL;
      hooks[nhooks] = (gf_override){paths[2 * nhooks], paths[2 * nhooks + 1]};
      nhooks++;
    }
    if (st != GF_OK) st = sweep_oom("generating a point");
    if (st == GF_OK && nhooks) {
      free(o);
      free(messages);
      messages = NULL;
      gf_workflow_free(wf);
      wf = NULL;
      o = point_overrides(s, i, hooks, nhooks, &n);
      st = o ? load_quietly(s, s->workflow, o, n, &wf, &messages) : sweep_oom("generating a point");
    }
  }
  char *yaml = NULL, *config = NULL, *old = NULL, *again_messages = NULL;
  if (st == GF_INVALID || st == GF_NOINPUT) {
    gf_diag diag;
    gf_diag_init(&diag, NULL, NULL);
    (void)gf_make_dirs(pt->dir, &diag); /* reported; the point has failed anyway */
    report_point(pt, messages);
    pt->state = PT_FAILED;
    pt->exit_code = (int)st;
    st = GF_OK;
  } else if (st == GF_OK) {
    gf_diag diag;
    gf_diag_init(&diag, NULL, NULL);
    st = gf_make_dirs(pt->dir, &diag);
    yaml = gf_workflow_resolved_yaml(wf);
    config = gf_asprintf("%s/config.yaml", pt->dir);
    if (st == GF_OK && (!yaml || !config)) st = gf_oom(&diag, "generating a point");
    FILE *quiet = st == GF_OK ? fopen("/dev/null", "w") : NULL;
    gf_diag silent;
    gf_diag_init(&silent, NULL, NULL);
    if (quiet) silent.out = quiet;
    if (st == GF_OK && read_text(config, GF_MAX_DOCUMENT_BYTES, &old, &silent) == GF_OK &&
        strcmp(old, yaml) == 0 && read_timings(pt->dir, &pt->total_ms, &pt->gpts)) {
      pt->state = PT_SKIPPED;
    } else if (st == GF_OK) {
      st = gf_write_file_atomic(pt->dir, "config.yaml", yaml, &diag);
      gf_workflow *again = NULL;
      if (st == GF_OK) {
        gf_status loaded = load_quietly(s, config, NULL, 0, &again, &again_messages);
        char *yaml2 = again ? gf_workflow_resolved_yaml(again) : NULL;
        if (loaded != GF_OK || !yaml2 || strcmp(yaml, yaml2) != 0)
          st = gf_diag_error(&diag, GF_INTERNAL,
                             "%s does not load back to the workflow it was written from%s%s",
                             config, again_messages && *again_messages ? ":\n" : "",
                             again_messages ? again_messages : "");
        free(yaml2);
        gf_workflow_free(again);
      }
    }
    if (quiet) fclose(quiet);
  } else if (messages) {
    fputs(messages, stderr);
  }
  for (int k = 0; paths && k < 2 * nhooks; k++) free(paths[k]);
  free(paths);
  free(hooks);
  free(again_messages);
  free(old);
  free(config);
  free(yaml);
  free(messages);
  free(o);
  gf_workflow_free(wf);
  return st;
}

/* An unknown key refuses every value of it: that is the spec's error, at the
 * key, not a failed point. A value only some points refuse fails those points. */
static gf_status check_params(sweep *s) {
  for (int p = 0; p < s->nparams; p++) {
    sweep_param *sp = &s->params[p];
    char *first = NULL;
    int refused = 0;
    gf_status st = GF_OK;
    for (int v = 0; v < sp->nvalues; v++) {
      gf_override *o = gf_calloc((size_t)s->nsets + 1, sizeof *o);
      if (!o) return sweep_oom("checking the sweep");
      for (int k = 0; k < s->nsets; k++) o[k] = s->sets[k];
      o[s->nsets] = (gf_override){sp->key, sp->values[v]};
      gf_workflow *wf = NULL;
      char *messages = NULL;
      st = load_quietly(s, s->workflow, o, s->nsets + 1, &wf, &messages);
      gf_workflow_free(wf);
      free(o);
      if (st == GF_INVALID) refused++;
      if (st == GF_INVALID && !first) {
        first = messages;
        messages = NULL;
      }
      free(messages);
      if (st != GF_OK && st != GF_INVALID) break;
    }
    if (st != GF_OK && st != GF_INVALID) {
      free(first);
      return st; /* the workflow itself: unreadable, or out of memory */
    }
    if (refused == sp->nvalues) {
      if (sp->loc.line)
        gf_diag_at(&s->spec_diag, sp->loc, GF_INVALID,
                   "the workflow refuses every value of '%s'; with the first:", sp->key);
      else {
        gf_diag d;
        gf_diag_init(&d, sp->origin, sp->text);
        gf_diag_at(&d, (gf_loc){1, 1, 0}, GF_INVALID,
                   "the workflow refuses every value of '%s'; with the first:", sp->key);
      }
      fputs(first ? first : "", stderr);
      free(first);
      return GF_INVALID;
    }
    free(first);
  }
  return GF_OK;
}

/* ---- running here ------------------------------------------------------------------ */

static pid_t start_point(const sweep *s, sweep_point *p) {
  char *log = gf_asprintf("%s/gflow.log", p->dir);
  char *config = gf_asprintf("%s/config.yaml", p->dir);
  const char **args = gf_calloc((size_t)(6 + 2 * s->nplugins), sizeof *args);
  pid_t pid = -1;
  if (log && config && args) {
    int n = 0;
    args[n++] = s->exe;
    args[n++] = "run";
    args[n++] = config;
    args[n++] = "--out";
    args[n++] = p->dir;
    for (int k = 0; k < s->nplugins; k++) {
      args[n++] = "--plugin";
      args[n++] = s->plugins[k];
    }
    gf_remove_file(p->dir, "timings.json"); /* a stale one must not pass for this run's */
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
      FILE *f = freopen(log, "w", stdout);
      if (f) dup2(fileno(stdout), 2);
      execv(s->exe, (char *const *)args);
      _exit(127);
    }
  }
  free(args);
  free(config);
  free(log);
  return pid;
}

static void finish_point(sweep_point *p, int status) {
  p->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  int complete = read_timings(p->dir, &p->total_ms, &p->gpts);
  p->state = p->exit_code == 0 && complete ? PT_OK : PT_FAILED;
  if (p->state == PT_FAILED && p->exit_code == 0) p->exit_code = GF_INTERNAL;
}

static const char *state_name(const sweep_point *p, char *buf, size_t size) {
  switch (p->state) {
    case PT_OK:
      return "ok";
    case PT_SKIPPED:
      return "skipped";
    case PT_PENDING:
      return "not run";
    case PT_FAILED:
      snprintf(buf, size, "failed (%d)", p->exit_code);
      return buf;
  }
  return "?";
}

static gf_status run_here(sweep *s, int *order, int npending) {
  struct sigaction action, old_int, old_term;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_sweep_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  int next = 0, running = 0, done = 0;
  gf_status st = GF_OK;
  while ((next < npending && !sweep_stop) || running > 0) {
    while (running < s->jobs && next < npending && !sweep_stop) {
      sweep_point *p = &s->points[order[next++]];
      p->pid = start_point(s, p);
      if (p->pid < 0) {
        fprintf(stderr, "gflow: sweep: cannot start %s: %s\n", p->dir, strerror(errno));
        p->state = PT_FAILED;
        p->exit_code = GF_INTERNAL;
        done++;
        continue;
      }
      fprintf(stderr, "gflow: sweep: [%d/%d] running %s\n", next, npending, p->dir);
      running++;
    }
    if (running == 0) break;
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < npending; i++) {
      sweep_point *p = &s->points[order[i]];
      if (p->pid != pid) continue;
      p->pid = 0;
      running--;
      done++;
      finish_point(p, status);
      char buf[32];
      if (p->state == PT_OK)
        fprintf(stderr, "gflow: sweep: [%d/%d done] %s ok, %.1f ms\n", done, npending, p->dir,
                p->total_ms);
      else
        fprintf(stderr, "gflow: sweep: [%d/%d done] %s %s; see %s/gflow.log\n", done, npending,
                p->dir, state_name(p, buf, sizeof buf), p->dir);
    }
  }
  if (sweep_stop) {
    fprintf(stderr, "gflow: sweep: stopped by %s; %d points not started\n",
            sweep_stop == SIGINT ? "SIGINT" : "SIGTERM", npending - next);
    st = sweep_stop == SIGINT ? GF_INTERRUPTED : GF_TERMINATED;
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  return st;
}

static void print_table(const sweep *s) {
  int width = 10;
  for (int i = 0; i < s->npoints; i++) {
    int len = (int)strlen(s->points[i].params);
    if (len > width) width = len;
  }
  printf("%-6s  %-*s  %-12s  %10s  %9s\n", "point", width, "parameters", "status", "total ms",
         "GPts/s");
  for (int i = 0; i < s->npoints; i++) {
    const sweep_point *p = &s->points[i];
    char buf[32], id[16];
    snprintf(id, sizeof id, "p%03d", i);
    printf("%-6s  %-*s  %-12s", id, width, p->params, state_name(p, buf, sizeof buf));
    if (p->state == PT_OK || p->state == PT_SKIPPED)
      printf("  %10.3f  %9.4g\n", p->total_ms, p->gpts);
    else
      printf("  %10s  %9s\n", "-", "-");
  }
}

/* ---- Slurm ---------------------------------------------------------------------- */

/* A shell word in single quotes. */
static void sh_quote(gf_text *t, const char *s) {
  gf_text_puts(t, "'");
  for (; *s; s++) {
    if (*s == '\'')
      gf_text_puts(t, "'\\''");
    else
      gf_text_append(t, s, 1);
  }
  gf_text_puts(t, "'");
}

static char *sbatch_script(const sweep *s, const char *out, int npending) {
  gf_text t = {0};
  int throttle = s->jobs < npending ? s->jobs : npending;
  gf_text_printf(&t,
                 "#!/bin/bash\n"
                 "# The sweep '%s' as a Slurm job array, written by `gflow sweep --slurm`: array\n"
                 "# task K runs the point on line K + 1 of points.txt (the points not yet\n"
                 "# complete when it was written). Submit again with `sbatch %s/sweep.sbatch`, or\n"
                 "# run the same `gflow sweep` again, which lists only what is left.\n",
                 s->name, out);
  gf_text_printf(&t, "#SBATCH --job-name=gflow-%s\n", s->name);
  gf_text_printf(&t, "#SBATCH --array=0-%d%%%d\n", npending - 1, throttle);
  gf_text_printf(&t, "#SBATCH --output=%s/slurm-%%A_%%a.out\n", out);
  gf_text_printf(&t, "#SBATCH --ntasks=%d\n", s->tasks);
  if (s->cpus) gf_text_printf(&t, "#SBATCH --cpus-per-task=%d\n", s->cpus);
  if (s->gpus) gf_text_printf(&t, "#SBATCH --gpus-per-task=%d\n", s->gpus);
  if (s->time) gf_text_printf(&t, "#SBATCH --time=%s\n", s->time);
  for (int k = 0; k < s->nsbatch; k++) gf_text_printf(&t, "#SBATCH %s\n", s->sbatch[k]);
  gf_text_puts(&t, "set -euo pipefail\ngflow=");
  sh_quote(&t, s->exe);
  gf_text_puts(&t, "\npoints=");
  gf_text_printf(&t, "'%s/points.txt'\n", out); /* out has no quote: checked by the caller */
  gf_text_puts(&t,
               "point=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" \"$points\")\n"
               "echo \"gflow sweep: array task $SLURM_ARRAY_TASK_ID on $(hostname): $point\"\n"
               "rm -f \"$point/timings.json\"\n");
  gf_text_puts(&t, "plugins=(");
  for (int k = 0; k < s->nplugins; k++) {
    char *abs = realpath(s->plugins[k], NULL);
    gf_text_puts(&t, " --plugin ");
    sh_quote(&t, abs ? abs : s->plugins[k]);
    free(abs);
  }
  gf_text_puts(&t, " )\n");
  if (s->tasks > 1)
    gf_text_puts(&t,
                 "# One rank per task: each picks its GPU by SLURM_LOCALID. gflow has no MPI yet\n"
                 "# (every rank would run the whole problem); this is the line for when it does.\n"
                 "exec srun --mpi=pmix \"$gflow\" run \"$point/config.yaml\" --out \"$point\" "
                 "\"${plugins[@]}\" >\"$point/gflow.log\" 2>&1\n");
  else
    gf_text_puts(&t,
                 "exec \"$gflow\" run \"$point/config.yaml\" --out \"$point\" \"${plugins[@]}\" "
                 ">\"$point/gflow.log\" 2>&1\n");
  return gf_text_take(&t);
}

/* sbatch --parsable SCRIPT; the job id into `id`. */
static gf_status submit(const char *script, char *id, size_t size) {
  int fds[2];
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  if (pipe(fds) != 0) return gf_diag_error(&diag, GF_INTERNAL, "pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execlp("sbatch", "sbatch", "--parsable", script, (char *)NULL);
    fprintf(stderr, "gflow: cannot run sbatch: %s\n", strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return gf_diag_error(&diag, GF_INTERNAL, "cannot start sbatch: %s", strerror(errno));
  }
  size_t len = 0;
  ssize_t got;
  while ((got = read(fds[0], id + len, size - 1 - len)) > 0 && len + (size_t)got < size - 1)
    len += (size_t)got;
  if (got > 0) len += (size_t)got;
  id[len] = '\0';
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  id[strcspn(id, ";\n")] = '\0';
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !*id)
    return gf_diag_error(&diag, GF_INTERNAL, "sbatch %s failed", script);
  return GF_OK;
}

static gf_status run_slurm(sweep *s, const int *order, int npending) {
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  char *out = realpath(s->out, NULL);
  if (!out) return gf_diag_error(&diag, GF_CANTCREATE, "%s: %s", s->out, strerror(errno));
  if (strchr(out, '\'') || strchr(out, '\n')) {
    free(out);
    return gf_diag_error(&diag, GF_USAGE, "the sweep's folder may not contain a quote or newline");
  }
  gf_text list = {0};
  gf_text_puts(&list, "");
  for (int k = 0; k < npending; k++) {
    char *abs = realpath(s->points[order[k]].dir, NULL);
    if (!abs)
      gf_text_puts(&list, s->points[order[k]].dir);
    else
      gf_text_puts(&list, abs);
    gf_text_puts(&list, "\n");
    free(abs);
  }
  char *points = gf_text_take(&list);
  char *script = sbatch_script(s, out, npending);
  char *path = gf_asprintf("%s/sweep.sbatch", out);
  gf_status st = points && script && path ? GF_OK : gf_oom(&diag, "writing the batch script");
  if (st == GF_OK) st = gf_write_file_atomic(out, "points.txt", points, &diag);
  if (st == GF_OK) st = gf_write_file_atomic(out, "sweep.sbatch", script, &diag);
  if (st == GF_OK && chmod(path, 0755) != 0)
    st = gf_diag_error(&diag, GF_CANTCREATE, "chmod %s: %s", path, strerror(errno));
  if (st == GF_OK && s->dry_run) {
    fprintf(stderr,
            "gflow: sweep %s: %d of %d points to run; wrote %s and %s/points.txt (--dry-run: not "
            "submitted; submit with: sbatch %s)\n",
            s->name, npending, s->npoints, path, out, path);
    printf("%s\n", path);
  } else if (st == GF_OK) {
    char id[128];
    st = submit(path, id, sizeof id);
    if (st == GF_OK) {
      fprintf(stderr,
              "gflow: sweep %s: submitted job array %s: %d of %d points, at most %d at a time "
              "(%s); when it ends, run the same `gflow sweep` without --slurm for the table\n",
              s->name, id, npending, s->npoints, s->jobs < npending ? s->jobs : npending, path);
      printf("%s\n", id);
    }
  }
  free(path);
  free(script);
  free(points);
  free(out);
  return st;
}

/* ---- the command ----------------------------------------------------------------- */

static gf_status apply_cli(sweep *s, const cli_sweep *c) {
  int zip_axis = -1;
  gf_status st = GF_OK;
  for (int k = 0; st == GF_OK && k < c->nm; k++) st = cli_param(s, c->m[k], 0, &zip_axis);
  for (int k = 0; st == GF_OK && k < c->nz; k++) st = cli_param(s, c->z[k], 1, &zip_axis);
  if (st != GF_OK) return st;
  if (s->nparams == 0)
    return usage_fail("%s", "nothing to sweep: give -m KEY=V1,V2 or a spec file");
  if (c->jobs) s->jobs = c->jobs;
  if (!s->jobs) s->jobs = 1;
  if (c->gpus >= 0) s->gpus = c->gpus;
  if (c->tasks) s->tasks = c->tasks;
  if (!s->tasks) s->tasks = 1;
  if (c->cpus) s->cpus = c->cpus;
  if (c->time) {
    free(s->time);
    if (!(s->time = gf_strdup(c->time))) return sweep_oom("reading the command line");
  }
  if (s->time && strpbrk(s->time, " \t\n\r'\""))
    return usage_fail("the time '%s' is not a Slurm time", s->time);
  if (c->name) {
    free(s->name);
    if (!(s->name = gf_strdup(c->name))) return sweep_oom("reading the command line");
  }
  if (!s->name) {
    const char *base = strrchr(s->file, '/');
    base = base ? base + 1 : s->file;
    size_t len = strcspn(base, ".");
    if (!(s->name = gf_strndup(base, len ? len : strlen(base))))
      return sweep_oom("reading the command line");
  }
  if (c->out) {
    free(s->out);
    s->out = NULL;
    if (!(s->out = gf_strdup(c->out))) return sweep_oom("reading the command line");
  }
  if (!s->out && !(s->out = gf_asprintf("sweeps/%s", s->name)))
    return sweep_oom("reading the command line");
  size_t len = strlen(s->out);
  while (len > 1 && s->out[len - 1] == '/') s->out[--len] = '\0';
  return GF_OK;
}

static void sweep_free(sweep *s) {
  for (int p = 0; p < s->nparams; p++) {
    for (int v = 0; v < s->params[p].nvalues; v++) free(s->params[p].values[v]);
    free(s->params[p].values);
    free(s->params[p].key);
    free(s->params[p].origin);
    free(s->params[p].text);
  }
  free(s->params);
  for (int k = 0; k < s->nsets; k++) {
    free((char *)s->sets[k].key);
    free((char *)s->sets[k].value);
  }
  free(s->sets);
  for (int k = 0; k < s->nsbatch; k++) free(s->sbatch[k]);
  free(s->sbatch);
  for (int i = 0; i < s->npoints; i++) {
    free(s->points[i].dir);
    free(s->points[i].params);
  }
  free(s->points);
  free(s->plugins);
  free(s->time);
  free(s->workflow);
  free(s->name);
  free(s->out);
  free(s->spec_text);
  gf_registry_free(s->registry);
}

static gf_status sweep_command(sweep *s, int argc, char **argv) {
  cli_sweep c = {.gpus = -1};
  gf_status st = parse_args(argc, argv, s, &c);
  ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
  if (st == GF_OK && n <= 0) {
    fprintf(stderr, "gflow: cannot find the gflow binary (/proc/self/exe): %s\n", strerror(errno));
    st = GF_INTERNAL;
  }
  if (st == GF_OK) st = read_spec(s);
  if (st == GF_OK) st = apply_cli(s, &c);
  free(c.m);
  free(c.z);
  if (st == GF_OK) {
    gf_diag diag;
    gf_diag_init(&diag, NULL, NULL);
    st = gf_registry_open(s->plugins, s->nplugins, &diag, &s->registry);
  }
  if (st == GF_OK) st = check_params(s);
  if (st == GF_OK) st = make_points(s);
  if (st == GF_OK) {
    gf_diag diag;
    gf_diag_init(&diag, NULL, NULL);
    st = gf_make_dirs(s->out, &diag);
  }
  for (int i = 0; st == GF_OK && i < s->npoints; i++) st = generate_point(s, i);
  if (st != GF_OK) return st;
  int *order = gf_calloc((size_t)s->npoints + 1, sizeof *order);
  if (!order) return sweep_oom("running the sweep");
  int npending = 0, skipped = 0;
  for (int i = 0; i < s->npoints; i++) {
    if (s->points[i].state == PT_PENDING) order[npending++] = i;
    if (s->points[i].state == PT_SKIPPED) skipped++;
  }
  fprintf(stderr, "gflow: sweep %s: %d points in %s/: %d to run, %d complete (skipped)%s\n",
          s->name, s->npoints, s->out, npending, skipped,
          npending < s->npoints - skipped ? ", some refused (see above)" : "");
  if (s->slurm) {
    if (npending)
      st = run_slurm(s, order, npending);
    else
      fprintf(stderr, "gflow: sweep %s: nothing to submit\n", s->name);
    if (st == GF_OK && !npending) print_table(s);
  } else {
    st = run_here(s, order, npending);
    print_table(s);
  }
  free(order);
  int ok = 0, failed = 0, first_failure = 0;
  for (int i = 0; i < s->npoints; i++) {
    if (s->points[i].state == PT_OK) ok++;
    if (s->points[i].state == PT_FAILED) {
      if (!failed) first_failure = s->points[i].exit_code;
      failed++;
    }
  }
  if (!s->slurm || !npending)
    fprintf(stderr, "gflow: sweep %s: %d ok, %d skipped, %d failed, %d not run\n", s->name, ok,
            skipped, failed, s->npoints - ok - skipped - failed);
  if (st == GF_OK && failed) st = (gf_status)first_failure;
  return st;
}

int gf_sweep_main(int argc, char **argv) {
  sweep s;
  memset(&s, 0, sizeof s);
  gf_status st = sweep_command(&s, argc, argv);
  sweep_free(&s);
  return (int)st;
}
