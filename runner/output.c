/* output.c - the writer thread, staging buffers and atomic files; how each
 * file lies on disk is its format's (output_format.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "image.h"
#include "output_format.h"
#include "text.h"

const gf_out_format *const gf_out_formats[] = {&gf_out_raw, &gf_out_hdf5};
const int gf_out_format_count = (int)(sizeof gf_out_formats / sizeof gf_out_formats[0]);

typedef struct out_file {
  int task;           /* the task that writes it */
  int field;          /* whose instances it holds */
  char *name;         /* final name inside the folder */
  char *temp_name;    /* where it is written until complete */
  size_t plane_bytes; /* of the whole plane, in the file */
  int64_t planes;
  uint8_t *written; /* a bit per plane */
  int64_t nwritten;
  const gf_out_format *format; /* NULL for an image task's pictures */
  gf_out_target target;        /* what the format knows of the file */
  char *temp_path;             /* DIR/temp_name */
  void *state;                 /* the format's, from open until close; NULL: not open */
  dev_t dev;                   /* the temporary file, to see it was not removed underneath */
  ino_t ino;
  int renamed;      /* finish: 1 once the data, 2 once its sidecar too, has its final name */
  int checkpointed; /* a checkpoint names the temporary: never remove it */
  /* an image task's pictures (image not NULL; no format, no planes): the
   * steps drawn so far, each in .NAME.partial-PID until finish renames it,
   * how many have their final names, and the picture being drawn */
  const gf_image_spec *image;
  int64_t *pictures;
  int npictures, pictures_cap, pictures_renamed;
  uint8_t *rgb;
  int width, height;
} out_file;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct job {
  int slot;
  int file;
  int64_t plane;
  int64_t step; /* whose output it is, for the sink */
  int count;    /* > 0: a batch of planes, in the slot's planes and steps */
} job;

struct gf_writer {
  gf_backend *backend;
  gf_comm *comm; /* rank 0 locks, checks, names and renames; every rank writes its block */
  int lead;      /* 1 on rank 0 (and without MPI) */
  const gf_workflow *wf;
  gf_diag *diag; /* the run's; the writer thread reports here too (a diag locks each message) */
  char *dir;
  out_file *files;
  int nfiles;

  int nslots;
  void **buffers;
  gf_event **events;
  size_t slot_bytes;
  int max_batch;        /* planes a buffer holds at most */
  int64_t *slot_planes; /* [slot * max_batch + i]: a batch's planes (-1: left out) */
  int64_t *slot_steps;  /* and their steps */

  pthread_mutex_t lock;
  pthread_cond_t changed;
  int *free_slots; /* stack */
  int nfree;
  job *queue; /* ring of nslots jobs */
  int head, count;
  int stopping;
  atomic_int failed;
  _Atomic int64_t bytes_written; /* planes written so far, for progress */
  pthread_t thread;
  int thread_started;
  int lock_fd;  /* the folder's .gflow.lock, flock'ed for the run; -1: not held */
  int finished; /* gf_writer_finish ran: it kept or removed the files */
};

/* In the output folder: who holds it. flock(2) dies with its process, so a
 * lock left behind by a killed run is free. */
#define LOCK_NAME ".gflow.lock"

/* ---- small text helpers ---------------------------------------------------- */

