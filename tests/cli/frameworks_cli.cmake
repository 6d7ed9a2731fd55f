# Frameworks on the command line (issue 14): search / choose --framework, compare --frameworks,
# and validate's count of runs predicted out of memory. The JSON and CSV files are parsed.
#
# Included from cli_tests.cmake it adds the tests; each test runs this same file with
# `cmake -P` and CHECK=<name>, TRAINSIM, WORKDIR (the source tree) and OUTDIR set.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  function(trainsim_frameworks_cli_test check)
    add_test(NAME cli.${check}
      COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> -DCHECK=${check}
              -DWORKDIR=${PROJECT_SOURCE_DIR} -DOUTDIR=${CMAKE_CURRENT_BINARY_DIR}/cli_files/${check}
              -P ${CMAKE_CURRENT_LIST_DIR}/frameworks_cli.cmake)
  endfunction()
  foreach(check
      search_framework_deepspeed_proposes_no_zero2_or_3_with_pp
      search_framework_fsdp_proposes_fsdp_with_pp
      search_choose_compare_unknown_framework_is_one_line
      compare_frameworks_json_and_csv_keep_refused_rows
      compare_frameworks_search_adds_each_best_plan
      validate_counts_runs_predicted_out_of_memory_on_the_calibration_set
      validate_counts_a_run_predicted_out_of_memory
      framework_options_help_has_examples)
    trainsim_frameworks_cli_test(${check})
  endforeach()
  return()
endif()

# ---- script mode ----------------------------------------------------------------------
file(REMOVE_RECURSE "${OUTDIR}")
file(MAKE_DIRECTORY "${OUTDIR}")

# Runs trainsim with ARGN in WORKDIR; fails unless it exits with `expected`. Sets `output`.
function(run expected)
  execute_process(COMMAND ${TRAINSIM} ${ARGN} WORKING_DIRECTORY ${WORKDIR}
    RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${code}" STREQUAL "${expected}")
    message(FATAL_ERROR "trainsim ${ARGN}: expected exit ${expected}, got ${code}\n${out}${err}")
  endif()
  set(output "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect_match text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "expected to match '${regex}':\n${text}")
  endif()
endfunction()

function(expect_no_match text regex)
  if(text MATCHES "${regex}")
    message(FATAL_ERROR "expected not to match '${regex}':\n${text}")
  endif()
endfunction()

function(expect_equal actual expected what)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}: expected '${expected}', got '${actual}'")
  endif()
endfunction()

# Reads a JSON file and checks its schema_version; sets `json`.
function(read_json path)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "${path} was not written")
  endif()
  file(READ "${path}" text)
  string(JSON version GET "${text}" schema_version)
  expect_equal("${version}" 1 "${path} schema_version")
  set(json "${text}" PARENT_SCOPE)
endfunction()

# Each entry of the JSON array at `key` that pairs ZeRO-2/3 with PP > 1; sets `sharded_pp`
# (their count) and `entries` (the array's length).
function(count_sharded_with_pp json key)
  string(JSON n LENGTH "${json}" ${key})
  set(count 0)
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON zero GET "${json}" ${key} ${i} zero_stage)
      string(JSON pp GET "${json}" ${key} ${i} pipeline_model_parallel_size)
      if(zero GREATER_EQUAL 2 AND pp GREATER 1)
        math(EXPR count "${count} + 1")
      endif()
    endforeach()
  endif()
  set(sharded_pp ${count} PARENT_SCOPE)
  set(entries ${n} PARENT_SCOPE)
endfunction()

# The CSV's lines, each with the header's number of fields once quoted fields ("a, b") are
# taken as one; sets `csv_rows` (lines after the header) and `csv_lines`.
function(check_csv path header_regex)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "${path} was not written")
  endif()
  file(STRINGS "${path}" lines)
  list(GET lines 0 header)
  expect_match("${header}" "${header_regex}")
  string(REGEX MATCHALL "," commas "${header}")
  list(LENGTH commas fields)
  list(LENGTH lines n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 1 ${last})
    list(GET lines ${i} line)
    string(REGEX REPLACE "\"[^\"]*\"" "q" unquoted "${line}")
    string(REGEX MATCHALL "," c "${unquoted}")
    list(LENGTH c f)
    expect_equal("${f}" "${fields}" "${path} line ${i} fields")
  endforeach()
  set(csv_rows ${last} PARENT_SCOPE)
  set(csv_lines "${lines}" PARENT_SCOPE)
