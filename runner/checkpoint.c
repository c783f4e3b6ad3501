/* checkpoint.c - the checkpoint format: writing it, reading it back, and a
 * run continued from it (checkpoint.h). */
#include "checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text.h"

#define DIR_NAME "checkpoint"
#define META_NAME "checkpoint.txt"
#define WORKFLOW_NAME "workflow.yaml"
#define HOOKS_NAME "hooks.lua"
#define MAGIC "GFLOWCKP"
#define CHUNK_BYTES ((size_t)64 << 20) /* host buffer a field passes through */

/* One output file of checkpoint.txt. */
typedef struct ck_output {
  char *name;
  int64_t planes;
  uint8_t *written; /* a bit per plane, as the writer keeps it */
} ck_output;

struct gf_checkpoint {
  char *dir; /* OUTDIR/checkpoint */
  int64_t step;
  int complete;
  int ranks;
  int hooks_saved;     /* step-N/hooks.lua holds their state */
  uint64_t hooks_hash; /* of hooks.lua */
  ck_output *outputs;
  int noutputs;
};

/* ---- small helpers ------------------------------------------------------------ */

/* A 64-bit FNV-1a-style hash over words, then bytes; `h` carries over between chunks
 * whose sizes are multiples of 8. */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, sizeof w);
    h = (h ^ w) * UINT64_C(0x100000001b3);
    h ^= h >> 32;
  }
  for (; i < n; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
  return h;
}
#define HASH_SEED UINT64_C(0xcbf29ce484222325)

static uint64_t hash_text(const char *text) {
  return hash_bytes(HASH_SEED, text, strlen(text));
}

/* The whole of a small file, NUL-terminated; NULL with errno set. */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  gf_text t = {0};
  gf_text_puts(&t, "");
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) gf_text_append(&t, buf, got);
  int failed = ferror(f);
  fclose(f);
  char *text = gf_text_take(&t);
  if (failed || !text) {
    free(text);
    errno = failed ? EIO : ENOMEM;
    return NULL;
  }
  return text;
}

static int write_all(int fd, const void *data, size_t bytes) {
  const char *p = data;
  while (bytes > 0) {
    ssize_t n = write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return -1;
    }
    p += n;
    bytes -= (size_t)n;
  }
  return 0;
}

/* 0, or -1 at end of file or on an error (errno 0: the file ended early). */
static int read_all(int fd, void *data, size_t bytes) {
  char *p = data;
  while (bytes > 0) {
    ssize_t n = read(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = 0;
      return -1;
    }
    p += n;
    bytes -= (size_t)n;
  }
  return 0;
}

/* Makes the renames inside `dir` durable. */
static void sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

/* Removes DIR/NAME, a folder of plain files. */
static void remove_folder(const char *dir, const char *name) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return;
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char file[PATH_MAX];
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
        snprintf(file, sizeof file, "%s/%s", path, e->d_name) < (int)sizeof file)
      unlink(file);
  }
  closedir(d);
  rmdir(path);
}

/* Removes every step-* folder of `dir` but `keep` (NULL: all). */
static void remove_steps(const char *dir, const char *keep) {
  DIR *d = opendir(dir);
  if (!d) return;
  char names[64][64];
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && count < 64)
    if (strncmp(e->d_name, "step-", 5) == 0 && strlen(e->d_name) < sizeof names[0] &&
        (!keep || strcmp(e->d_name, keep) != 0))
      snprintf(names[count++], sizeof names[0], "%s", e->d_name);
  closedir(d);
  for (int i = 0; i < count; i++) remove_folder(dir, names[i]);
}

static char *checkpoint_dir(const char *out_dir) {
  return gf_asprintf("%s/" DIR_NAME, out_dir);
}

static void step_folder(char *buf, size_t size, int64_t step) {
  snprintf(buf, size, "step-%" PRId64, step);
}

static void rank_file(char *buf, size_t size, int rank) {
  snprintf(buf, size, "rank-%05d.bin", rank);
}

/* ---- the field data: one rank's block ----------------------------------------- */

typedef struct rank_header {
  char magic[8];
  uint32_t format, rank;
  int64_t step;
  uint32_t instances, reserved;
} rank_header;

