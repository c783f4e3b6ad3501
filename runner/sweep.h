/* sweep.h - `gflow sweep`: a workflow run at every point of a parameter grid.
 *
 * A sweep is a list of points, each a set of `--set` overrides: the cartesian
 * product of the `matrix:` keys (and `-m`), with the keys of a `zip:` group
 * (and `-z`) advancing together. Every point becomes a folder holding the
 * resolved workflow it runs (config.yaml) and that run's outputs; the points
 * run here, N at a time, or as a Slurm job array (`--slurm`).
 */
#ifndef GF_SWEEP_H
#define GF_SWEEP_H

/* The whole command: argv[1] is "sweep". Returns the exit status. */
int gf_sweep_main(int argc, char **argv);

#endif
