# Integration tests: the gflow command end to end.
add_executable(wave2d_seed reference/wave2d_seed.c)
target_link_libraries(wave2d_seed PRIVATE m)
add_executable(blur_seed reference/blur_seed.c)
target_link_libraries(blur_seed PRIVATE m)
add_executable(compare_raw reference/compare_raw.c)
target_link_libraries(compare_raw PRIVATE m)

add_test(NAME wave2d_end_to_end
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/wave2d.sh $<TARGET_FILE:gflow>
          $<TARGET_FILE:wave2d_seed> $<TARGET_FILE:compare_raw> ${PROJECT_SOURCE_DIR})
# The built-in kernels: gflow kernels NAME, their workflows, a declared
# stencil against the built-in kernel of its scheme.
add_test(NAME kernels_end_to_end
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/kernels.sh $<TARGET_FILE:gflow>
          $<TARGET_FILE:compare_raw> ${PROJECT_SOURCE_DIR})
add_test(NAME cli
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/cli.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
# Hostile inputs and faults: input limits, runaway hooks, a file size limit,
# an output removed underneath, SIGINT/SIGTERM, the numerical check.
add_test(NAME faults
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/faults.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
# Allocation failure at every allocation of `gflow validate` and a short
# `gflow run`: exit 70 with `out of memory`, no crash, no leak, no output.
if(GFLOW_ALLOC_FAULTS)
  add_test(NAME out_of_memory
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/out_of_memory.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
endif()
# Seeing a run: the timeline (every operation of the traced steps once, on its
# stream's track, the workflow's dependencies as flow arrows) and progress lines.
add_test(NAME observe
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/observe.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
# gflow sweep run here: a product and a zip with -j 2, the table, re-runs that
# skip what is complete, a failing point, spec errors, a --slurm --dry-run script.
add_test(NAME sweep
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/sweep.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
# Batch use: run.json against the command line, --out templates, gflow collect
# and its references, an interrupted run's run.json.
add_test(NAME batch
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/batch.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
# Scratch fields and the pool: the seed's race (the naive pool loses it, the
# resource-aware pool writes the preallocated run's bits) and the wave with
# per-step temporaries under every schedule.
add_test(NAME scratch
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/scratch.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
# scripts/test.sh's stages: every stage runs, the summary counts for real.
add_test(NAME test_stages
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/stages.sh ${PROJECT_SOURCE_DIR})
# format: hdf5 read back with h5dump: the raw run's values bit for bit, the
# attributes and scales, the XDMF, an interrupted run, a full disk, bad values.
add_test(NAME hdf5
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/hdf5.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
set_tests_properties(hdf5 PROPERTIES SKIP_RETURN_CODE 77)
# Batched snapshot IO: the same bits under every schedule and batch, raw and
# hdf5; the staging budget held at planes the old 8-plane rule exceeded.
add_test(NAME output_batch
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/output_batch.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
# schedule: graph, runs of stream work captured and replayed: events' bits
# for every workflow, graphs launched again, the check's step, --trace.
add_test(NAME graph_schedule
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/graph_schedule.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
# Runs split over MPI ranks (mpirun, CPU backend): bit-identical to one
# process and to an independent reference, errors, stopping together.
if(MPI_C_FOUND)
  add_test(NAME mpi
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/mpi.sh $<TARGET_FILE:gflow>
            $<TARGET_FILE:blur_seed> ${PROJECT_SOURCE_DIR})
endif()
# Checkpoint and restart: under every schedule a run killed after a periodic
# checkpoint, one stopped by SIGUSR1 and one by SIGTERM restart bit-identical to
# an uninterrupted run; a stateful Lua hook with and without save_state;
# corrupted and mismatched checkpoints refused; nothing to do when complete.
add_test(NAME checkpoint
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/checkpoint.sh $<TARGET_FILE:gflow> ${PROJECT_SOURCE_DIR})
