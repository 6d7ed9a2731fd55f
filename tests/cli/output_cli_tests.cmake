# Command-line tests of output files, numeric options and exit codes: every input gets exit 0
# with finite numbers (a plan that does not fit is an answer) or exit 2 with one line per
# problem, and nothing half-written. Each test runs in a fresh directory of its own.
set(TRAINSIM_EXPECT_OUTPUT ${CMAKE_CURRENT_LIST_DIR}/expect_output.cmake)
set(TRAINSIM_DEFAULT_SCENARIO ${PROJECT_SOURCE_DIR}/scenarios/default.yaml)

# trainsim_output_test(NAME EXIT REGEX ARGS ... [COPY ...] [ABSENT ...] [SAME ...] [JSON_FILE f JSON_STATUS s]
#                      [STDOUT_STATUS s]); see expect_output.cmake.
function(trainsim_output_test name expected_exit regex)
  cmake_parse_arguments(T "" "JSON_FILE;JSON_STATUS;STDOUT_STATUS" "ARGS;COPY;ABSENT;SAME" ${ARGN})
  add_test(NAME cli.${name}
    COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> -DEXPECTED_EXIT=${expected_exit}
            "-DREGEX=${regex}" "-DARGS=${T_ARGS}" -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/output_cli/${name}
            "-DCOPY=${T_COPY}" "-DABSENT=${T_ABSENT}" "-DSAME=${T_SAME}" "-DJSON_FILE=${T_JSON_FILE}"
            "-DJSON_STATUS=${T_JSON_STATUS}" "-DSTDOUT_STATUS=${T_STDOUT_STATUS}"
            -P ${TRAINSIM_EXPECT_OUTPUT})
endfunction()

# Output paths are checked before any work: a bad --csv path, and nothing of the sweep ran (no table).
trainsim_output_test(sweep_bad_csv_path_fails_before_the_sweep 2
  "^missing/s\\.csv: --csv: directory 'missing' does not exist; valid: a file in an existing directory\n$"
  ARGS sweep ${TRAINSIM_DEFAULT_SCENARIO} --grid plan.micro_batch_size=1,2 --csv missing/s.csv)
# One bad output of several: the good one is not left behind.
trainsim_output_test(run_bad_trace_leaves_no_json 2
  "^missing/t\\.json: --trace: directory 'missing' does not exist; valid: a file in an existing directory\n$"
  ARGS run s.yaml --json ok.json --trace missing/t.json
  COPY ${TRAINSIM_DEFAULT_SCENARIO}=s.yaml ABSENT ok.json)
# An output on an input: the scenario, or the model file it resolves to, is never overwritten.
trainsim_output_test(run_json_on_the_scenario_is_refused 2
  "^s\\.yaml: --json: is an input of this command \\('s\\.yaml'\\), it would be overwritten; valid: another path\n$"
  ARGS run s.yaml --json s.yaml
  COPY ${TRAINSIM_DEFAULT_SCENARIO}=s.yaml SAME s.yaml=${TRAINSIM_DEFAULT_SCENARIO})
trainsim_output_test(run_json_on_the_model_is_refused 2
  "^\\./m\\.yaml: --json: is an input of this command \\('m\\.yaml'\\), it would be overwritten; valid: another path\n$"
  ARGS run s.yaml --set model=m.yaml --json ./m.yaml
  COPY ${TRAINSIM_DEFAULT_SCENARIO}=s.yaml ${PROJECT_SOURCE_DIR}/models/llama2-7b.yaml=m.yaml
  SAME m.yaml=${PROJECT_SOURCE_DIR}/models/llama2-7b.yaml)
trainsim_output_test(sweep_csv_on_a_grid_hardware_file_is_refused 2
  "^h\\.yaml: --csv: is an input of this command"
  ARGS sweep s.yaml --grid hardware=h.yaml --csv h.yaml
  COPY ${TRAINSIM_DEFAULT_SCENARIO}=s.yaml ${PROJECT_SOURCE_DIR}/hardware/ascend-910b3.yaml=h.yaml
  SAME h.yaml=${PROJECT_SOURCE_DIR}/hardware/ascend-910b3.yaml)