typedef struct instance_header {
  uint32_t field, instance;
  uint64_t bytes;
} instance_header;

/* Moves every instance of every field between the backend and the rank file
 * `path`: `save` 1 writes it (temporary, synced, renamed), 0 reads it back
 * into the instances. The one place that touches field data: it knows an
 * instance only as gf_memory_instance() and field->bytes, so a rank's block
 * under MPI goes through it unchanged. Each instance passes through one
 * pinned host buffer of at most CHUNK_BYTES, on a stream of its own. */
static gf_status move_fields(const gf_checkpoint_run *run, const char *path, int64_t step, int save,
                             gf_diag *diag) {
  const gf_workflow *wf = run->wf;
  gf_backend *b = run->backend;
  size_t chunk = 0;
  uint32_t instances = 0;
  for (int f = 0; f < wf->nfields; f++) {
    if (wf->fields[f].bytes > chunk) chunk = wf->fields[f].bytes;
    instances += wf->fields[f].scratch ? 0 : (uint32_t)wf->fields[f].ring; /* scratch: none kept */
  }
  if (chunk > CHUNK_BYTES) chunk = CHUNK_BYTES;
  chunk = (chunk + 7) & ~(size_t)7;
  char *temp = save ? gf_asprintf("%s.partial-%ld", path, (long)getpid()) : NULL;
  if (save && !temp) return gf_oom(diag, "writing the checkpoint");
  const char *file = save ? temp : path;
  gf_stream *stream = NULL;
  void *host = NULL;
  gf_status st = GF_OK;
  int fd = save ? open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    st = gf_diag_error(diag, save ? GF_CANTCREATE : GF_NOINPUT, "cannot %s %s: %s",
                       save ? "create" : "open", file, strerror(errno));
    free(temp);
    return st;
  }
  if (b->ops->stream_create(b, GF_STREAM_NORMAL, &stream) != GF_OK ||
      b->ops->alloc(b, GF_SPACE_PINNED, chunk ? chunk : 8, NULL, &host) != GF_OK)
    st = gf_diag_error(diag, GF_INTERNAL, "checkpoint: %s", b->error);

  rank_header head = {.format = GF_CHECKPOINT_FORMAT,
                      .rank = (uint32_t)run->rank,
                      .step = step,
                      .instances = instances};
  memcpy(head.magic, MAGIC, sizeof head.magic);
  const char *corrupt = NULL; /* reading: what does not match */
  int werr = 0;               /* writing: the errno of a write that failed */
  char why[160] = "";
  if (st == GF_OK && save && write_all(fd, &head, sizeof head) != 0) {
    werr = errno;
  } else if (st == GF_OK && !save) {
    rank_header got;
    if (read_all(fd, &got, sizeof got) != 0 || memcmp(got.magic, MAGIC, sizeof got.magic) != 0)
      corrupt = "it is not a gflow checkpoint";
    else if (got.format != head.format || got.rank != head.rank || got.step != head.step ||
             got.instances != head.instances)
      corrupt = "its header does not match checkpoint.txt";
  }
  for (int f = 0; f < wf->nfields && st == GF_OK && !corrupt && !werr; f++) {
    const gf_field *field = &wf->fields[f];
    for (int k = 0; k < field->ring && !field->scratch && st == GF_OK && !corrupt && !werr; k++) {
      unsigned char *inst = gf_memory_instance(run->memory, f, k);
      instance_header ih = {(uint32_t)f, (uint32_t)k, field->bytes};
      if (save && write_all(fd, &ih, sizeof ih) != 0) {
        werr = errno;
        break;
      }
      if (!save) {
        instance_header got;
        if (read_all(fd, &got, sizeof got) != 0 || got.field != ih.field ||
            got.instance != ih.instance || got.bytes != ih.bytes) {
          snprintf(why, sizeof why, "field '%s' instance %d is not where it should be", field->name,
                   k);
          corrupt = why;
          break;
        }
      }
      uint64_t h = HASH_SEED;
      for (size_t at = 0; at < field->bytes && st == GF_OK; at += chunk) {
        size_t n = field->bytes - at < chunk ? field->bytes - at : chunk;
        if (save) {
          if (b->ops->copy_async(b, stream, host, inst + at, n, (gf_tag){-1, step, -1}) != GF_OK ||
              b->ops->stream_synchronize(b, stream) != GF_OK)
            st = gf_diag_error(diag, GF_INTERNAL, "checkpoint: reading field '%s': %s", field->name,
                               b->error);
          else if (write_all(fd, host, n) != 0)
            werr = errno;
          if (werr) break;
        } else {
          if (read_all(fd, host, n) != 0) {
            snprintf(why, sizeof why, "it ends inside field '%s' instance %d", field->name, k);
            corrupt = why;
            break;
          }
          if (b->ops->copy_async(b, stream, inst + at, host, n, (gf_tag){-1, step, -1}) != GF_OK ||
              b->ops->stream_synchronize(b, stream) != GF_OK)
            st = gf_diag_error(diag, GF_INTERNAL, "restart: writing field '%s': %s", field->name,
                               b->error);
        }
        h = hash_bytes(h, host, n);
      }
      if (st != GF_OK || corrupt || werr) break;
      uint64_t stored = h;
      if (save && write_all(fd, &stored, sizeof stored) != 0) werr = errno;
      if (!save && (read_all(fd, &stored, sizeof stored) != 0 || stored != h)) {
        snprintf(why, sizeof why, "field '%s' instance %d does not match its checksum", field->name,
                 k);
        corrupt = why;
      }
    }
  }
  if (st == GF_OK && corrupt)
    st = gf_diag_error(diag, GF_NOINPUT, "the checkpoint's %s is corrupt: %s", path, corrupt);
  if (st == GF_OK && save && (werr || fsync(fd) != 0))
    st = gf_diag_error(diag, GF_IOERR, "cannot write %s: %s", file, strerror(werr ? werr : errno));
  if (close(fd) != 0 && st == GF_OK && save)
    st = gf_diag_error(diag, GF_IOERR, "cannot write %s: %s", file, strerror(errno));
  if (st == GF_OK && save && rename(temp, path) != 0)
    st = gf_diag_error(diag, GF_IOERR, "cannot rename %s to %s: %s", temp, path, strerror(errno));
  if (st != GF_OK && save) unlink(temp);
  if (host) b->ops->free(b, GF_SPACE_PINNED, host, NULL);
  if (stream) b->ops->stream_destroy(b, stream);
  free(temp);
  return st;
}

