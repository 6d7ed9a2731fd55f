# Command-line tests of input errors (config module): each exits 2 with a message naming the key.
trainsim_cli_test(bad_tp_lists_valid_values 2 "bad_tp.yaml:6:31: plan.tensor_model_parallel_size: .*valid: 1, 2, 4, 8, 16, 32"
  run tests/config/data/bad_tp.yaml)
trainsim_cli_test(unknown_key_suggests 2 "did you mean 'tensor_model_parallel_size'"
  run tests/config/data/bad_keys.yaml)
trainsim_cli_test(every_problem_at_once 2 "num_devices: expected an integer.*micro_batch_size: 0 is out of range.*sequence_parallel: expected true or false"
  run tests/config/data/bad_keys.yaml)
trainsim_cli_test(bad_plan_reports_all_rules 2 "tensor_model_parallel_size: 16 does not divide.*num_devices: 100 is not a multiple.*fp8 but.*ZeRO-3"
  run tests/config/data/bad_plan.yaml)
trainsim_cli_test(missing_unit_hint 2 "peak_flops_bf16: missing unit \\(FLOP/s\\); write e.g. 313TFLOPS"
  run tests/config/data/bad_hardware_scenario.yaml)
trainsim_cli_test(malformed_yaml_position 2 "malformed.yaml:4:13: malformed YAML"
  run tests/config/data/malformed.yaml)
trainsim_cli_test(missing_scenario_file 2 "no-such-scenario.yaml: cannot open file"
  run tests/config/data/no-such-scenario.yaml)
trainsim_cli_test(missing_model_file 2 "model: file 'models/no-such-model.yaml' not found"
  run tests/config/data/missing_model.yaml)
trainsim_cli_test(set_unknown_key 2 "--set: plan.tensor_parallel_size: unknown key.*did you mean 'plan.tensor_model_parallel_size'"
  run scenarios/default.yaml --set plan.tensor_parallel_size=4)
trainsim_cli_test(set_breaks_plan 2 "--set: plan.tensor_model_parallel_size: 3 does not divide num_attention_heads \\(32\\)"
  run scenarios/default.yaml --set plan.tensor_model_parallel_size=3)
trainsim_cli_test(set_without_equals 2 "expected KEY=VALUE"
  run scenarios/default.yaml --set plan.tensor_model_parallel_size)
trainsim_cli_test(bad_data_loading_names_the_key 2 "data.loader_workers: -1 is out of range; valid: integer in \\[0, 1024\\]"
  run scenarios/default.yaml --set data.loader_workers=-1)
trainsim_cli_test(in_loop_data_loading_shows_in_the_breakdown 0 "step time 16\\.39.*data"
  run scenarios/default.yaml --set data.sample_load_time=20ms --set data.loader_workers=0)
trainsim_cli_test(huge_global_batch_is_refused_not_hung 2 "plan.global_batch_size: 100000000 gives 25000000 micro-batches.*valid: global_batch_size <= 4194304" run scenarios/default.yaml --set plan.global_batch_size=100000000)
# Vocabulary Parallelism (plan.vocab_parallel): on 1F1B only, the answer names it in the plan line.
trainsim_cli_test(vocab_parallel_needs_1f1b 2 "--set: plan.vocab_parallel: runs on 1F1B only .*not schedule zb-h1; valid: none, or schedule: 1f1b"
  run scenarios/default.yaml --set plan.vocab_parallel=vocab-2 --set plan.schedule=zb-h1)
trainsim_cli_test(vocab_parallel_shows_in_the_plan 0 "plan: TP1 PP2 DP4, 1f1b vocab-1, mbs 1"
  run scenarios/default.yaml --set plan.framework=megatron-core --set plan.vocab_parallel=vocab-1)
