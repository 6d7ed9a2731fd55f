# Command-line tests of sweep, max-batch, compare and scale (explore module).
trainsim_cli_test(help_lists_explore_commands 0 "sweep.*max-batch.*compare.*scale" --help)
trainsim_cli_test(sweep_prints_rows_best_first_and_failures_with_reason 0
  "invalid: .*does not divide.*4 combinations, 2 simulated"
  sweep scenarios/default.yaml --grid plan.micro_batch_size=1,2 --grid plan.tensor_model_parallel_size=1,3)
trainsim_cli_test(sweep_unknown_grid_key_is_bad_input 2 "did you mean 'plan.micro_batch_size'"
  sweep scenarios/default.yaml --grid plan.micro_batch_sise=1,2)
trainsim_cli_test(sweep_needs_a_grid 2 "grid" sweep scenarios/default.yaml)
trainsim_cli_test(sweep_bad_base_override_is_bad_input 2 "plan.tensor_model_parallel_size"
  sweep scenarios/default.yaml --set plan.tensor_model_parallel_size=5 --grid plan.micro_batch_size=1)
trainsim_cli_test(max_batch_reports_micro_and_global_batch 0
  "max micro_batch_size [0-9]+.*max global_batch_size [0-9]+ = micro batch [0-9]+ x DP [0-9]+ x [0-9]+ micro-batches per replica .the largest fitting one that is a multiple of 16 sequences"
  max-batch scenarios/default.yaml)
trainsim_cli_test(compare_lists_each_schedule 0 "gpipe.*1f1b.*interleaved:2.*zb-h1"
  compare scenarios/default.yaml --schedules gpipe,1f1b,interleaved:2,zb-h1)
trainsim_cli_test(compare_unknown_schedule_is_bad_input 2 "unknown schedule 'pipedream'"
  compare scenarios/default.yaml --schedules 1f1b,pipedream)
# The base row's linearity is 1 by construction; the printed line must explain the column
# (the formula itself is tested exactly in tests/explore/scale_test.cpp).
trainsim_cli_test(scale_explains_linearity_against_the_smallest_size 0
  "16 +8 +256 .*\nlinearity = throughput_N / \\(N / 8 x throughput_8\\)"
  scale scenarios/default.yaml --devices 8,16)
trainsim_cli_test(scale_bad_device_list_is_bad_input 2 "--devices: 'x' is not a device count"
  scale scenarios/default.yaml --devices 8,x)
trainsim_cli_test(search_prints_top_plans_with_breakdown 0
  "plans: [0-9]+ enumerated.*replayed.*step_s.*MFU%.*1 +TP[0-9]+ PP[0-9]+"
  search scenarios/default.yaml --devices 8 --top 3 --set plan.global_batch_size=16)
trainsim_cli_test(search_cost_objective_states_the_price 0 "price 1.50 per device-hour"
  search scenarios/default.yaml --devices 8 --top 2 --objective cost --tokens 1e9 --set plan.global_batch_size=16)
trainsim_cli_test(search_unknown_objective_is_bad_input 2 "unknown objective 'speed'"
  search scenarios/default.yaml --devices 8 --objective speed)
trainsim_cli_test(search_keep_says_what_it_kept 0 "kept as the scenario sets them: sp, optimizer"
  search scenarios/default.yaml --devices 8 --top 2 --keep sp,optimizer --set plan.global_batch_size=16)
trainsim_cli_test(search_keep_unknown_axis_is_bad_input 2 "--keep: unknown plan axis 'zero'"
  search scenarios/default.yaml --devices 8 --keep zero)
# explain on an eager torchtitan plan offers torch.compile as a replayed lever (framework.hpp
# eager_model_ops); a compiled plan does not.
trainsim_cli_test(explain_offers_torch_compile_on_an_eager_torchtitan_plan 0
  "each transformer block compiled \\(torch_compile\\) +step +[0-9.]+ s +-[0-9.]+%"
  explain scenarios/llama3-8b-h100-8-torchtitan.yaml)