/* ---- checkpoint.txt ----------------------------------------------------------- */

/* The checksum of each distinct hook file, "HASH PATH" lines; NULL with a
 * message when one cannot be read. */
static char *hook_file_lines(const gf_workflow *wf, gf_diag *diag, gf_status *st) {
  gf_text t = {0};
  gf_text_puts(&t, "");
  for (int h = 0; h < wf->nhooks; h++) {
    int seen = 0;
    for (int g = 0; g < h && !seen; g++) seen = strcmp(wf->hooks[g].path, wf->hooks[h].path) == 0;
    if (seen) continue;
    char *text = read_text(wf->hooks[h].path);
    if (!text) {
      *st = gf_diag_error(diag, GF_NOINPUT, "cannot read hook file %s: %s", wf->hooks[h].path,
                          strerror(errno));
      gf_text_free(&t);
      return NULL;
    }
    char *path = realpath(wf->hooks[h].path, NULL); /* the same from any folder */
    gf_text_printf(&t, "hook_file %016" PRIx64 " %s\n", hash_text(text),
                   path ? path : wf->hooks[h].path);
    free(path);
    free(text);
  }
  char *lines = gf_text_take(&t);
  if (!lines) *st = gf_oom(diag, "checksumming the hook files");
  return lines;
}

/* Planes written as ranges, "2-56,60-70", or "-". */
static void append_planes(gf_text *t, const uint8_t *written, int64_t planes) {
  int any = 0;
  for (int64_t p = 0; p < planes;) {
    if (!((written[p >> 3] >> (p & 7)) & 1)) {
      p++;
      continue;
    }
    int64_t q = p;
    while (q + 1 < planes && ((written[(q + 1) >> 3] >> ((q + 1) & 7)) & 1)) q++;
    gf_text_printf(t, "%s%" PRId64 "-%" PRId64, any ? "," : "", p, q);
    any = 1;
    p = q + 1;
  }
  if (!any) gf_text_puts(t, "-");
}

