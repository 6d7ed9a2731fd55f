# Runnable plans and JSON for every command (issue 20): search / choose --launch, and --json on
# explain, max-batch and collective, parsed and checked against the text.
#
# Included from cli_tests.cmake it adds the tests; each test runs this same file with
# `cmake -P` and CHECK=<name>, TRAINSIM, WORKDIR (the source tree) and OUTDIR set.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  function(trainsim_launch_cli_test check)
    add_test(NAME cli.${check}
      COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> -DCHECK=${check}
              -DWORKDIR=${PROJECT_SOURCE_DIR} -DOUTDIR=${CMAKE_CURRENT_BINARY_DIR}/cli_files/${check}
              -P ${CMAKE_CURRENT_LIST_DIR}/launch_cli.cmake)
  endfunction()
  foreach(check
      search_launch_megatron_writes_args_beside_each_scenario
      search_launch_deepspeed_writes_a_ds_config_that_multiplies_out
      search_launch_torchtitan_searches_fsdp_plans
      search_launch_inexpressible_option_is_exit_2_naming_who_can
      choose_launch_prints_each_hardware_plan
      explain_json_matches_the_text
      max_batch_json_matches_the_text
      collective_json_matches_the_text)
    trainsim_launch_cli_test(${check})
  endforeach()
  return()
endif()

# ---- script mode ----------------------------------------------------------------------
file(REMOVE_RECURSE "${OUTDIR}")
file(MAKE_DIRECTORY "${OUTDIR}")

# Runs trainsim with ARGN in WORKDIR; fails unless it exits with `expected`. Sets `output`
# (stdout and stderr), `stdout` and `stderr`.
function(run expected)
  execute_process(COMMAND ${TRAINSIM} ${ARGN} WORKING_DIRECTORY ${WORKDIR}
    RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${code}" STREQUAL "${expected}")
    message(FATAL_ERROR "trainsim ${ARGN}: expected exit ${expected}, got ${code}\n${out}${err}")
  endif()
  set(output "${out}${err}" PARENT_SCOPE)
  set(stdout "${out}" PARENT_SCOPE)
  set(stderr "${err}" PARENT_SCOPE)
endfunction()

function(expect_match text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "expected to match '${regex}':\n${text}")
  endif()
endfunction()

function(expect_equal actual expected what)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}: expected '${expected}', got '${actual}'")
  endif()
endfunction()

# The JSON's schema_version is `schema` and its trainsim_version is `trainsim --version`'s.
function(check_versions json what schema_expected)
  string(JSON schema GET "${json}" schema_version)
  expect_equal("${schema}" "${schema_expected}" "${what} schema_version")
  execute_process(COMMAND ${TRAINSIM} --version OUTPUT_VARIABLE version_line)
  string(JSON version GET "${json}" trainsim_version)
  expect_equal("trainsim ${version}\n" "${version_line}" "${what} trainsim_version")
endfunction()

# "1.2345678" -> the regex of its text printed with `decimals` decimals, the last digit free
# (printf rounds it): "1\\.234[0-9]".
function(rounded_regex number decimals out)
  string(REGEX MATCH "^-?[0-9]+" whole "${number}")
  math(EXPR kept "${decimals} - 1")
  string(REGEX MATCH "\\.[0-9]*" fraction "${number}.")
  string(SUBSTRING "${fraction}0000000000" 1 ${kept} digits)
  set(${out} "${whole}\\.${digits}[0-9]" PARENT_SCOPE)
endfunction()

# The small search every launch check uses: LLaMA-2 7B on 8 x 910B3, global batch 16.
set(small_search search scenarios/default.yaml --set plan.global_batch_size=16 --top 2 --replay 16)

