/* outdir.h - the output folder from a `--out` template. */
#ifndef GF_OUTDIR_H
#define GF_OUTDIR_H

#include "error.h"
#include "workflow.h"

/* Expands `out/{name}/{grid.shape}-{schedule}`: each {KEY} is a dotted key
 * of the resolved workflow, written filesystem-safely (flatkeys.h); {rank}
 * is reserved. An unknown key is GF_USAGE, naming it and the keys there are.
 * *out is a heap string the caller frees. */
gf_status gf_outdir_expand(const char *tmpl, const gf_workflow *wf, gf_diag *diag, char **out);

#endif