/* checkpoint.txt's text. `hooks` is "none", "saved HASH" or "unsaved". */
static char *meta_text(const gf_checkpoint_run *run, int64_t step, int complete,
                       const char *workflow_yaml, const char *hook_files, const char *hooks) {
  const gf_workflow *wf = run->wf;
  gf_text t = {0};
  char *path = realpath(wf->path, NULL);
  gf_text_printf(&t,
                 "gflow-checkpoint %d\ngflow %s\nstep %" PRId64 "\nsteps %" PRId64
                 "\nranks %d\ncomplete %d\nworkflow_file %s\n",
                 GF_CHECKPOINT_FORMAT, GFLOW_VERSION, step, wf->steps, run->nranks, complete,
                 path ? path : wf->path);
  free(path);
  for (int i = 0; i < run->noverrides; i++)
    gf_text_printf(&t, "set %s=%s\n", run->overrides[i].key, run->overrides[i].value);
  gf_text_printf(&t, "workflow_hash %016" PRIx64 "\n%shooks %s\n", hash_text(workflow_yaml),
                 hook_files, hooks);
  for (int f = 0; f < wf->nfields; f++)
    gf_text_printf(&t, "field %s %s %d %zu\n", wf->fields[f].name,
                   gf_dtype_name(wf->fields[f].dtype), wf->fields[f].ring, wf->fields[f].bytes);
  for (int i = 0; i < wf->nfiles; i++) {
    const char *temp;
    const uint8_t *written;
    gf_writer_file_state(run->writer, i, &temp, &written);
    gf_text_printf(&t, "output %" PRId64 " ", wf->files[i].planes);
    append_planes(&t, written, wf->files[i].planes);
    gf_text_printf(&t, " %s\n", wf->files[i].name);
  }
  if (t.data) gf_text_printf(&t, "checksum %016" PRIx64 "\n", hash_text(t.data));
  return gf_text_take(&t);
}

/* The line after `line`, NULL after the last. */
static const char *next_line(const char *line) {
  const char *end = strchr(line, '\n');
  return end ? end + 1 : NULL;
}

/* The line of `text` starting with "KEY ", its value up to the end of the
 * line copied into `value`; NULL when absent. */
static const char *meta_get(const char *text, const char *key, char *value, size_t size) {
  size_t klen = strlen(key);
  for (const char *line = text; line && *line; line = next_line(line))
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
      const char *v = line + klen + 1;
      size_t len = strcspn(v, "\n");
      snprintf(value, size, "%.*s", (int)len, v);
      return value;
    }
  return NULL;
}

/* Checks the final `checksum` line against the text above it. */
static int meta_intact(char *text) {
  char *last = strstr(text, "checksum ");
  while (last && strstr(last + 1, "\nchecksum ")) last = strstr(last + 1, "\nchecksum ") + 1;
  if (!last || (last != text && last[-1] != '\n')) return 0;
  char saved = *last;
  *last = '\0';
  uint64_t want = hash_text(text);
  *last = saved;
  char *end;
  uint64_t got = strtoull(last + 9, &end, 16);
  return got == want && *end == '\n' && end[1] == '\0';
}

/* ---- reading a checkpoint ------------------------------------------------------- */

void gf_checkpoint_free(gf_checkpoint *c) {
  if (!c) return;
  for (int i = 0; i < c->noutputs; i++) {
    free(c->outputs[i].name);
    free(c->outputs[i].written);
  }
  free(c->outputs);
  free(c->dir);
  free(c);
}

int64_t gf_checkpoint_step(const gf_checkpoint *c) {
  return c->step;
}

int gf_checkpoint_complete(const gf_checkpoint *c) {
  return c->complete;
}

