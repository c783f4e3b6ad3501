/* tasks.c - the list of task kinds, and the regions their accesses name. */
#include <string.h>

#include "task.h"
#include "workflow.h"

const gf_task_kind *const gf_task_kinds[] = {
    &gf_task_kernel_kind, &gf_task_copy_kind,  &gf_task_hook_kind,
    &gf_task_output_kind, &gf_task_image_kind,
};
const int gf_task_kind_count = (int)(sizeof gf_task_kinds / sizeof gf_task_kinds[0]);

gf_region gf_region_whole(const gf_workflow *wf, int field) {
  gf_region r;
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    r.lo[d] = 0;
    r.hi[d] = wf->fields[field].shape[d];
  }
  return r;
}

gf_region gf_region_interior(const gf_workflow *wf, int field) {
  gf_region r = gf_region_whole(wf, field);
  for (int d = 0; d < wf->fields[field].ndim; d++) {
    r.lo[d] = wf->halo;
    r.hi[d] = r.hi[d] - wf->halo > r.lo[d] ? r.hi[d] - wf->halo : r.lo[d];
  }
  return r;
}

int gf_region_overlaps(const gf_region *a, const gf_region *b) {
  for (int d = 0; d < GF_MAX_DIMS; d++)
    if (a->hi[d] <= b->lo[d] || b->hi[d] <= a->lo[d] || a->lo[d] >= a->hi[d] ||
        b->lo[d] >= b->hi[d])
      return 0;
  return 1;
}

int gf_region_contains(const gf_region *outer, const gf_region *inner) {
  for (int d = 0; d < GF_MAX_DIMS; d++)
    if (inner->lo[d] < outer->lo[d] || inner->hi[d] > outer->hi[d]) return 0;
  return 1;
}

void gf_task_add_access(gf_task *task, gf_ref ref, gf_access access, gf_region region,
                        const char *what) {
  if (task->naccess == GF_MAX_TASK_REFS) return; /* no kind declares more */
  task->access[task->naccess++] =
      (gf_access_decl){.ref = ref, .access = access, .region = region, .what = what};
}
