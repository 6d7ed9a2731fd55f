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