# Every output problem at once, together with the scenario's own.
trainsim_output_test(every_output_problem_is_reported_at_once 2
  "^\\.: --json: is a directory; valid: a file path inside a directory\na\\.html: --html: is also the file of --trace; valid: a different file for each output\n--set: plan\\.micro_batch_sise: unknown key"
  ARGS run s.yaml --json . --trace a.html --html a.html --set plan.micro_batch_sise=2
  COPY ${TRAINSIM_DEFAULT_SCENARIO}=s.yaml ABSENT a.html)
# "-" is stdout: the JSON alone there (the summary goes to stderr), and no file named "-".
trainsim_output_test(run_json_dash_is_stdout 0 "step time"
  ARGS run s.yaml --json - COPY ${TRAINSIM_DEFAULT_SCENARIO}=s.yaml ABSENT - STDOUT_STATUS ok)
trainsim_output_test(two_outputs_on_stdout_are_bad_input 2
  "^--json: a second output to standard output \\(-\\); valid: at most one output may be -\n$"
  ARGS ops ${TRAINSIM_DEFAULT_SCENARIO} --json - --csv -)
trainsim_output_test(files_are_written_whole 0 "step time"
  ARGS run s.yaml --json out.json --html out.html COPY ${TRAINSIM_DEFAULT_SCENARIO}=s.yaml
  JSON_FILE out.json JSON_STATUS ok)

# Out of memory is an answer: exit 0, where it overflows, a change that fits, and the JSON status.
trainsim_output_test(run_out_of_memory_is_an_answer 0
  "DOES NOT FIT.*does not fit: stage 1 needs 314\\.9 GiB of 64\\.0 GiB HBM \\(250\\.9 GiB over\\); largest part: activations 274\\.9 GiB \\(1 micro-batch in flight\\).*fits with --set plan\\.micro_batch_size=2: stage 0 needs 63\\.9 GiB"
  ARGS run s.yaml --set plan.micro_batch_size=32 --json oom.json --trace oom.trace.json
  COPY ${TRAINSIM_DEFAULT_SCENARIO}=s.yaml JSON_FILE oom.json JSON_STATUS does_not_fit)
trainsim_output_test(memory_out_of_memory_json_has_the_status 0
  "OUT OF MEMORY\ndoes not fit: stage 1 needs 314\\.9 GiB"
  ARGS memory ${TRAINSIM_DEFAULT_SCENARIO} --set plan.micro_batch_size=32 --json m.json
  JSON_FILE m.json JSON_STATUS does_not_fit)
trainsim_output_test(memory_json_dash_is_stdout 0 "fits"
  ARGS memory ${TRAINSIM_DEFAULT_SCENARIO} --json - ABSENT - STDOUT_STATUS ok)
# The distributed optimizer is already on and ZeRO-2/3 does not go with PP: neither is suggested,
# nor a smaller micro batch when weights + gradients + optimizer alone exceed HBM.
trainsim_output_test(memory_advice_does_not_repeat_what_is_on 0
  "alone exceed 80\\.0 GiB: a smaller micro batch or recompute cannot make it fit\n  fits with --set plan\\.pipeline_model_parallel_size=8: stage 0 needs 55\\.6 GiB, estimated step [0-9.]+ s \\([0-9.]+ s as planned\\)\n  also fits: --set plan\\.tensor_model_parallel_size=8 \\([0-9.]+ GiB, estimated step [0-9.]+ s\\)\n$"
  ARGS memory ${PROJECT_SOURCE_DIR}/scenarios/gpt3-175b-a100-1024.yaml --set plan.pipeline_model_parallel_size=2
       --set plan.virtual_pipeline_model_parallel_size=1 --set plan.schedule=1f1b --set plan.tensor_model_parallel_size=4)