int gf_out_write_all(int fd, const void *data, size_t bytes, int64_t offset) {
  const char *p = data;
  while (bytes > 0) {
    ssize_t n = pwrite(fd, p, bytes, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += n;
    bytes -= (size_t)n;
    offset += n;
  }
  return 0;
}

/* The paths below are NULL when out of memory. */
static char *join_path(const char *dir, const char *name) {
  return gf_asprintf("%s/%s", dir, name);
}

/* Where DIR/NAME is written until it is complete. */
static char *temp_path(const char *dir, const char *name) {
  return gf_asprintf("%s/.%s.partial-%ld", dir, name, (long)getpid());
}

gf_comm_block gf_out_whole_block(const gf_field *field) {
  gf_comm_block b = {.ndim = field->ndim, .dtype = field->dtype};
  for (int d = 0; d < GF_MAX_DIMS; d++)
    b.global[d] = b.local[d] = b.hi[d] = d < field->ndim ? field->shape[d] : 1;
  return b;
}

int gf_out_block_is_whole(const gf_comm_block *b) {
  int whole = 1;
  for (int d = 0; d < GF_MAX_DIMS; d++)
    whole &= b->lo[d] == 0 && b->hi[d] == b->local[d] && b->local[d] == b->global[d] &&
             b->origin[d] == 0;
  return whole;
}

int64_t gf_out_plane_bytes(const gf_comm_block *b, gf_dtype dtype) {
  int64_t bytes = dtype == GF_F64 ? 8 : 4;
  for (int d = 0; d < GF_MAX_DIMS; d++) bytes *= b->global[d];
  return bytes;
}

int gf_out_dt(const gf_workflow *wf, double *dt) {
  for (int p = 0; p < wf->nparams; p++)
    if (strcmp(wf->params[p].name, "dt") == 0) return *dt = wf->params[p].value, 1;
  return 0;
}

/* strerror, and what EFBIG means here: the process may not grow files that
 * far (gflow ignores SIGXFSZ so that it gets to say so). */
const char *gf_out_error_text(int err) {
  return err == EFBIG ? "File too large (the file size limit, ulimit -f, is reached)"
                      : strerror(err);
}

/* Writes `text` to `temp`, durable; removes it again on failure. */
static gf_status write_temp(const char *temp, const char *text, gf_diag *diag) {
  gf_status st = GF_OK;
  int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return gf_diag_error(diag, GF_CANTCREATE, "cannot create %s: %s", temp, strerror(errno));
  if (gf_out_write_all(fd, text, strlen(text), 0) != 0 || fsync(fd) != 0)
    st = gf_diag_error(diag, GF_IOERR, "cannot write %s: %s", temp, gf_out_error_text(errno));
  if (close(fd) != 0 && st == GF_OK)
    st = gf_diag_error(diag, GF_IOERR, "cannot write %s: %s", temp, gf_out_error_text(errno));
  if (st != GF_OK) unlink(temp);
  return st;
}

gf_status gf_write_file_atomic(const char *dir, const char *name, const char *text, gf_diag *diag) {
  char what[128];
  snprintf(what, sizeof what, "writing %s", name);
  char *final = text ? join_path(dir, name) : NULL;
  char *temp = final ? temp_path(dir, name) : NULL;
  gf_status st = temp ? write_temp(temp, text, diag) : gf_oom(diag, what);
  if (st == GF_OK && rename(temp, final) != 0) {
    st = gf_diag_error(diag, GF_IOERR, "cannot rename %s to %s: %s", temp, final, strerror(errno));
    unlink(temp);
  }
  free(final);
  free(temp);
  return st;
}

gf_status gf_make_dirs(const char *path, gf_diag *diag) {
  char *p = gf_strdup(path);
  if (!p) return gf_oom(diag, "creating the output folder");
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST) {
      gf_status st = gf_diag_error(diag, GF_CANTCREATE, "cannot create output folder %s: %s", p,
                                   strerror(errno));
      free(p);
      return st;
    }
    *s = '/';
  }
  gf_status st = GF_OK;
  struct stat info;
  if (mkdir(p, 0755) != 0 && errno != EEXIST)
    st = gf_diag_error(diag, GF_CANTCREATE, "cannot create output folder %s: %s", p,
                       strerror(errno));
  else if (stat(p, &info) != 0 || !S_ISDIR(info.st_mode))
    st = gf_diag_error(diag, GF_CANTCREATE, "cannot create output folder %s: %s", p,
                       strerror(ENOTDIR));
  free(p);
  return st;
}

static void remove_at(const char *dir, const char *name, const char *suffix);

/* ---- the folder's lock and free space ---------------------------------------- */

/* Takes DIR/.gflow.lock with flock(2) and writes this run's pid and start
 * time into it; a folder another live gflow holds is refused with its pid.
 * The file is removed at release while still locked, so a run that opened
 * it just before checks after locking that it locked the file still there. */
static gf_status lock_folder(gf_writer *w, const char *dir, gf_diag *diag) {
  char *path = join_path(dir, LOCK_NAME);
  if (!path) return gf_oom(diag, "locking the output folder");
  gf_status st = GF_OK;
  for (int attempt = 0; attempt < 100; attempt++) {
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      st = gf_diag_error(diag, GF_CANTCREATE, "cannot create %s: %s", path, strerror(errno));
      break;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      if (err != EWOULDBLOCK) {
        close(fd);
        st = gf_diag_error(diag, GF_CANTCREATE, "cannot lock %s: %s", path, strerror(err));
        break;
      }
      /* The holder writes its line right after locking: give it a moment. */
      char text[128] = "";
      long pid = 0;
      char started[32] = "";
      for (int tries = 0; tries < 50; tries++) {
        ssize_t got = pread(fd, text, sizeof text - 1, 0);
        text[got > 0 ? got : 0] = '\0';
        if (sscanf(text, "pid %ld started %31[^\n]", &pid, started) == 2) break;
        pid = 0;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
      }
      close(fd);
      if (pid > 0)
        st = gf_diag_error(diag, GF_CANTCREATE,
                           "%s is in use by gflow pid %ld (started %s); wait for it or choose "
                           "another --out",
                           dir, pid, started);
      else
        st = gf_diag_error(diag, GF_CANTCREATE,
                           "%s is in use by another gflow; wait for it or choose another --out",
                           dir);
      break;
    }
    struct stat held, named;
    if (fstat(fd, &held) != 0 || stat(path, &named) != 0 || held.st_ino != named.st_ino ||
        held.st_dev != named.st_dev) {
      close(fd); /* its holder removed it as we opened it: take the new one */
      continue;
    }
    char text[128];
    time_t now = time(NULL);
    struct tm local;
    char started[32] = "?";
    if (localtime_r(&now, &local)) strftime(started, sizeof started, "%Y-%m-%d %H:%M:%S", &local);
    int len = snprintf(text, sizeof text, "pid %ld started %s\n", (long)getpid(), started);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len) {
      st =
          gf_diag_error(diag, GF_CANTCREATE, "cannot write %s: %s", path, gf_out_error_text(errno));
      unlink(path);
      close(fd);
      break;
    }
    w->lock_fd = fd;
    break;
  }
  if (st == GF_OK && w->lock_fd < 0)
    st = gf_diag_error(diag, GF_CANTCREATE, "cannot lock %s: it keeps being replaced", path);
  free(path);
  return st;
}