if(CHECK STREQUAL "search_launch_megatron_writes_args_beside_each_scenario")
  run(0 ${small_search} --keep schedule --launch megatron --emit-scenarios ${OUTDIR}/plans --json ${OUTDIR}/s.json)
  expect_match("${output}" "\n# megatron \\(megatron-core\\): [^\n]*\n# 8 devices = 1 x 8; DP [0-9]+ follows from them\\. Argument names checked in NVIDIA/Megatron-LM @ [0-9a-f]+ ")
  expect_match("${output}" "\ntorchrun --nnodes 1 --nproc_per_node 8 pretrain_gpt\\.py \\\\\n    --tensor-model-parallel-size [1-8] \\\\\n    --pipeline-model-parallel-size [0-9]+ \\\\\n")
  expect_match("${output}" "wrote 2 launch files beside them \\([^)]*plans/1\\.megatron\\.args")
  foreach(i 1 2)
    if(NOT EXISTS ${OUTDIR}/plans/${i}.megatron.args)
      message(FATAL_ERROR "plans/${i}.megatron.args was not written")
    endif()
  endforeach()
  # The file of plan #1 is the printed text, and its sizes are the plan's (search --json).
  file(READ ${OUTDIR}/plans/1.megatron.args args)
  string(FIND "${output}" "${args}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "plans/1.megatron.args is not what was printed:\n${args}")
  endif()
  file(READ ${OUTDIR}/s.json json)
  foreach(key_flag tensor_model_parallel_size:--tensor-model-parallel-size
                   pipeline_model_parallel_size:--pipeline-model-parallel-size micro_batch_size:--micro-batch-size)
    string(REPLACE ":" ";" parts ${key_flag})
    list(GET parts 0 key)
    list(GET parts 1 flag)
    string(JSON value GET "${json}" best 0 ${key})
    expect_match("${args}" "\n    ${flag} ${value} ")
  endforeach()
  expect_match("${args}" "--global-batch-size 16 \\\\\n    --seq-length 4096 ")
  # The scenario beside it still reproduces the search (the launch does not change it).
  run(0 run ${OUTDIR}/plans/1.yaml --json ${OUTDIR}/run.json)
  file(READ ${OUTDIR}/run.json run_json)
  string(JSON run_step GET "${run_json}" step_time_s)
  string(JSON search_step GET "${json}" best 0 step_time_s)
  expect_equal("${run_step}" "${search_step}" "run plans/1.yaml step_time_s")

elseif(CHECK STREQUAL "search_launch_deepspeed_writes_a_ds_config_that_multiplies_out")
  run(0 ${small_search} --launch deepspeed --emit-scenarios ${OUTDIR}/plans --json ${OUTDIR}/s.json)
  expect_match("${output}" "framework deepspeed \\(")  # --launch deepspeed searched DeepSpeed's plans
  expect_match("${output}" "# Megatron-DeepSpeed's pretrain_gpt\\.py; [^\n]*\ntorchrun [^\n]* pretrain_gpt\\.py \\\\\n    --deepspeed --deepspeed_config ")
  file(READ ${OUTDIR}/plans/1.deepspeed.args args)
  expect_match("${args}" "--deepspeed --deepspeed_config [^\n]*plans/1\\.ds_config\\.json \\\\\n")
  file(READ ${OUTDIR}/plans/1.ds_config.json config)
  file(READ ${OUTDIR}/s.json json)
  string(JSON gbs GET "${config}" train_batch_size)
  expect_equal("${gbs}" 16 "train_batch_size")
  string(JSON mbs GET "${config}" train_micro_batch_size_per_gpu)
  string(JSON gas GET "${config}" gradient_accumulation_steps)
  string(JSON dp GET "${json}" best 0 data_parallel_size)
  math(EXPR product "${mbs} * ${gas} * ${dp}")
  expect_equal("${product}" 16 "micro batch x accumulation x DP")
  string(JSON search_mbs GET "${json}" best 0 micro_batch_size)
  expect_equal("${mbs}" "${search_mbs}" "train_micro_batch_size_per_gpu")
  string(JSON zero GET "${config}" zero_optimization stage)
  string(JSON search_zero GET "${json}" best 0 zero_stage)
  expect_equal("${zero}" "${search_zero}" "zero_optimization.stage")
  string(JSON bf16 GET "${config}" bf16 enabled)
  expect_equal("${bf16}" ON "bf16.enabled")

elseif(CHECK STREQUAL "search_launch_torchtitan_searches_fsdp_plans")
  run(0 ${small_search} --launch torchtitan --json ${OUTDIR}/s.json)
  expect_match("${output}" "framework fsdp \\(torchtitan")
  expect_match("${output}" "-m torchtitan\\.train --module MODEL --config CONFIG \\\\\n    --parallelism\\.tensor_parallel_degree [1-8] ")
  expect_match("${output}" "--training\\.num_tokens_per_train_step 65536 ")  # 16 x 4096
  expect_match("${output}" "\n    activation-checkpoint:(none|full)\n")
  file(READ ${OUTDIR}/s.json json)
  string(JSON distributed GET "${json}" best 0 use_distributed_optimizer)
  expect_equal("${distributed}" OFF "torchtitan plan's use_distributed_optimizer")

elseif(CHECK STREQUAL "search_launch_inexpressible_option_is_exit_2_naming_who_can")
  # Megatron-Core's plans with the scenario's distributed optimizer kept: torchtitan has none.
  run(2 ${small_search} --framework megatron-core --keep optimizer --launch torchtitan
      --emit-scenarios ${OUTDIR}/plans)
  expect_match("${stderr}" "^--launch: plan\\.use_distributed_optimizer = true cannot be expressed in torchtitan's arguments: no Megatron distributed optimizer: [^\n]*; valid: --launch megatron, --launch mindspeed, or --set plan\\.use_distributed_optimizer to a value it takes \\(the axis is kept\\)\n$")
  if(EXISTS ${OUTDIR}/plans/1.yaml)
    message(FATAL_ERROR "a refused launch wrote plans/1.yaml")
  endif()
  # ZB-H1 only Megatron-DeepSpeed runs (--enable-zbh1-pipeline, without sequence parallelism).
  run(2 ${small_search} --keep schedule,optimizer --set plan.schedule=zb-h1 --launch megatron)
  expect_match("${stderr}" "^--launch: plan\\.schedule = zb-h1 cannot be expressed in megatron's arguments: no zero-bubble schedule[^\n]*; valid: --launch deepspeed, or --set plan\\.schedule to a value it takes \\(the axis is kept\\)\n$")
  # Searched, the plans the launcher cannot express are left out and counted, not refused:
  # DeepSpeed's pipeline engine has no virtual stages and no Megatron distributed optimizer.
  run(0 ${small_search} --framework megatron-core --keep pp --launch deepspeed --json ${OUTDIR}/ds.json)
  expect_match("${output}" "\nlaunch deepspeed: [1-9][0-9]* valid plans not searched: values its arguments cannot express \\(search without --launch ranks them too\\)\n")
  expect_match("${output}" "\ntorchrun --nnodes 1 --nproc_per_node 8 pretrain_gpt\\.py")
  file(READ ${OUTDIR}/ds.json json)
  string(JSON skipped GET "${json}" launch_skipped)
  string(JSON schedule GET "${json}" best 0 schedule)
  string(JSON vpp GET "${json}" best 0 virtual_pipeline_model_parallel_size)
  if(skipped LESS 1 OR schedule STREQUAL "interleaved" OR NOT vpp EQUAL 1)
    message(FATAL_ERROR "deepspeed launch: launch_skipped ${skipped}, #1 schedule ${schedule} vpp ${vpp}")
  endif()
  run(2 ${small_search} --launch jax)
  expect_match("${output}" "^--launch: unknown launcher 'jax'; valid: megatron\\|deepspeed\\|torchtitan\\|mindspeed\n$")

elseif(CHECK STREQUAL "choose_launch_prints_each_hardware_plan")
  run(0 choose scenarios/default.yaml --set plan.global_batch_size=16 --hardware hardware/a100-80gb.yaml,hardware/ascend-910b3.yaml
      --launch mindspeed)
  expect_match("${output}" "\na100-80gb:\n# mindspeed \\(mindspeed\\): ")
  expect_match("${output}" "\nascend-910b3:\n# mindspeed \\(mindspeed\\): ")
  expect_match("${output}" "'import mindspeed\\.megatron_adaptor' added; [^\n]*\ntorchrun --nnodes 1 --nproc_per_node 8 pretrain_gpt\\.py \\\\\n    --tensor-model-parallel-size ")

elseif(CHECK STREQUAL "explain_json_matches_the_text")
  run(0 explain scenarios/default.yaml --json -)
  string(JSON step GET "${stdout}" step_time_s)
  string(JSON stage GET "${stdout}" critical_stage)
  check_versions("${stdout}" "explain" 2)  # 2: critical_stage is the least bubble (kExplainSchemaVersion)
  rounded_regex(${step} 4 step_regex)
  # The text went to stderr: the same step time and critical stage.
  expect_match("${stderr}" "^default: step ${step_regex} s, MFU [0-9.]+%; critical stage ${stage}\n")
  string(JSON n LENGTH "${stdout}" counterfactuals)
  string(REGEX MATCHALL "\n  [^\n]+ step +[0-9.]+ s +[-+][0-9.]+%" lines "${stderr}")
  list(LENGTH lines printed)
  expect_equal("${printed}" "${n}" "counterfactuals printed vs in the JSON")
  string(JSON what GET "${stdout}" counterfactuals 0 what)
  string(JSON cf_step GET "${stdout}" counterfactuals 0 step_time_s)
  rounded_regex(${cf_step} 4 cf_regex)
  string(REGEX REPLACE "([][()+*.?^$|\\\\])" "\\\\\\1" what_regex "${what}")
  expect_match("${stderr}" "\n  ${what_regex} +step +${cf_regex} s")
  # A file works the same, and --versus adds the second plan.
  run(0 explain scenarios/default.yaml --versus plan.schedule=zb-h1 --json ${OUTDIR}/e.json)
  file(READ ${OUTDIR}/e.json json)
  string(JSON a GET "${json}" versus step_time_s)
  string(JSON b GET "${json}" versus other_step_time_s)
  rounded_regex(${a} 4 a_regex)
  rounded_regex(${b} 4 b_regex)
  expect_match("${output}" "against the plan with plan\\.schedule=zb-h1: step ${a_regex} s vs ${b_regex} s\n")

elseif(CHECK STREQUAL "max_batch_json_matches_the_text")
  run(0 max-batch scenarios/default.yaml --json -)
  check_versions("${stdout}" "max-batch" 1)
  string(JSON mbs GET "${stdout}" max_micro_batch_size)
  string(JSON gbs GET "${stdout}" max_global_batch_size)
  string(JSON at_gbs GET "${stdout}" micro_batch_size_at_max_global)
  string(JSON dp GET "${stdout}" data_parallel_size)
  string(JSON m GET "${stdout}" microbatches_per_replica)
  string(JSON peak GET "${stdout}" peak_memory_gib_at_max)
  string(JSON hbm GET "${stdout}" hbm_gib)
  rounded_regex(${peak} 1 peak_regex)
  rounded_regex(${hbm} 1 hbm_regex)
  expect_match("${stderr}" "\n  max micro_batch_size ${mbs}: peak ${peak_regex} GiB of ${hbm_regex} GiB ")
  expect_match("${stderr}" "\n  max global_batch_size ${gbs} = micro batch ${at_gbs} x DP ${dp} x ${m} micro-batches per replica \\(the largest fitting one that is a multiple of 16 sequences, a round batch size\\)\n")
  math(EXPR product "${at_gbs} * ${dp} * ${m}")
  expect_equal("${product}" "${gbs}" "micro batch x DP x micro-batches")

elseif(CHECK STREQUAL "collective_json_matches_the_text")
  run(0 collective --hardware hardware/a100-80gb.yaml --op all_gather --devices 8,64 --sizes 1MiB,1GiB
      --json ${OUTDIR}/c.json)
  file(READ ${OUTDIR}/c.json json)
  check_versions("${json}" "collective" 1)
  string(JSON op GET "${json}" op)
  expect_equal("${op}" all_gather "op")
  string(JSON n LENGTH "${json}" rows)
  expect_equal("${n}" 4 "rows")
  foreach(i 0 1 2 3)
    string(JSON size GET "${json}" rows ${i} size_bytes)
    expect_match("${size}" "^[0-9]+$")  # whole bytes, as the table prints them
    string(JSON devices GET "${json}" rows ${i} devices)
    string(JSON time GET "${json}" rows ${i} time_us)
    string(JSON busbw GET "${json}" rows ${i} busbw_gbps)
    string(JSON algorithm GET "${json}" rows ${i} algorithm)
    rounded_regex(${time} 2 time_regex)
    rounded_regex(${busbw} 2 busbw_regex)
    expect_match("${output}" "\n +${size} +${devices} +${time_regex} +[0-9.]+ +${busbw_regex}  ${algorithm}\n")
  endforeach()
  # '-' is stdout: the JSON alone there, the table on stderr.
  run(0 collective --hardware hardware/a100-80gb.yaml --devices 8 --sizes 1GiB --json -)
  string(JSON rows LENGTH "${stdout}" rows)
  expect_equal("${rows}" 1 "stdout rows")
  expect_match("${stderr}" "^# all_reduce on ")
  # One device: nothing moves, so no bandwidth and no algorithm (they printed 0.00 and "ring").
  run(0 collective --hardware hardware/a100-80gb.yaml --devices 1 --sizes 1GiB --json ${OUTDIR}/one.json)
  expect_match("${output}" "\n +1073741824 +1 +0.00 +- +-  none \\(one device: nothing moves\\)\n")
  file(READ ${OUTDIR}/one.json json)
  string(JSON busbw_type TYPE "${json}" rows 0 busbw_gbps)
  expect_equal("${busbw_type}" NULL "one device's busbw")
  string(JSON algorithm GET "${json}" rows 0 algorithm)
  expect_equal("${algorithm}" none "one device's algorithm")

else()
  message(FATAL_ERROR "unknown CHECK '${CHECK}'")
endif()
message(STATUS "ok: ${CHECK}")