# search --csv: a rank column, then the JSON's "best" columns in their order, one row per plan.
trainsim_cli_test(search_csv_top_plans 0
  "^rank,plan,tensor_model_parallel_size,pipeline_model_parallel_size,.*,step_time_s,.*,cost\n1,\"TP[0-9]+ PP[0-9]+ DP[0-9]+, [^\n]*\",[0-9]+,[0-9]+,[^\n]*\n2,\"TP[0-9]+ "
  search scenarios/default.yaml --top 2 --csv -)

# Found by probing bad input (2026-12-07): each refused before any work, named by its option.
# A grid past a million combinations (101 x 100 x 100 here) is refused before a row is built
# (51 million were killed for memory at 23 GB).
set(_one_to_100 "")
foreach(i RANGE 1 100)
  list(APPEND _one_to_100 ${i})
endforeach()
string(REPLACE ";" "," _one_to_100 "${_one_to_100}")
trainsim_cli_test(sweep_grid_past_a_million_combinations_is_bad_input 2
  "^--grid: the grid has 100 x 100 x 101 values: more than 1000000 combinations; valid: at most 1000000 combinations"
  sweep scenarios/default.yaml --grid plan.micro_batch_size=${_one_to_100} --grid plan.global_batch_size=${_one_to_100}
  --grid data.loader_workers=0,${_one_to_100})
# explain replays a plan about twenty times: a plan run replays once in seconds is refused here.
trainsim_cli_test(explain_past_its_replay_budget_is_bad_input 2
  "^scenarios/default.yaml: plan.global_batch_size: 4194304 schedule items a step[^\n]*; valid: at most 12 micro-batches"
  explain scenarios/default.yaml --set model.num_hidden_layers=16384 --set plan.schedule=interleaved
  --set plan.global_batch_size=512)
# The second plan is checked before the first is explained, its problem named by --versus.
trainsim_cli_test(explain_versus_bad_key_is_named_before_any_work 2 "^--versus: plan.foo: unknown key"
  explain scenarios/default.yaml --versus plan.foo=1)
# A plan over the HBM is explained, and says so first (text and JSON).
trainsim_cli_test(explain_says_a_plan_does_not_fit 0
  "MFU [0-9.]+%; critical stage 1\nmemory: peak 96.5 GiB of 64.0 GiB HBM: DOES NOT FIT"
  explain scenarios/default.yaml --set plan.micro_batch_size=4)
trainsim_cli_test(explain_json_carries_the_memory_status 0 "\"status\": \"does_not_fit\",\n  \"fits\": false"
  explain scenarios/default.yaml --set plan.micro_batch_size=4 --json -)
# Failures faster than a restart: no goodput, and the job never finishes (it printed 0.0 days).
trainsim_cli_test(scale_without_goodput_never_finishes 0 "524288 262144 8388608 [^\n]* 0.0    never "
  scale scenarios/default.yaml --devices 8,524288)
# -1 is the option's "not given" default, not a seed.
trainsim_cli_test(scale_negative_seed_is_bad_input 2 "^--seed: -1 is out of range; valid: 0 to 2147483647\n$"
  scale scenarios/default.yaml --devices 8 --samples 2 --seed -1)
trainsim_cli_test(run_negative_seed_is_bad_input 2 "^--seed: -1 is out of range; valid: 0 to 2147483647\n$"
  run scenarios/default.yaml --samples 2 --seed -1)
# Several scenario files go to a directory: '-' is not one (it made ./-/1.yaml).
trainsim_cli_test(search_emit_scenarios_to_stdout_is_bad_input 2 "^--emit-scenarios: '-' is not a directory name"
  search scenarios/default.yaml --top 1 --emit-scenarios -)