static void unlock_folder(gf_writer *w) {
  if (w->lock_fd < 0) return;
  remove_at(w->dir, LOCK_NAME, ""); /* while still locked, see lock_folder */
  close(w->lock_fd);
  w->lock_fd = -1;
}

/* What the run will write: every file at full size, its sidecar (the
 * resolved workflow and the plane list) and timings.json, all while an
 * earlier run's files of the same names may still be there; with
 * `checkpoint: {every}`, two checkpoints of every field instance (a new one
 * is written before the one it replaces goes). */
static double output_bytes(const gf_workflow *wf) {
  double bytes = 4096.0 + 256.0 * wf->ntasks; /* timings.json */
  for (int i = 0; i < wf->nfiles; i++)
    if (!wf->files[i].image) /* pictures: compressed, and few next to the planes */
      bytes +=
          (double)wf->files[i].planes * ((double)wf->files[i].plane_bytes +
                                         gf_out_formats[wf->files[i].format]->bytes_per_plane) +
          8192.0 + 2.0 * (double)strlen(wf->source);
  for (int f = 0; wf->checkpoint_every && f < wf->nfields; f++)
    bytes += 2.0 * (double)wf->fields[f].ring * (double)wf->fields[f].bytes;
  return bytes;
}

static gf_status check_space(const gf_workflow *wf, const char *dir, gf_diag *diag) {
  struct statvfs fs;
  if (statvfs(dir, &fs) != 0) return GF_OK; /* unknown: the writes will say */
  double free_bytes = (double)fs.f_bavail * (double)fs.f_frsize;
  double need = output_bytes(wf);
  if (need <= free_bytes) return GF_OK;
  char a[32], b[32];
  return gf_diag_error(
      diag, GF_CANTCREATE, "outputs need %s in %s/, %s are free; free space or pass --force",
      gf_format_bytes(need, a, sizeof a), dir, gf_format_bytes(free_bytes, b, sizeof b));
}

/* ---- an image task's pictures ----------------------------------------------- */

/* The name of picture `number` of `f` in the folder, final or temporary;
 * in `buf`, NULL when it does not fit. */
static char *picture_path(const gf_writer *w, const out_file *f, int64_t number, int temp,
                          char *buf, size_t size) {
  char name[NAME_MAX + 1];
  if (!gf_image_name(f->image, number, name, sizeof name)) return NULL;
  int n = temp ? snprintf(buf, size, "%s/.%s.partial-%ld", w->dir, name, (long)getpid())
               : snprintf(buf, size, "%s/%s", w->dir, name);
  return n >= 0 && (size_t)n < size ? buf : NULL;
}

/* Draws the staged instance and writes it, durable, under its temporary
 * name; the bytes written, or -1 (reported). */
static int64_t write_picture(gf_writer *w, out_file *f, const void *data, int64_t number) {
  const gf_field *field = &w->wf->fields[f->field];
  char path[PATH_MAX];
  if (f->npictures == INT_MAX || GF_GROW(f->pictures, f->pictures_cap, f->npictures + 1) != GF_OK) {
    gf_oom(w->diag, "recording a picture");
    return -1;
  }
  if (!picture_path(w, f, number, 1, path, sizeof path)) {
    gf_diag_error(w->diag, GF_IOERR, "cannot name picture %" PRId64 " of %s in %s", number, f->name,
                  w->dir);
    return -1;
  }
  double lo, hi;
  gf_image_draw(f->image, data, field->dtype, field->shape, f->rgb, &lo, &hi);
  if (gf_png_write_durable(path, f->width, f->height, f->rgb, w->diag) != GF_OK) return -1;
  f->pictures[f->npictures++] = number;
  struct stat info;
  return stat(path, &info) == 0 ? (int64_t)info.st_size : 0;
}

/* Renames the pictures drawn to their final names (finish). */
static gf_status rename_pictures(gf_writer *w, out_file *f) {
  for (; f->pictures_renamed < f->npictures; f->pictures_renamed++) {
    char from[PATH_MAX], to[PATH_MAX];
    int64_t number = f->pictures[f->pictures_renamed];
    picture_path(w, f, number, 1, from, sizeof from); /* both fitted when written */
    picture_path(w, f, number, 0, to, sizeof to);
    if (rename(from, to) != 0)
      return gf_diag_error(w->diag, GF_IOERR, "cannot rename %s to %s: %s", from, to,
                           strerror(errno));
  }
  return GF_OK;
}

/* Removes the pictures: those renamed under their final names (a finish that
 * failed takes them back) and the others' temporary files. */
static void remove_pictures(gf_writer *w, out_file *f) {
  for (int i = 0; i < f->npictures; i++) {
    char path[PATH_MAX];
    if (picture_path(w, f, f->pictures[i], i >= f->pictures_renamed, path, sizeof path))
      unlink(path);
  }
  f->pictures_renamed = 0;
  f->npictures = 0;
}