/* Reads and checks checkpoint.txt: its text in *text (NULL, GF_OK: none). */
static gf_status read_meta(const char *dir, char **text, gf_diag *diag) {
  char *path = gf_asprintf("%s/" META_NAME, dir);
  if (!path) return gf_oom(diag, "reading the checkpoint");
  *text = read_text(path);
  gf_status st = GF_OK;
  char value[64];
  if (!*text && errno != ENOENT)
    st = gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", path, strerror(errno));
  else if (*text && !meta_intact(*text))
    st = gf_diag_error(diag, GF_NOINPUT,
                       "%s is corrupt (its checksum does not match); remove %s to start afresh",
                       path, dir);
  else if (*text && (!meta_get(*text, "gflow-checkpoint", value, sizeof value) ||
                     atoi(value) != GF_CHECKPOINT_FORMAT))
    st = gf_diag_error(diag, GF_NOINPUT,
                       "%s is of checkpoint format %s; this gflow reads format %d", path,
                       meta_get(*text, "gflow-checkpoint", value, sizeof value) ? value : "unknown",
                       GF_CHECKPOINT_FORMAT);
  if (st != GF_OK) {
    free(*text);
    *text = NULL;
  }
  free(path);
  return st;
}

/* The first line where `a` (this run's) and `b` (the checkpoint's) differ. */
static gf_status workflow_differs(const char *a, const char *b, const char *path, gf_diag *diag) {
  int line = 1;
  const char *la = a, *lb = b; /* the current line's start in each */
  for (; *a && *a == *b; a++, b++)
    if (*a == '\n') {
      line++;
      la = a + 1;
      lb = b + 1;
    }
  int na = (int)strcspn(la, "\n"), nb = (int)strcspn(lb, "\n");
  return gf_diag_error(diag, GF_INVALID,
                       "the workflow differs from the one checkpointed (%s): resolved line %d is "
                       "'%.*s' here and '%.*s' there; restart with the same file and --set "
                       "values, or run afresh without --restart",
                       path, line, na > 120 ? 120 : na, la, nb > 120 ? 120 : nb, lb);
}

/* Each "output PLANES RANGES NAME" line into c->outputs. */
static gf_status parse_outputs(gf_checkpoint *c, const char *text, const gf_workflow *wf,
                               const char *path, gf_diag *diag) {
  c->outputs = gf_calloc((size_t)wf->nfiles + 1, sizeof *c->outputs);
  if (!c->outputs) return gf_oom(diag, "reading the checkpoint");
  for (const char *line = text; line && *line; line = next_line(line)) {
    if (strncmp(line, "output ", 7) != 0) continue;
    int i = c->noutputs;
    char *end;
    int64_t planes = strtoll(line + 7, &end, 10);
    const char *ranges = end + 1, *name = ranges + strcspn(ranges, " \n");
    if (*name == ' ') name++;
    size_t name_len = strcspn(name, "\n");
    if (i >= wf->nfiles || planes != wf->files[i].planes || strlen(wf->files[i].name) != name_len ||
        strncmp(wf->files[i].name, name, name_len) != 0)
      return gf_diag_error(diag, GF_INVALID,
                           "%s: its output files are not this workflow's (file %d)", path, i);
    ck_output *o = &c->outputs[c->noutputs++];
    o->planes = planes;
    o->name = gf_strndup(name, name_len);
    o->written = gf_calloc((size_t)(planes + 7) / 8 + 1, 1);
    if (!o->name || !o->written) return gf_oom(diag, "reading the checkpoint");
    for (const char *r = ranges; *r != ' ' && *r != '-';) {
      int64_t a = strtoll(r, &end, 10), b = a;
      if (*end == '-') b = strtoll(end + 1, &end, 10);
      if (a < 0 || b < a || b >= planes)
        return gf_diag_error(diag, GF_NOINPUT, "%s: output %s: planes out of range", path, o->name);
      for (int64_t p = a; p <= b; p++) o->written[p >> 3] |= (uint8_t)(1u << (p & 7));
      r = *end == ',' ? end + 1 : end;
    }
  }
  if (c->noutputs != wf->nfiles)
    return gf_diag_error(diag, GF_INVALID, "%s: it has %d output files, the workflow %d", path,
                         c->noutputs, wf->nfiles);
  return GF_OK;
}