# validate checks its hardware directory before any work.
trainsim_cli_test(validate_missing_hardware_dir_is_bad_input 2
  "^--hardware-dir: '/nonexistent' is not a directory; valid: a directory with the hardware files, e.g\\. .*/hardware\n$"
  validate --hardware-dir /nonexistent)

# Numeric options: finite and in range, or exit 2 naming the option and the valid range.
trainsim_cli_test(choose_nan_tokens_and_infinite_pue_are_bad_input 2
  "^--tokens: nan is not a token budget; valid: a finite number > 0 and <= 1e18, e\\.g\\. 1e12\n--pue: inf is out of range; valid: a number from 1 \\(board power only\\) to 3 \\(facility power / IT power\\), e\\.g\\. 1\\.2\n$"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml --tokens nan --pue inf)
trainsim_cli_test(search_negative_tokens_is_bad_input 2
  "^--tokens: -1 is not a token budget; valid: a finite number > 0 and <= 1e18, e\\.g\\. 1e12\n$"
  search scenarios/default.yaml --tokens -1)
trainsim_cli_test(search_zero_devices_is_bad_input 2 "^--devices: 0 is out of range; valid: 1 to 1048576\n$"
  search scenarios/default.yaml --devices 0)
trainsim_cli_test(search_negative_devices_is_bad_input 2
  "^--devices: -1 is out of range; valid: 1 to 1048576 \\(the scenario's num_devices when not given\\)\n$"
  search scenarios/default.yaml --devices -1)
trainsim_cli_test(search_top_and_replay_must_be_positive 2
  "^--top: 0 is out of range; valid: >= 1 plans to print\n--replay: 0 is out of range; valid: >= 1 candidates to replay\n$"
  search scenarios/default.yaml --top 0 --replay 0)
trainsim_cli_test(choose_zero_devices_is_bad_input 2 "^--devices: 0 is out of range; valid: 1 to 1048576\n$"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml --devices 0)
trainsim_cli_test(sweep_threads_out_of_range_is_bad_input 2
  "^--threads: 100000 is out of range; valid: 0 \\(all cores\\) to 1024\n$"
  sweep scenarios/default.yaml --grid plan.micro_batch_size=1 --threads 100000)
trainsim_cli_test(scale_device_count_beyond_any_scenario_is_bad_input 2
  "^--devices: 100000000 is out of range; valid: device counts from 1 to 1048576\n$"
  scale scenarios/default.yaml --devices 8,100000000)
trainsim_cli_test(collective_infinite_size_range_is_bad_input 2
  "^--sizes: '1e300TiB' is out of range; valid: sizes from 1 B to 1 PiB, e\\.g\\. 1MiB:4GiB\n$"
  collective --hardware hardware/a100-80gb.yaml --sizes 1B:1e300TiB)
trainsim_cli_test(collective_device_count_beyond_any_scenario_is_bad_input 2
  "^--devices: 100000000 is out of range; valid: device counts from 1 to 1048576\n$"
  collective --hardware hardware/a100-80gb.yaml --devices 100000000)
trainsim_cli_test(usage_error_is_one_line 2
  "^trainsim: Could not convert: --top = abc \\(not a value of the option's type, or past its range\\); valid: see trainsim search --help\n$"
  search scenarios/default.yaml --top abc)
# --help states the exit codes that are true: 0, 2, 3 (no 1).
trainsim_cli_test(help_states_the_exit_codes 0
  "Exit codes: 0 an answer \\(a plan that does not fit in memory too[^\n]*\n  2 bad input \\(one line per problem: file:line:col: key\\.path: what; valid: \\.\\.\\.\\), 3 internal error"
  --help)
# A name for the process's own stdout is written through it, after the printed summary, never
# replaced (renaming a temporary onto /dev/stdout replaced the symlink, as root for the machine).
trainsim_cli_test(memory_json_to_dev_stdout 0 "HBM: fits.*\"fits\": true"
                  memory scenarios/default.yaml --json /dev/stdout)