/* The staging counter, for a trace; caller holds the lock. */
static void count_staging(gf_writer *w) {
  const gf_op_sink *sink = &w->backend->sink;
  if (!gf_sink_wants(sink, GF_TIMED_STAGING)) return;
  int64_t now = now_ns();
  sink->report(sink->user, &(gf_op_timing){.tag = {-1, -1, -2},
                                           .kind = GF_TIMED_STAGING,
                                           .bytes = (size_t)(w->nslots - w->nfree),
                                           .start_ns = now,
                                           .end_ns = now});
}

/* ---- the writer thread ----------------------------------------------------- */

static void mark_written(out_file *f, int64_t plane) {
  if (gf_out_plane_written(f->written, plane)) return;
  f->written[plane >> 3] |= (uint8_t)(1u << (plane & 7));
  f->nwritten++;
}

/* A batch in staging buffer j->slot: each run of consecutive planes goes to
 * the file in one call of the format's write_run (one write of the run),
 * else plane by plane. On failure the writer has failed (and said why). */
static gf_status write_batch(gf_writer *w, out_file *f, const job *j) {
  const int64_t *planes = w->slot_planes + (size_t)j->slot * (size_t)w->max_batch,
                *steps = w->slot_steps + (size_t)j->slot * (size_t)w->max_batch;
  size_t local = w->wf->fields[f->field].bytes; /* a plane as this process holds it */
  const char *data = w->buffers[j->slot];
  const gf_op_sink *sink = &w->backend->sink;
  int timed = gf_sink_wants(sink, GF_TIMED_WRITE);
  for (int i = 0; i < j->count;) {
    if (planes[i] < 0) {
      i++;
      continue;
    }
    int n = 1;
    while (i + n < j->count && planes[i + n] == planes[i] + n) n++;
    int64_t started = timed ? now_ns() : 0;
    gf_status st = GF_OK;
    if (f->format->write_run)
      st = f->format->write_run(f->state, planes[i], n, steps + i, data + (size_t)i * local);
    for (int k = 0; k < n && st == GF_OK && !f->format->write_run; k++)
      st = f->format->write(f->state, planes[i + k], steps[i + k], data + (size_t)(i + k) * local);
    if (st != GF_OK) {
      atomic_store(&w->failed, st); /* the format has said why */
      return st;
    }
    for (int k = 0; k < n; k++) mark_written(f, planes[i + k]);
    atomic_fetch_add(&w->bytes_written, (int64_t)f->plane_bytes * n);
    if (timed)
      sink->report(sink->user, &(gf_op_timing){.tag = {f->task, steps[i], -2},
                                               .kind = GF_TIMED_WRITE,
                                               .bytes = f->plane_bytes * (size_t)n,
                                               .start_ns = started,
                                               .end_ns = now_ns()});
    i += n;
  }
  return GF_OK;
}

static void *writer_main(void *arg) {
  gf_writer *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->count == 0 && !w->stopping) pthread_cond_wait(&w->changed, &w->lock);
    if (w->count == 0) break;
    job j = w->queue[w->head];
    pthread_mutex_unlock(&w->lock);

    out_file *f = &w->files[j.file];
    int failed = atomic_load(&w->failed);
    if (!failed && w->backend->ops->event_synchronize(w->backend, w->events[j.slot]) != GF_OK) {
      gf_diag_error(w->diag, GF_INTERNAL, "writer: waiting for plane %" PRId64 " of %s: %s",
                    j.plane, f->name, w->backend->error);
      atomic_store(&w->failed, GF_INTERNAL);
      failed = 1;
    }
    const gf_op_sink *sink = &w->backend->sink;
    int timed = gf_sink_wants(sink, GF_TIMED_WRITE);
    int64_t started = timed ? now_ns() : 0, bytes = (int64_t)f->plane_bytes;
    gf_status wrote = GF_OK;
    if (j.count > 0) {
      if (!failed && write_batch(w, f, &j) != GF_OK) failed = 1;
    } else if (!failed && f->image) {
      if ((bytes = write_picture(w, f, w->buffers[j.slot], j.plane)) < 0) {
        atomic_store(&w->failed, GF_IOERR);
        failed = 1;
      }
    } else if (!failed &&
               (wrote = f->format->write(f->state, j.plane, j.step, w->buffers[j.slot])) != GF_OK) {
      atomic_store(&w->failed, wrote); /* the format has said why */
      failed = 1;
    }
    if (!failed && !f->image && j.count == 0) mark_written(f, j.plane);
    if (!failed && j.count == 0) atomic_fetch_add(&w->bytes_written, bytes);
    if (!failed && timed && j.count == 0)
      sink->report(sink->user, &(gf_op_timing){.tag = {f->task, j.step, -2},
                                               .kind = GF_TIMED_WRITE,
                                               .bytes = (size_t)bytes,
                                               .start_ns = started,
                                               .end_ns = now_ns()});

    pthread_mutex_lock(&w->lock);
    w->head = (w->head + 1) % w->nslots;
    w->count--;
    w->free_slots[w->nfree++] = j.slot;
    count_staging(w);
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* Where this process's block lies in each plane of a file of `field`: the
 * whole plane, or a rank's block of the grid (decompose.c). */