gf_status gf_checkpoint_open(const char *out_dir, const gf_workflow *wf, gf_diag *diag,
                             gf_checkpoint **out) {
  *out = NULL;
  gf_checkpoint *c = gf_calloc(1, sizeof *c);
  if (!c || !(c->dir = checkpoint_dir(out_dir))) {
    free(c);
    return gf_oom(diag, "reading the checkpoint");
  }
  char *text = NULL, *saved_yaml = NULL, *yaml = NULL, *hooks = NULL;
  char *meta_path = gf_asprintf("%s/" META_NAME, c->dir);
  char *yaml_path = gf_asprintf("%s/" WORKFLOW_NAME, c->dir);
  gf_status st = meta_path && yaml_path ? read_meta(c->dir, &text, diag)
                                        : gf_oom(diag, "reading the checkpoint");
  int found = text != NULL;
  if (st != GF_OK || !text) goto done;
  char value[PATH_MAX + 32];
  c->step = meta_get(text, "step", value, sizeof value) ? strtoll(value, NULL, 10) : -1;
  c->complete = meta_get(text, "complete", value, sizeof value) && atoi(value) == 1;
  c->ranks = meta_get(text, "ranks", value, sizeof value) ? atoi(value) : 0;
  if (c->step < 0 || c->step > wf->steps || c->ranks != 1) {
    st = gf_diag_error(diag, GF_NOINPUT,
                       "%s: step %" PRId64 " of %d ranks: not a checkpoint this run can continue",
                       meta_path, c->step, c->ranks);
    goto done;
  }
  /* The workflow: as resolved, and each hook file's text. */
  saved_yaml = read_text(yaml_path);
  yaml = gf_workflow_resolved_yaml(wf);
  if (!saved_yaml) {
    st = gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", yaml_path, strerror(errno));
    goto done;
  }
  char hash[32];
  snprintf(hash, sizeof hash, "%016" PRIx64, hash_text(saved_yaml));
  if (!yaml) {
    st = gf_oom(diag, "reading the checkpoint");
  } else if (!meta_get(text, "workflow_hash", value, sizeof value) || strcmp(value, hash) != 0) {
    st = gf_diag_error(diag, GF_NOINPUT, "%s is corrupt (it does not match checkpoint.txt)",
                       yaml_path);
  } else if (strcmp(yaml, saved_yaml) != 0) {
    st = workflow_differs(yaml, saved_yaml, yaml_path, diag);
  } else if ((hooks = hook_file_lines(wf, diag, &st)) != NULL) {
    for (const char *line = hooks; line && *line && st == GF_OK; line = next_line(line)) {
      size_t len = strcspn(line, "\n"), skip = strlen("hook_file ") + 17; /* to the path */
      const char *at = strstr(text, line);
      while (at && at != text && at[-1] != '\n') at = strstr(at + 1, line);
      if (!at || at[len] != '\n')
        st = gf_diag_error(diag, GF_INVALID,
                           "hook file %.*s changed since the checkpoint (%s); restart with the "
                           "hook files the run started with, or run afresh without --restart",
                           (int)(len - skip), line + skip, meta_path);
    }
  }
  if (st != GF_OK) goto done;
  if (!meta_get(text, "hooks", value, sizeof value)) value[0] = '\0';
  if (strcmp(value, "unsaved") == 0 && !c->complete) {
    st = gf_diag_error(diag, GF_INVALID,
                       "the hooks kept state that the checkpoint in %s could not save (their "
                       "globals or upvalues changed during the run, and they define no "
                       "save_state()): a restart would not reproduce the run; give the hook file "
                       "save_state() and restore_state(state), or run afresh",
                       c->dir);
    goto done;
  }
  c->hooks_saved = strncmp(value, "saved ", 6) == 0;
  if (c->hooks_saved) c->hooks_hash = strtoull(value + 6, NULL, 16);
  if (!c->complete) st = parse_outputs(c, text, wf, meta_path, diag);
done:
  free(text);
  free(saved_yaml);
  free(yaml);
  free(hooks);
  free(meta_path);
  free(yaml_path);
  if (st == GF_OK && found)
    *out = c;
  else
    gf_checkpoint_free(c);
  return st;
}