# A first stage of every layer leaves the last stage none (plan.layers_per_stage refuses a 0).
trainsim_cli_test(uneven_split_leaving_a_stage_no_layer_is_bad_input 2
  "^--set: plan.decoder_first_pipeline_num_layers: first \\(32\\) \\+ last \\(0\\) leave stage 1 no layer"
  run scenarios/default.yaml --set plan.decoder_first_pipeline_num_layers=32)
# A collective moves whole bytes (1.7B printed as 2); a size or device count twice printed its row twice.
trainsim_cli_test(collective_fractional_bytes_is_bad_input 2
  "^--sizes: '1.7B' is 1.7 bytes, not a whole number; valid: whole bytes" 
  collective --hardware hardware/a100-80gb.yaml --sizes 1.7B)
trainsim_cli_test(collective_size_listed_twice_is_bad_input 2 "^--sizes: '1MiB' is listed twice in '1MiB,1MiB'"
  collective --hardware hardware/a100-80gb.yaml --sizes 1MiB,1MiB)
trainsim_cli_test(collective_two_ranges_is_bad_input 2 "^--sizes: '1MiB:2MiB:4MiB' is neither one range nor a list"
  collective --hardware hardware/a100-80gb.yaml --sizes 1MiB:2MiB:4MiB)
trainsim_cli_test(collective_size_in_pebibytes 0 "\n1125899906842624 +8 "
  collective --hardware hardware/a100-80gb.yaml --sizes 1PiB --devices 8)
trainsim_cli_test(scale_device_count_listed_twice_is_bad_input 2 "^--devices: '8' is listed twice in '8,8,16'"
  scale scenarios/default.yaml --devices 8,8,16)
# The same hardware twice named it winner and runner-up.
trainsim_cli_test(choose_hardware_listed_twice_is_bad_input 2
  "^--hardware: 'hardware/a100-80gb.yaml' is listed twice"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml,hardware/a100-80gb.yaml)
# One problem, one line (the output was checked twice).
trainsim_cli_test(choose_output_problem_is_one_line 2 "^[^\n]*--json: directory '[^']*' does not exist[^\n]*\n$"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml --json no-such-dir/x.json)
# A row's bad value came from --grid, and its reason says so (it named --set).
trainsim_cli_test(sweep_row_problem_names_grid 0 "invalid: --grid: num_devices: 1 is not a multiple of TP\\*PP\\*CP"
  sweep scenarios/default.yaml --grid num_devices=1,8)
# Hardware keys that bound each other: a reserve over the HBM answered "DOES NOT FIT" at 931,367 GiB.
trainsim_cli_test(allocator_reserve_over_the_hbm_is_bad_input 2
  "^--set: hardware.device.allocator_reserve: 9.313e\\+05 GiB is not below device.hbm_bytes \\(64 GiB\\)"
  run scenarios/default.yaml --set hardware.device.allocator_reserve=1PB)
trainsim_cli_test(gemm_tile_below_64_is_bad_input 2
  "^--set: hardware.device.gemm.tile_m: 3 is below the smallest tile the model takes \\(64\\)"
  run scenarios/default.yaml --set hardware.device.gemm.tile_m=3)
# Failures faster than a restart: choose says never (a goodput floor of 1e-9 printed 9 million days).
trainsim_cli_test(choose_without_goodput_never_finishes 0
  "a100-80gb [^\n]* 0.0   never        never        never    never  TP"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml --set goodput.failure_rate=1
  --set goodput.restart_time=86400s)
trainsim_cli_test(choose_json_without_goodput_is_null 0 "\"finishes\": false,\n *\"time_to_train_s\": null"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml --set goodput.failure_rate=1
  --set goodput.restart_time=86400s --json -)
# An id --show does not find lists ids that exist.
trainsim_cli_test(validate_show_unknown_id_lists_ids 2
  "^--show: no run 'narayanan21-x' in [^\n]*calibration.yaml; valid: narayanan21-t1-1.7B, "
  validate --show narayanan21-x)