static gf_comm_block block_of(const gf_workflow *wf, const gf_field *field) {
  if (!field->decomposed) return gf_out_whole_block(field);
  gf_comm_block b = {.ndim = field->ndim, .dtype = field->dtype};
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    b.global[d] = d < wf->ndim ? wf->shape[d] : 1;
    b.local[d] = field->shape[d];
    b.lo[d] = wf->decomp.write_lo[d];
    b.hi[d] = wf->decomp.write_hi[d];
    b.origin[d] = wf->decomp.origin[d];
  }
  return b;
}

gf_status gf_writer_create(gf_backend *backend, gf_memory *memory, const gf_workflow *wf,
                           const char *out_dir, int force, gf_comm *comm, gf_diag *diag,
                           gf_writer **out) {
  *out = NULL;
  gf_writer *w = gf_calloc(1, sizeof *w);
  if (!w) return gf_oom(diag, "creating the output writer");
  w->backend = backend;
  w->comm = comm;
  w->lead = gf_comm_rank(comm) == 0;
  w->wf = wf;
  w->diag = diag;
  w->lock_fd = -1;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  *out = w;
  w->dir = gf_strdup(out_dir);
  w->files = gf_calloc((size_t)wf->nfiles, sizeof *w->files);
  if (!w->dir || !w->files) return gf_oom(diag, "creating the output writer");

  gf_status st = GF_OK;
  if (w->lead) {
    st = gf_make_dirs(out_dir, diag);
    if (st == GF_OK) st = lock_folder(w, out_dir, diag);
    if (st == GF_OK && !force) st = check_space(wf, out_dir, diag);
  }
  /* The other ranks follow rank 0: its folder, its pid in the file names. */
  if (!gf_comm_all(comm, st == GF_OK)) return st != GF_OK ? st : GF_CANTCREATE;
  long pid = (long)gf_comm_broadcast(comm, (int64_t)getpid());
  for (int i = 0; i < wf->nfiles; i++) {
    const gf_file *file = &wf->files[i];
    out_file *f = &w->files[w->nfiles++];
    f->task = file->task;
    f->field = file->field;
    f->name = gf_strdup(file->name);
    f->plane_bytes = file->plane_bytes;
    f->planes = file->planes;
    if (file->batch > w->max_batch) w->max_batch = file->batch;
    if ((f->image = file->image)) {
      gf_image_size(f->image, wf->fields[f->field].shape, &f->width, &f->height);
      f->rgb = gf_malloc((size_t)f->width * (size_t)f->height * 3);
      if (!f->name || !f->rgb) return gf_oom(diag, "preparing the pictures");
      continue;
    }
    f->temp_name = gf_asprintf(".%s.partial-%ld", file->name, pid);
    f->written = gf_calloc((size_t)(file->planes + 7) / 8, 1);
    f->format = gf_out_formats[file->format];
    f->temp_path = f->temp_name ? join_path(out_dir, f->temp_name) : NULL;
    if (!f->name || !f->temp_path || !f->written) return gf_oom(diag, "opening the output files");
    f->target = (gf_out_target){
        wf, file, w->dir, f->temp_path, block_of(wf, &wf->fields[file->field]), comm, diag};
    if ((st = f->format->open(&f->target, &f->state)) != GF_OK) {
      if (w->lead) unlink(f->temp_path); /* the format may have created it before it failed */
      return st;
    }
    struct stat info;
    if (stat(f->temp_path, &info) != 0)
      return gf_diag_error(diag, GF_CANTCREATE, "cannot create %s: %s", f->temp_path,
                           strerror(errno));
    f->dev = info.st_dev;
    f->ino = info.st_ino;
  }
  if (w->nfiles == 0) return GF_OK;

  /* A staging buffer holds a batch of the instances as this process has
   * them (its block); the budget bounds them all (workflow.c). */
  w->slot_bytes = gf_workflow_plane_bytes(wf);
  w->slot_planes = gf_calloc((size_t)wf->staging * (size_t)w->max_batch, sizeof(int64_t));
  w->slot_steps = gf_calloc((size_t)wf->staging * (size_t)w->max_batch, sizeof(int64_t));
  w->buffers = gf_calloc((size_t)wf->staging, sizeof(void *));
  w->events = gf_calloc((size_t)wf->staging, sizeof(gf_event *));
  w->free_slots = gf_calloc((size_t)wf->staging, sizeof(int));
  w->queue = gf_calloc((size_t)wf->staging, sizeof(job));
  if (!w->buffers || !w->events || !w->free_slots || !w->queue || !w->slot_planes || !w->slot_steps)
    return gf_oom(diag, "creating the output staging buffers");
  w->nslots = wf->staging;
  for (int i = 0; i < w->nslots; i++) {
    if (gf_memory_alloc(memory, GF_SPACE_PINNED, w->slot_bytes, NULL, &w->buffers[i]) != GF_OK)
      return gf_diag_error(diag, GF_INTERNAL,
                           "cannot allocate output staging buffer %d (%zu bytes): %s", i,
                           w->slot_bytes, backend->error);
    if (backend->ops->event_create(backend, &w->events[i]) != GF_OK)
      return gf_diag_error(diag, GF_INTERNAL, "cannot create an event for output staging: %s",
                           backend->error);
    w->free_slots[w->nfree++] = w->nslots - 1 - i;
  }
  if (pthread_create(&w->thread, NULL, writer_main, w) != 0)
    return gf_diag_error(diag, GF_INTERNAL, "cannot start the writer thread");
  w->thread_started = 1;
  return GF_OK;
}