gf_status gf_checkpoint_origin(const char *out_dir, char **file, gf_override **overrides,
                               int *noverrides, gf_diag *diag) {
  *file = NULL;
  *overrides = NULL;
  *noverrides = 0;
  char *dir = checkpoint_dir(out_dir), *text = NULL;
  gf_status st = dir ? read_meta(dir, &text, diag) : gf_oom(diag, "reading the checkpoint");
  char value[PATH_MAX + 32];
  if (st == GF_OK && !text)
    st = gf_diag_error(diag, GF_NOINPUT,
                       "%s holds no checkpoint (%s/" META_NAME "): nothing to restart from",
                       out_dir, dir);
  else if (st == GF_OK && !meta_get(text, "workflow_file", value, sizeof value))
    st = gf_diag_error(diag, GF_NOINPUT, "%s/" META_NAME " names no workflow file", dir);
  else if (st == GF_OK && !(*file = gf_strdup(value)))
    st = gf_oom(diag, "reading the checkpoint");
  int cap = 0;
  for (const char *line = text; st == GF_OK && line && *line; line = next_line(line)) {
    if (strncmp(line, "set ", 4) != 0) continue;
    char *key = gf_strndup(line + 4, strcspn(line + 4, "\n"));
    char *eq = key ? strchr(key, '=') : NULL;
    if (!key || !eq || GF_GROW(*overrides, cap, *noverrides + 1) != GF_OK) {
      free(key);
      st = gf_oom(diag, "reading the checkpoint");
      break;
    }
    *eq = '\0';
    (*overrides)[(*noverrides)++] = (gf_override){key, eq + 1};
  }
  free(text);
  free(dir);
  return st;
}

/* ---- writing ------------------------------------------------------------------ */

static gf_status write_meta(const gf_checkpoint_run *run, const char *dir, int64_t step,
                            int complete, const char *hooks, gf_diag *diag) {
  gf_status st = GF_OK;
  char *yaml = gf_workflow_resolved_yaml(run->wf);
  char *hook_files = yaml ? hook_file_lines(run->wf, diag, &st) : NULL;
  char *meta = hook_files ? meta_text(run, step, complete, yaml, hook_files, hooks) : NULL;
  if (!yaml) st = gf_oom(diag, "writing the checkpoint");
  if (st == GF_OK) st = gf_write_file_atomic(dir, WORKFLOW_NAME, yaml, diag);
  if (st == GF_OK) st = gf_write_file_atomic(dir, META_NAME, meta, diag);
  if (st == GF_OK) sync_dir(dir);
  free(yaml);
  free(hook_files);
  free(meta);
  return st;
}

gf_status gf_checkpoint_write(gf_checkpoint_run *run, int64_t step, gf_diag *diag) {
  char *dir = checkpoint_dir(run->out_dir), *lua_state = NULL, *step_dir = NULL;
  char folder[64], name[64], hooks[64] = "none";
  step_folder(folder, sizeof folder, step);
  rank_file(name, sizeof name, run->rank);
  int changed = 0;
  gf_status st = dir ? gf_writer_checkpoint(run->writer) : gf_oom(diag, "writing the checkpoint");
  if (st == GF_OK) st = gf_lua_state_save(run->lua, &lua_state, &changed, diag);
  if (st == GF_OK && !(step_dir = gf_asprintf("%s/%s", dir, folder)))
    st = gf_oom(diag, "writing the checkpoint");
  if (st == GF_OK) st = gf_make_dirs(step_dir, diag);
  char *path = st == GF_OK ? gf_asprintf("%s/%s", step_dir, name) : NULL;
  if (st == GF_OK && !path) st = gf_oom(diag, "writing the checkpoint");
  if (st == GF_OK) st = move_fields(run, path, step, 1, diag);
  if (st == GF_OK && lua_state) {
    snprintf(hooks, sizeof hooks, "saved %016" PRIx64, hash_text(lua_state));
    st = gf_write_file_atomic(step_dir, HOOKS_NAME, lua_state, diag);
  } else if (changed) {
    snprintf(hooks, sizeof hooks, "unsaved");
    if (!run->noted++)
      gf_diag_error(diag, GF_OK,
                    "note: checkpoint at step %" PRId64
                    ": the hooks' state changed during the run and they define no save_state(), "
                    "so a restart from it will be refused (README: restart after a time limit)",
                    step);
  }
  if (st == GF_OK) sync_dir(step_dir);
  if (st == GF_OK) st = write_meta(run, dir, step, 0, hooks, diag);
  if (st == GF_OK) remove_steps(dir, folder); /* the checkpoint before this one */
  free(path);
  free(step_dir);
  free(lua_state);
  free(dir);
  return st;
}