endfunction()

# A validation file with one run (the first of calibration.yaml) and one line edited.
function(one_run_file path from to)
  file(READ "${WORKDIR}/tests/validation/calibration.yaml" text)
  string(FIND "${text}" "\n- id: " first)
  math(EXPR first "${first} + 1")
  string(SUBSTRING "${text}" ${first} -1 text)
  string(FIND "${text}" "\n- id: " second)
  string(SUBSTRING "${text}" 0 ${second} text)
  string(FIND "${text}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "no '${from}' in the first run")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
  file(WRITE "${path}" "${text}\n")
endfunction()

if(CHECK STREQUAL "search_framework_deepspeed_proposes_no_zero2_or_3_with_pp")
  # DeepSpeed's PipelineEngine asserts zero stage < 2: such plans are not proposed.
  run(0 search scenarios/gpt3-175b-a100-1024.yaml --framework deepspeed --top 30 --json ${OUTDIR}/ds.json)
  expect_match("${output}" "framework deepspeed \\(DeepSpeed [^)]*\\): with PP > 1 only ZeRO-0 to ZeRO-1; [0-9]+ plans with a higher stage not searched")
  read_json(${OUTDIR}/ds.json)
  string(JSON framework GET "${json}" framework)
  expect_equal("${framework}" deepspeed "framework")
  string(JSON skipped GET "${json}" framework_skipped)
  if(NOT skipped GREATER 0)
    message(FATAL_ERROR "framework_skipped ${skipped}")
  endif()
  count_sharded_with_pp("${json}" best)
  expect_equal("${entries}" 30 "plans proposed")
  expect_equal("${sharded_pp}" 0 "plans with ZeRO-2/3 and PP > 1")
  # The default is the scenario's framework, and it is said.
  run(0 search scenarios/gpt3-175b-a100-1024.yaml --top 1 --replay 1)
  expect_match("${output}" "framework megatron-core \\(")

elseif(CHECK STREQUAL "search_framework_fsdp_proposes_fsdp_with_pp")
  # torchtitan runs FSDP with PP: nothing is skipped, and with ZeRO-3 kept such plans come out.
  run(0 search scenarios/gpt3-175b-a100-1024.yaml --framework fsdp --top 5 --json ${OUTDIR}/gpt3.json)
  expect_match("${output}" "framework fsdp \\(torchtitan [^\n]*\\): runs every ZeRO stage with pipeline parallelism")
  read_json(${OUTDIR}/gpt3.json)
  string(JSON skipped GET "${json}" framework_skipped)
  expect_equal("${skipped}" 0 "fsdp framework_skipped")
  run(0 search scenarios/default.yaml --set plan.global_batch_size=16 --set plan.use_distributed_optimizer=false
      --set plan.zero_stage=3 --set plan.pipeline_model_parallel_size=1 --keep optimizer --framework fsdp
      --top 1000 --replay 1000 --json ${OUTDIR}/fsdp.json)
  read_json(${OUTDIR}/fsdp.json)
  count_sharded_with_pp("${json}" best)
  if(NOT sharded_pp GREATER 0)
    message(FATAL_ERROR "no FSDP plan with PP among ${entries} proposed")
  endif()

elseif(CHECK STREQUAL "search_choose_compare_unknown_framework_is_one_line")
  set(one_line "^--framework: unknown framework 'jax'; valid: megatron-core, megatron-lm, deepspeed, fsdp, mindspeed, deepspeed-2021, bigscience-megatron-deepspeed, nemo, mindformers, bmtrain, llm-foundry, llm-foundry-2022\n$")
  run(2 search scenarios/default.yaml --framework jax)
  expect_match("${output}" "${one_line}")
  run(2 choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml --framework jax)
  expect_match("${output}" "${one_line}")
  run(2 compare scenarios/default.yaml --frameworks fsdp,jax)
  expect_match("${output}" "^--frameworks: unknown framework 'jax'; valid: megatron-core, [^\n]*\n$")

elseif(CHECK STREQUAL "compare_frameworks_json_and_csv_keep_refused_rows")
  # FSDP (ZeRO-3) with PP: torchtitan runs it, Megatron and DeepSpeed's pipeline engine do not.
  run(0 compare scenarios/gpt3-175b-a100-1024.yaml --set plan.framework=fsdp --set plan.use_distributed_optimizer=false
      --set plan.zero_stage=3 --frameworks megatron-core,deepspeed,fsdp --json ${OUTDIR}/f.json --csv ${OUTDIR}/f.csv)
  expect_match("${output}" "deepspeed +scenario invalid: plan.zero_stage: ZeRO-3 cannot be combined with pipeline parallelism in deepspeed")
  expect_match("${output}" "\nfsdp +scenario +[0-9]+\\.[0-9]+ ")
  expect_match("${output}" "\nfastest: fsdp")
  read_json(${OUTDIR}/f.json)
  string(JSON n LENGTH "${json}" rows)
  expect_equal("${n}" 3 "rows")
  foreach(i_framework_status 0:megatron-core:invalid 1:deepspeed:invalid 2:fsdp:ok)
    string(REPLACE ":" ";" parts ${i_framework_status})
    list(GET parts 0 i)
    list(GET parts 1 framework)
    list(GET parts 2 status)
    string(JSON f GET "${json}" rows ${i} framework)
    expect_equal("${f}" ${framework} "rows[${i}].framework")
    string(JSON s GET "${json}" rows ${i} status)
    expect_equal("${s}" ${status} "rows[${i}].status")
  endforeach()
  string(JSON reason GET "${json}" rows 1 reason)
  expect_match("${reason}" "pipeline parallelism in deepspeed")
  string(JSON step GET "${json}" rows 2 step_time_s)
  string(JSON compute GET "${json}" rows 2 compute_s)
  if(NOT step GREATER compute OR NOT compute GREATER 0)
    message(FATAL_ERROR "fsdp step ${step} s, compute ${compute} s")
  endif()
  string(JSON stages LENGTH "${json}" rows 2 stage_peak_memory_gib)
  expect_equal("${stages}" 16 "fsdp stage peaks")
  check_csv(${OUTDIR}/f.csv "^framework,plan_source,status,step_time_s,")
  expect_equal("${csv_rows}" 3 "CSV rows")
  list(GET csv_lines 2 ds)
  expect_match("${ds}" "^deepspeed,scenario,invalid,,")
  list(GET csv_lines 3 fsdp)
  expect_match("${fsdp}" "^fsdp,scenario,ok,[0-9.e+-]+,")
  # --csv writes the schedule rows too (a row that did not run: empty metrics, its reason);
  # --frameworks and --schedules exclude each other.
  run(0 compare scenarios/default.yaml --schedules 1f1b,dualpipe --csv ${OUTDIR}/x.csv)
  check_csv(${OUTDIR}/x.csv "^schedule,virtual_pipeline_model_parallel_size,status,step_time_s,")
  expect_equal("${csv_rows}" 2 "schedule CSV rows")
  list(GET csv_lines 1 one_f_one_b)
  expect_match("${one_f_one_b}" "^1f1b,1,ok,[0-9.e+-]+,[0-9.e+-]+,")
  list(GET csv_lines 2 dualpipe)
  expect_match("${dualpipe}" "^dualpipe,1,out of memory,,,,,,,[0-9.]+,[0-9.]+ [0-9.]+,stage 0 needs ")
  run(2 compare scenarios/default.yaml --schedules 1f1b --frameworks fsdp)

elseif(CHECK STREQUAL "compare_frameworks_search_adds_each_best_plan")
  run(0 compare scenarios/default.yaml --set plan.global_batch_size=16 --frameworks deepspeed,fsdp --search
      --json ${OUTDIR}/s.json)
  read_json(${OUTDIR}/s.json)
  string(JSON n LENGTH "${json}" rows)
  expect_equal("${n}" 4 "rows")
  foreach(i_source 0:scenario 1:scenario 2:search 3:search)
    string(REPLACE ":" ";" parts ${i_source})
    list(GET parts 0 i)
    list(GET parts 1 source)
    string(JSON s GET "${json}" rows ${i} plan_source)
    expect_equal("${s}" ${source} "rows[${i}].plan_source")
  endforeach()
  # The searched row is the plan `search --framework deepspeed` ranks first.
  run(0 search scenarios/default.yaml --set plan.global_batch_size=16 --framework deepspeed --top 1 --json ${OUTDIR}/best.json)
  file(READ ${OUTDIR}/best.json best)
  string(JSON best_step GET "${best}" best 0 step_time_s)
  string(JSON row_step GET "${json}" rows 2 step_time_s)
  expect_equal("${row_step}" "${best_step}" "deepspeed searched row's step time")
  string(JSON best_plan GET "${best}" best 0 plan)
  string(JSON row_plan GET "${json}" rows 2 plan)
  expect_equal("${row_plan}" "${best_plan}" "deepspeed searched row's plan")

elseif(CHECK STREQUAL "validate_counts_runs_predicted_out_of_memory_on_the_calibration_set")
  # Every calibration run ran: a prediction that one does not fit is a wrong verdict, and
  # there are none (nemo2407-h100-fp8-GPT3-20B-64gpu was one at 80.3 GiB of 80.0 until NeMo's
  # optimizer kept its bf16 gradient buffer: plan.framework nemo, 2 bytes per parameter).
  run(0 validate --json ${OUTDIR}/v.json)
  foreach(family_count A100:0 H100:0 B200:0 910B:0)
    string(REPLACE ":" ";" pair ${family_count})
    list(GET pair 0 family)
    list(GET pair 1 count)
    expect_match("${output}" "\n${family} MAPE: [0-9.]+% over [0-9]+ runs \\(worst: [^)]*\\); ${count} predicted out of memory\n")
  endforeach()
  expect_no_match("${output}" "runs predicted out of memory \\(they ran: wrong verdicts\\)")
  read_json(${OUTDIR}/v.json)
  string(JSON families LENGTH "${json}" families)
  expect_equal("${families}" 4 "families")
  math(EXPR last "${families} - 1")
  set(wrong 0)
  foreach(i RANGE ${last})
    string(JSON oom GET "${json}" families ${i} predicted_oom)
    string(JSON ids LENGTH "${json}" families ${i} predicted_oom_ids)
    expect_equal("${ids}" "${oom}" "predicted_oom_ids listed")
    math(EXPR wrong "${wrong} + ${oom}")
  endforeach()
  expect_equal("${wrong}" 0 "runs predicted out of memory over all families")
  # The row's own verdict, in every simulated row.
  string(JSON rows LENGTH "${json}" rows)
  math(EXPR last "${rows} - 1")
  set(not_fitting 0)
  foreach(i RANGE ${last})
    string(JSON fits ERROR_VARIABLE no_verdict GET "${json}" rows ${i} predicted_fits)
    if(fits STREQUAL "OFF")
      math(EXPR not_fitting "${not_fitting} + 1")
      string(JSON id GET "${json}" rows ${i} id)
      message(SEND_ERROR "${id} is predicted out of memory (it ran)")
    endif()
  endforeach()
  expect_equal("${not_fitting}" 0 "rows with predicted_fits false")

elseif(CHECK STREQUAL "validate_counts_a_run_predicted_out_of_memory")
  # The first run with a 10x hidden size (about 150B parameters on TP1 PP1): it cannot fit in
  # 80 GB, and the count says so.
  one_run_file(${OUTDIR}/big.yaml "2304" "23040")  # the row and its quoted script
  run(0 validate ${OUTDIR}/big.yaml --json ${OUTDIR}/big.json)
  expect_match("${output}" "A100 MAPE: [0-9.]+% over 1 runs \\([^)]*\\); 1 predicted out of memory\n")
  expect_match("${output}" "A100 runs predicted out of memory \\(they ran: wrong verdicts\\): narayanan21-t1-1.7B\n")
  read_json(${OUTDIR}/big.json)
  string(JSON oom GET "${json}" families 0 predicted_oom)
  expect_equal("${oom}" 1 "predicted_oom")
  string(JSON id GET "${json}" families 0 predicted_oom_ids 0)
  expect_equal("${id}" narayanan21-t1-1.7B "predicted_oom_ids[0]")
  string(JSON fits GET "${json}" rows 0 predicted_fits)
  expect_equal("${fits}" OFF "rows[0].predicted_fits")

elseif(CHECK STREQUAL "framework_options_help_has_examples")
  run(0 search --help)
  expect_match("${output}" "--framework TEXT[^\n]*only plans this framework runs")
  expect_match("${output}" "trainsim search scenarios/gpt3-175b-a100-1024.yaml --framework deepspeed")
  run(0 choose --help)
  expect_match("${output}" "--framework TEXT")
  expect_match("${output}" "--framework fsdp")
  run(0 compare --help)
  expect_match("${output}" "--frameworks TEXT")
  expect_match("${output}" "--search")
  expect_match("${output}" "trainsim compare scenarios/gpt3-175b-a100-1024.yaml --frameworks megatron-core,deepspeed,fsdp")

else()
  message(FATAL_ERROR "unknown CHECK '${CHECK}'")
endif()
message(STATUS "ok: ${CHECK}")