gf_status gf_writer_acquire(gf_writer *w, int *slot, void **buffer, gf_event **ready) {
  pthread_mutex_lock(&w->lock);
  while (w->nfree == 0 && !atomic_load(&w->failed)) pthread_cond_wait(&w->changed, &w->lock);
  gf_status st = (gf_status)atomic_load(&w->failed);
  if (st == GF_OK) {
    *slot = w->free_slots[--w->nfree];
    *buffer = w->buffers[*slot];
    *ready = w->events[*slot];
    count_staging(w);
  }
  pthread_mutex_unlock(&w->lock);
  return st;
}

void gf_writer_submit(gf_writer *w, int slot, int file, int64_t plane, int64_t step) {
  pthread_mutex_lock(&w->lock);
  w->queue[(w->head + w->count) % w->nslots] = (job){slot, file, plane, step, 0};
  w->count++;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
}

void gf_writer_submit_batch(gf_writer *w, int slot, int file, int count, const int64_t *planes,
                            const int64_t *steps) {
  size_t at = (size_t)slot * (size_t)w->max_batch;
  memcpy(w->slot_planes + at, planes, (size_t)count * sizeof *planes);
  memcpy(w->slot_steps + at, steps, (size_t)count * sizeof *steps);
  pthread_mutex_lock(&w->lock);
  w->queue[(w->head + w->count) % w->nslots] = (job){slot, file, -1, steps[count - 1], count};
  w->count++;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
}

int64_t gf_writer_bytes_written(gf_writer *w) {
  return w ? atomic_load(&w->bytes_written) : 0;
}

gf_status gf_writer_status(gf_writer *w) {
  return (gf_status)atomic_load(&w->failed);
}

static void stop_thread(gf_writer *w) {
  if (!w->thread_started) return;
  pthread_mutex_lock(&w->lock);
  w->stopping = 1;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  w->thread_started = 0;
}

void gf_out_append_ranges(gf_text *t, const gf_out_end *end, int64_t planes) {
  gf_text_printf(t, "[");
  int first = 1;
  for (int64_t p = 0; p < planes;) {
    if (!gf_out_plane_written(end->written, p)) {
      p++;
      continue;
    }
    int64_t q = p;
    while (q + 1 < planes && gf_out_plane_written(end->written, q + 1)) q++;
    gf_text_printf(t, "%s[%" PRId64 ", %" PRId64 "]", first ? "" : ", ", p, q);
    first = 0;
    p = q + 1;
  }
  gf_text_printf(t, "]");
}

/* The data file before it may take its final name, on every rank together:
 * rank 0 checks that the temporary file is still there (not removed or
 * replaced underneath), the ranks agree, then its format finishes it
 * (collective under MPI). With `ok` 0 (a failed run) nothing is finished. */
static gf_status settle_file(gf_writer *w, out_file *f, const gf_out_end *end, int ok) {
  struct stat info;
  gf_status st = GF_OK;
  if (ok && w->lead &&
      (stat(f->temp_path, &info) != 0 || info.st_dev != f->dev || info.st_ino != f->ino))
    st = gf_diag_error(w->diag, GF_IOERR,
                       "cannot finish %s/%s: its temporary file %s was removed during the run",
                       w->dir, f->name, f->temp_name);
  if (!gf_comm_all(w->comm, ok && st == GF_OK))
    return ok && st == GF_OK ? GF_IOERR : st; /* GF_IOERR: another rank failed, and said so */
  return f->format->finish(f->state, end);
}

static gf_out_end file_end(const out_file *f, const gf_run_info *info) {
  return (gf_out_end){info, f->written, f->nwritten};
}

static gf_status rename_into_place(gf_writer *w, const char *from, const char *to) {
  if (rename(from, to) == 0) return GF_OK;
  return gf_diag_error(w->diag, GF_IOERR, "cannot rename %s to %s: %s", from, to, strerror(errno));
}

/* Removes DIR/NAME+SUFFIX; a path built in place, so clean-up never needs
 * memory. */
static void remove_at(const char *dir, const char *name, const char *suffix) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix) < (int)sizeof path) unlink(path);
}

void gf_remove_file(const char *dir, const char *name) {
  remove_at(dir, name, "");
}

