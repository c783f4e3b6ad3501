/* collect.h - `gflow collect DIR...`: the run.json files under folders as one
 * table, with the parameters that vary as columns, checked against
 * reference values on request. */
#ifndef GF_COLLECT_H
#define GF_COLLECT_H

/* argv[0] is "collect". Returns the exit status: 0, 1 (a run misses its
 * reference), GF_USAGE, GF_NOINPUT (no run.json found) or GF_INVALID. */
int gf_collect_main(int argc, char **argv);

#endif
