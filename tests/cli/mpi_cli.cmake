# An MPI job prints and writes what one process does (issue 19): sweep, search and run --samples
# under `mpirun -np 2 --oversubscribe` (tests/cli/expect_mpi_same.cmake), byte for byte; a
# command that does not share its work, and bad input, are rank 0's alone (said once).
if(NOT TRAINSIM_WITH_MPI)
  return()
endif()
set(TRAINSIM_DEFAULT_SCENARIO ${PROJECT_SOURCE_DIR}/scenarios/default.yaml)
# trainsim_mpi_test(NAME EXIT [SAME_STDERR] ARGS ... [SINGLE_ARGS ...] [FILES ...])
function(trainsim_mpi_test name expected_exit)
  cmake_parse_arguments(T "SAME_STDERR" "" "ARGS;SINGLE_ARGS;FILES" ${ARGN})
  add_test(NAME cli.mpi.${name}
    COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=2
            -DEXPECTED_EXIT=${expected_exit} "-DARGS=${T_ARGS}" "-DSINGLE_ARGS=${T_SINGLE_ARGS}"
            "-DFILES=${T_FILES}" -DSAME_STDERR=${T_SAME_STDERR} -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/mpi_cli/${name}
            -P ${CMAKE_CURRENT_LIST_DIR}/expect_mpi_same.cmake)
  # Two processes, each with TBB inside: one slot of ctest -j2 would oversubscribe the other.
  set_tests_properties(cli.mpi.${name} PROPERTIES RUN_SERIAL TRUE)
endfunction()

# Simulated, out-of-memory (mbs 32) and invalid (TP 3) rows, table, CSV and JSON.
trainsim_mpi_test(sweep_matches_one_process 0
  ARGS sweep ${TRAINSIM_DEFAULT_SCENARIO} --grid plan.micro_batch_size=1,2,4,32 --grid plan.tensor_model_parallel_size=1,2,3
       --csv OUT.csv --json OUT.json
  SINGLE_ARGS --threads 1 FILES OUT.csv OUT.json)
trainsim_mpi_test(search_matches_one_process 0
  ARGS search ${TRAINSIM_DEFAULT_SCENARIO} --top 5 --replay 9 --json OUT.json FILES OUT.json)
trainsim_mpi_test(run_samples_matches_one_process 0
  ARGS run ${TRAINSIM_DEFAULT_SCENARIO} --samples 24 --seed 5 --set variability.step_jitter_cv=0.05
       --set variability.slow_devices=1 --json OUT.json
  SINGLE_ARGS --threads 1 FILES OUT.json)
trainsim_mpi_test(run_samples_full_mode_matches_one_process 0
  ARGS run ${TRAINSIM_DEFAULT_SCENARIO} --mode full --samples 5 --seed 2 --set variability.device_speed_cv=0.03
  SINGLE_ARGS --threads 1)
# Not shared: rank 0 alone runs and prints it.
trainsim_mpi_test(run_without_samples_prints_once 0 ARGS run ${TRAINSIM_DEFAULT_SCENARIO})
# Bad input: the same exit code, the message once.
trainsim_mpi_test(sweep_bad_grid_said_once 2 SAME_STDERR
  ARGS sweep ${TRAINSIM_DEFAULT_SCENARIO} --grid plan.micro_batch_sise=1,2)