gf_status gf_writer_finish(gf_writer *w, int ok, const gf_run_info *info,
                           gf_status (*before_rename)(void *user), void *user) {
  stop_thread(w);
  w->finished = 1;
  gf_status st = gf_writer_status(w);
  if (st != GF_OK) ok = 0;
  /* Under MPI the ranks agree at each stage: every rank's part, or nothing. */
  ok = gf_comm_all(w->comm, ok);
  for (int i = 0; i < w->nfiles; i++) {
    gf_out_end end = file_end(&w->files[i], info);
    gf_status settled = w->files[i].image ? GF_OK : settle_file(w, &w->files[i], &end, ok);
    if (settled != GF_OK) {
      ok = 0;
      if (st == GF_OK) st = settled;
    }
  }
  ok = gf_comm_all(w->comm, ok);
  /* Sidecars are written whole before anything is renamed, by rank 0. */
  char **sidecar_temp = gf_calloc((size_t)w->nfiles + 1, sizeof *sidecar_temp);
  if (!sidecar_temp && ok) {
    st = gf_oom(w->diag, "finishing the output files");
    ok = 0;
  }
  for (int i = 0; i < w->nfiles && ok && w->lead; i++) {
    out_file *f = &w->files[i];
    if (f->image) continue; /* pictures are whole files: no sidecar */
    gf_out_end end = file_end(f, info);
    char *text = f->format->sidecar(f->state, &end);
    char *sidecar = gf_asprintf("%s%s", f->name, f->format->sidecar_suffix);
    sidecar_temp[i] = sidecar ? temp_path(w->dir, sidecar) : NULL;
    if (!text || !sidecar_temp[i])
      st = gf_oom(w->diag, "writing the output sidecars");
    else
      st = write_temp(sidecar_temp[i], text, w->diag);
    if (st != GF_OK) ok = 0;
    free(sidecar);
    free(text);
  }
  /* The data is durable: what the caller writes about the run goes first
   * (on every rank: the report gathers their figures). */
  ok = gf_comm_all(w->comm, ok);
  if (ok && before_rename && (st = before_rename(user)) != GF_OK) ok = 0;
  ok = gf_comm_all(w->comm, ok);
  /* Each file, then its sidecar: a sidecar never describes a file not there. */
  for (int i = 0; i < w->nfiles && ok && w->lead; i++) {
    out_file *f = &w->files[i];
    if (f->image) {
      if ((st = rename_pictures(w, f)) != GF_OK) ok = 0;
      continue;
    }
    char *from = join_path(w->dir, f->temp_name), *to = join_path(w->dir, f->name);
    char *sidecar = to ? gf_asprintf("%s%s", to, f->format->sidecar_suffix) : NULL;
    if (!from || !sidecar)
      st = gf_oom(w->diag, "naming the output files");
    else if ((st = rename_into_place(w, from, to)) == GF_OK)
      f->renamed = 1;
    if (st == GF_OK && (st = rename_into_place(w, sidecar_temp[i], sidecar)) == GF_OK)
      f->renamed = 2;
    if (st != GF_OK) ok = 0;
    free(from);
    free(to);
    free(sidecar);
  }
  ok = (int)gf_comm_broadcast(w->comm, ok);
  if (!ok && st == GF_OK) st = GF_IOERR; /* another rank failed, and said so */
  if (!ok && w->lead)                    /* nothing half-written keeps a name that looks complete */
    for (int i = 0; i < w->nfiles; i++) {
      out_file *f = &w->files[i];
      if (f->image) {
        remove_pictures(w, f);
        continue;
      }
      if (f->renamed || !f->checkpointed)
        remove_at(w->dir, f->renamed ? f->name : f->temp_name, "");
      if (f->renamed == 2) remove_at(w->dir, f->name, f->format->sidecar_suffix);
      if (sidecar_temp && sidecar_temp[i]) unlink(sidecar_temp[i]);
      f->renamed = 0;
    }
  for (int i = 0; sidecar_temp && i < w->nfiles; i++) free(sidecar_temp[i]);
  free(sidecar_temp);
  return ok ? GF_OK : (st != GF_OK ? st : GF_INTERNAL);
}

char *gf_writer_summary(const gf_writer *w) {
  gf_text b = {0};
  for (int i = 0; i < w->nfiles; i++) {
    const out_file *f = &w->files[i];
    if (f->image) {
      gf_text_printf(&b, "%s%s: %d picture%s", i ? "; " : "", f->name, f->npictures,
                     f->npictures == 1 ? "" : "s");
      continue;
    }
    int64_t ranges = 0, first = -1, last = -1;
    for (int64_t p = 0; p < f->planes; p++) {
      if (!gf_out_plane_written(f->written, p)) continue;
      if (first < 0) first = p;
      if (p == 0 || !gf_out_plane_written(f->written, p - 1)) ranges++;
      last = p;
    }
    gf_text_printf(&b, "%s%s ", i ? "; " : "", f->name);
    if (ranges == 0) {
      gf_text_printf(&b, "holds no planes");
    } else if (ranges <= 3) {
      gf_text_printf(&b, "planes ");
      gf_out_end end = file_end(f, NULL);
      gf_out_append_ranges(&b, &end, f->planes);
    } else { /* a message line, not a list: the sidecar has them all */
      gf_text_printf(&b,
                     "holds %" PRId64 " planes from %" PRId64 " to %" PRId64 " (%s%s lists them)",
                     f->nwritten, first, last, f->name, f->format->sidecar_suffix);
    }
  }
  return gf_text_take(&b);
}

/* ---- checkpoints (checkpoint.c) ---------------------------------------------- */

