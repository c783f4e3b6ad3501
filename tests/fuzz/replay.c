/* replay.c - runs the fuzz target over files without libFuzzer, so any
 * compiler (gcc with the project's sanitizers, in CTest's fuzz_replay) can
 * check that the regressions and the seed corpus pass cleanly.
 *
 * usage: fuzz_replay FILE_OR_FOLDER...   (a folder: its *.yaml files, sorted)
 * Prints `replayed N inputs` and exits 0; a crash, a sanitizer report or a
 * leak ends the process with the sanitizer's status instead.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    perror(path);
    return 1;
  }
  size_t capacity = 4096, len = 0;
  uint8_t *data = malloc(capacity);
  size_t n;
  while (data && (n = fread(data + len, 1, capacity - len, file)) > 0) {
    len += n;
    if (len == capacity) data = realloc(data, capacity *= 2);
  }
  int failed = !data || ferror(file);
  fclose(file);
  if (failed) {
    fprintf(stderr, "%s: cannot read\n", path);
    free(data);
    return 1;
  }
  LLVMFuzzerTestOneInput(data, len);
  free(data);
  return 0;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_yaml(const struct dirent *entry) {
  return has_suffix(entry->d_name, ".yaml");
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int inputs = 0, errors = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      errors++;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      errors += replay_file(argv[i]);
      inputs++;
      continue;
    }
    struct dirent **entries = NULL;
    int count = scandir(argv[i], &entries, is_yaml, by_name);
    if (count < 0) {
      perror(argv[i]);
      errors++;
      continue;
    }
    for (int e = 0; e < count; e++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], entries[e]->d_name);
      errors += replay_file(path);
      inputs++;
      free(entries[e]);
    }
    free(entries);
  }
  printf("replayed %d inputs, %d unreadable\n", inputs, errors);
  return errors ? 1 : 0;
}