gf_status gf_checkpoint_finish(const gf_checkpoint_run *run, gf_diag *diag) {
  char dir[PATH_MAX];
  struct stat info;
  if (snprintf(dir, sizeof dir, "%s/" DIR_NAME, run->out_dir) >= (int)sizeof dir ||
      stat(dir, &info) != 0)
    return GF_OK; /* the run never checkpointed: nothing to finish, nothing allocated */
  gf_status st = write_meta(run, dir, run->wf->steps, 1, "none", diag);
  if (st == GF_OK) remove_steps(dir, NULL);
  return st;
}

/* A fresh run into a folder that holds a checkpoint: it and the partial
 * outputs it names go. */
static void discard(const char *out_dir, gf_diag *diag) {
  char path[PATH_MAX + 32], dir[PATH_MAX];
  struct stat info;
  if (snprintf(dir, sizeof dir, "%s/" DIR_NAME, out_dir) >= (int)sizeof dir ||
      stat(dir, &info) != 0)
    return;
  snprintf(path, sizeof path, "%s/" META_NAME, dir);
  char *text = read_text(path), value[64];
  if (text && meta_get(text, "complete", value, sizeof value) && atoi(value) == 0 &&
      meta_get(text, "step", value, sizeof value))
    gf_diag_error(diag, GF_OK,
                  "note: %s held a checkpoint at step %s; this run starts afresh and removes it "
                  "(--restart %s would have continued it)",
                  out_dir, value, out_dir);
  for (const char *line = text; line && *line; line = next_line(line)) {
    const char *name = strncmp(line, "output ", 7) == 0 ? strchr(line + 7, ' ') : NULL;
    name = name ? strchr(name + 1, ' ') : NULL;
    char partial[PATH_MAX];
    if (name && snprintf(partial, sizeof partial, "%s/.%.*s.partial", out_dir,
                         (int)strcspn(name + 1, "\n"), name + 1) < (int)sizeof partial)
      unlink(partial);
  }
  free(text);
  remove_steps(dir, NULL);
  unlink(path);
  snprintf(path, sizeof path, "%s/" WORKFLOW_NAME, dir);
  unlink(path);
  rmdir(dir);
}

gf_status gf_checkpoint_start(const gf_checkpoint_run *run, const gf_checkpoint *restart,
                              gf_diag *diag) {
  gf_status st = GF_OK;
  if (!restart) {
    discard(run->out_dir, diag);
  } else {
    char folder[64], name[64];
    step_folder(folder, sizeof folder, restart->step);
    rank_file(name, sizeof name, run->rank);
    char *path = gf_asprintf("%s/%s/%s", restart->dir, folder, name);
    char *hooks = gf_asprintf("%s/%s/" HOOKS_NAME, restart->dir, folder);
    st =
        path && hooks ? move_fields(run, path, restart->step, 0, diag) : gf_oom(diag, "restarting");
    for (int i = 0; i < restart->noutputs && st == GF_OK; i++) {
      char *temp = gf_asprintf(".%s.partial", restart->outputs[i].name);
      st = temp ? gf_writer_adopt(run->writer, i, temp, restart->outputs[i].written)
                : gf_oom(diag, "restarting");
      free(temp);
    }
    if (st == GF_OK && restart->hooks_saved) {
      char *text = read_text(hooks);
      if (!text)
        st = gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", hooks, strerror(errno));
      else if (hash_text(text) != restart->hooks_hash)
        st = gf_diag_error(diag, GF_NOINPUT, "%s is corrupt (it does not match checkpoint.txt)",
                           hooks);
      else
        st = gf_lua_state_restore(run->lua, text, diag);
      free(text);
    }
    free(path);
    free(hooks);
  }
  if (st == GF_OK) gf_lua_state_mark(run->lua);
  return st;
}