gf_status gf_writer_checkpoint(gf_writer *w) {
  pthread_mutex_lock(&w->lock);
  while (w->count > 0 && !atomic_load(&w->failed)) pthread_cond_wait(&w->changed, &w->lock);
  pthread_mutex_unlock(&w->lock);
  gf_status st = gf_writer_status(w);
  for (int i = 0; i < w->nfiles && st == GF_OK; i++) {
    out_file *f = &w->files[i];
    if (f->image) continue; /* pictures are whole files */
    char *name = gf_asprintf(".%s.partial", f->name);
    char *from = name ? join_path(w->dir, f->temp_name) : NULL;
    char *to = from ? join_path(w->dir, name) : NULL;
    if (!to)
      st = gf_oom(w->diag, "checkpointing the outputs");
    else if (!f->format->sync)
      st = gf_diag_error(w->diag, GF_INVALID,
                         "cannot checkpoint %s/%s: a %s output cannot be checkpointed yet (format: "
                         "raw can)",
                         w->dir, f->name, f->format->name);
    else if ((st = f->format->sync(f->state)) != GF_OK)
      ; /* the format has said why */
    else if (strcmp(name, f->temp_name) != 0 && (st = rename_into_place(w, from, to)) == GF_OK) {
      free(f->temp_name); /* the format writes on under the new name */
      f->temp_name = name;
      name = NULL;
      free(f->temp_path);
      f->target.temp_path = f->temp_path = to;
      to = NULL;
    }
    if (st == GF_OK) f->checkpointed = 1;
    free(name);
    free(from);
    free(to);
  }
  return st;
}

void gf_writer_file_state(const gf_writer *w, int file, const char **temp_name,
                          const uint8_t **written) {
  *temp_name = w->files[file].temp_name;
  *written = w->files[file].written;
}

gf_status gf_writer_adopt(gf_writer *w, int file, const char *temp_name, const uint8_t *written) {
  out_file *f = &w->files[file];
  char *temp = join_path(w->dir, temp_name), *final = join_path(w->dir, f->name);
  char *sidecar = final ? gf_asprintf("%s%s", final, f->format->sidecar_suffix) : NULL;
  char *name = gf_strdup(temp_name);
  gf_status st = temp && sidecar && name ? GF_OK : gf_oom(w->diag, "taking back the outputs");
  if (st == GF_OK && !f->format->adopt)
    st = gf_diag_error(w->diag, GF_INVALID,
                       "cannot continue %s/%s: a %s output cannot be checkpointed yet", w->dir,
                       f->name, f->format->name);
  struct stat info;
  /* Where a stop after the checkpoint left it: its temporary name, or its
   * final name (a signal or a failed check gave it one, with a sidecar). */
  if (st == GF_OK && stat(temp, &info) != 0) {
    if (stat(final, &info) != 0)
      st = gf_diag_error(w->diag, GF_NOINPUT,
                         "the checkpoint's output %s is gone (neither %s nor %s is there)", f->name,
                         temp, final);
    else if (rename(final, temp) != 0)
      st = gf_diag_error(w->diag, GF_IOERR, "cannot rename %s to %s: %s", final, temp,
                         strerror(errno));
    else
      unlink(sidecar); /* it described the stopped run */
  }
  int64_t last = -1, count = 0;
  for (int64_t p = 0; p < f->planes; p++)
    if ((written[p >> 3] >> (p & 7)) & 1) {
      last = p;
      count++;
    }
  if (st == GF_OK && (off_t)((last + 1) * (int64_t)f->plane_bytes) > info.st_size)
    st = gf_diag_error(w->diag, GF_NOINPUT,
                       "the checkpoint's output %s is shorter (%lld bytes) than the %" PRId64
                       " planes it says are written",
                       temp, (long long)info.st_size, last + 1);
  if (st == GF_OK) st = f->format->adopt(f->state, temp);
  if (st == GF_OK) { /* the empty file gf_writer_create made gives way */
    remove_at(w->dir, f->temp_name, "");
    free(f->temp_name);
    f->temp_name = name;
    name = NULL;
    free(f->temp_path);
    f->target.temp_path = f->temp_path = temp;
    temp = NULL;
    f->dev = info.st_dev;
    f->ino = info.st_ino;
    f->checkpointed = 1;
    memcpy(f->written, written, (size_t)(f->planes + 7) / 8);
    f->nwritten = count;
    atomic_fetch_add(&w->bytes_written, count * (int64_t)f->plane_bytes);
  }
  free(temp);
  free(final);
  free(sidecar);
  free(name);
  return st;
}

void gf_writer_destroy(gf_writer *w) {
  if (!w) return;
  stop_thread(w);
  for (int i = 0; i < w->nfiles; i++) {
    out_file *f = &w->files[i];
    if (f->state) {
      f->format->close(f->state);
      if (!w->finished && w->lead && !f->checkpointed) /* else finish did */
        remove_at(w->dir, f->temp_name, "");
    }
    if (f->image && f->pictures_renamed < f->npictures) remove_pictures(w, f); /* not finished */
    free(f->pictures);
    free(f->rgb);
    free(f->name);
    free(f->temp_name);
    free(f->temp_path);
    free(f->written);
  }
  for (int i = 0; i < w->nslots; i++) /* the buffers go with the memory */
    if (w->events && w->events[i]) w->backend->ops->event_destroy(w->backend, w->events[i]);
  free(w->buffers);
  free(w->slot_planes);
  free(w->slot_steps);
  free(w->events);
  free(w->free_slots);
  free(w->queue);
  free(w->files);
  unlock_folder(w);
  free(w->dir);
  pthread_mutex_destroy(&w->lock);
  pthread_cond_destroy(&w->changed);
  free(w);
}
