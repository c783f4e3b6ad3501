/* task_image.c - `image: {from: REF, file: PATTERN, range: [LO, HI], slice: {axis: A, index: I}}`:
 * a PNG picture of a 2-D field instance (or of one slice of a 3-D one) at
 * every step the task runs, named by PATTERN with the step (`wave_%05d.png`),
 * through the output staging buffers and the writer thread like `output`. */
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "load.h"
#include "program.h"
#include "task_output.h"

typedef struct image_task {
  gf_output_task out; /* first: the file, and n, the number the pattern shows */
  gf_image_spec spec;
} image_task;

static const gf_key_spec image_keys[] = {
    {"from", 1, NULL}, {"file", 1, NULL}, {"range", 0, NULL}, {"slice", 0, NULL}};
static const gf_key_spec slice_keys[] = {{"axis", 1, NULL}, {"index", 1, NULL}};

/* `range: [LO, HI]`, LO < HI. */
static gf_status load_range(loader *ld, yaml_node_t *node, gf_image_spec *spec) {
  int count = node->type == YAML_SEQUENCE_NODE
                  ? (int)(node->data.sequence.items.top - node->data.sequence.items.start)
                  : 0;
  if (count != 2) return gf_load_fail_type(ld, node, "a range [LO, HI]");
  yaml_node_t *lo = gf_load_node(ld, node->data.sequence.items.start[0]),
              *hi = gf_load_node(ld, node->data.sequence.items.start[1]);
  gf_status status = gf_load_number(ld, lo, GF_NAMES_PARAMS | GF_NAMES_GRID, &spec->lo);
  if (!status) status = gf_load_number(ld, hi, GF_NAMES_PARAMS | GF_NAMES_GRID, &spec->hi);
  if (status) return status;
  if (!(spec->lo < spec->hi))
    return gf_load_fail(ld, node, "range [%g, %g] is empty: LO must be below HI", spec->lo,
                        spec->hi);
  spec->fixed_range = 1;
  return GF_OK;
}

/* What the picture shows of field `f`: the field (2-D), or the slice (3-D). */
static gf_status load_slice(loader *ld, yaml_node_t *image, yaml_node_t *node,
                            const gf_field *field, gf_image_spec *spec) {
  spec->axis = -1;
  if (field->ndim == 2) {
    if (node)
      return gf_load_fail(ld, node, "field '%s' is 2-D: its picture needs no slice", field->name);
    return GF_OK;
  }
  if (field->ndim != 3)
    return gf_load_fail(ld, image,
                        "an image shows a 2-D field or a slice of a 3-D one; field '%s' is 1-D",
                        field->name);
  if (!node)
    return gf_load_fail(ld, image,
                        "field '%s' is 3-D: say which slice to show, e.g. slice: {axis: 0, "
                        "index: %lld}",
                        field->name, (long long)(field->shape[0] / 2));
  yaml_node_t *values[2] = {NULL};
  gf_status status = gf_load_mapping(ld, node, "slice", slice_keys, 2, NULL, NULL, values);
  int64_t axis, index;
  if (status || (status = gf_load_integer(ld, values[0], GF_NAMES_PARAMS, &axis))) return status;
  if (axis < 0 || axis > 2)
    return gf_load_fail(ld, values[0], "axis must be 0, 1 or 2, got %lld", (long long)axis);
  if ((status = gf_load_integer(ld, values[1], GF_NAMES_PARAMS | GF_NAMES_GRID, &index)))
    return status;
  if (index < 0 || index >= field->shape[axis])
    return gf_load_fail(ld, values[1], "index %lld is outside axis %lld of field '%s' (0..%lld)",
                        (long long)index, (long long)axis, field->name,
                        (long long)(field->shape[axis] - 1));
  spec->axis = (int)axis;
  spec->index = index;
  return GF_OK;
}

static gf_status load(loader *ld, gf_task *task, const gf_task_yaml *yaml) {
  gf_workflow *wf = gf_load_workflow(ld);
  yaml_node_t *values[4] = {NULL};
  image_task *im = gf_calloc(1, sizeof *im);
  if (!im) return gf_oom(gf_load_diag(ld), "loading an image task");
  task->data = im;
  im->out.file = -1;
  gf_ref from;
  gf_status status = gf_load_mapping(ld, yaml->value, "image", image_keys, 4, NULL, NULL, values);
  if (status || (status = gf_load_ref(ld, values[0], &from))) return status;
  gf_task_add_access(task, from, GF_ACCESS_READ, gf_region_whole(wf, from.field), "image source");
  const gf_field *field = &wf->fields[from.field];
  if ((status = load_slice(ld, yaml->value, values[3], field, &im->spec))) return status;
  if (values[2] && (status = load_range(ld, values[2], &im->spec))) return status;
  const char *file = gf_load_scalar(values[1]);
  if (!file || !*file) return gf_load_fail_type(ld, values[1], "a file name pattern");
  size_t at = 0;
  const char *why = gf_image_pattern_parse(file, &im->spec, &at);
  if (why && strcmp(why, "out of memory") == 0)
    return gf_oom(gf_load_diag(ld), "loading an image task");
  if (why) return gf_load_fail_text(ld, values[1], at, "file pattern '%s' %s", file, why);
  status = gf_output_add_file(ld, task,
                              (gf_file){.name = (char *)file,
                                        .field = from.field,
                                        .planes = 1,
                                        .plane_bytes = field->bytes,
                                        .image = &im->spec},
                              &im->out.file);
  if (status) return status;
  gf_scope scope = {NULL, NULL, 1};
  return gf_expr_compile("n", &scope, gf_load_diag(ld), task->loc, &im->out.plane);
}

static void free_image(void *data) {
  image_task *im = data;
  if (!im) return;
  gf_expr_free(im->out.plane);
  gf_image_spec_clear(&im->spec);
  free(im);
}

const gf_task_kind gf_task_image_kind = {
    .name = "image",
    .traits = GF_KIND_MOVES_DATA,
    .load = load,
    .describe = gf_output_task_describe,
    .emit = gf_output_task_emit,
    .free = free_image,
};
