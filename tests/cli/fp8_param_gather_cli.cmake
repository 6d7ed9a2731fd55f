# FP8 weights in memory and plan.fp8_param_gather (Megatron-Core --fp8-param-gather, issue 15):
# the memory table's FP8 line and the refusals (exit 2, naming what would be valid).
trainsim_cli_test(fp8_weights_line_in_the_memory_table 0
  "FP8 weights \\(in weights: Transformer Engine's FP8 copies of the GEMM weights, or the FP8 parameters\\), GiB per device: stage 0: [0-9.]+"
  memory scenarios/llama3-8b-h100-8.yaml)
trainsim_cli_test(fp8_param_gather_on_a_bf16_plan_refused 2
  "plan.fp8_param_gather: true on a bf16 plan \\(no FP8 weights\\); valid: false, or plan.precision fp8"
  run scenarios/default.yaml --set plan.fp8_param_gather=true)
trainsim_cli_test(fp8_param_gather_needs_a_framework_with_fp8_parameters 2
  "plan.fp8_param_gather: true, but there are no FP8 parameters in nemo; valid: false, or framework megatron-core or fsdp"
  run scenarios/llama3-8b-h100-8.yaml --set plan.framework=nemo --set plan.fp8_param_gather=true)
trainsim_cli_test(fp8_param_gather_needs_the_distributed_optimizer 2
  "plan.fp8_param_gather: true without the distributed optimizer .*; valid: false, or plan.use_distributed_optimizer true"
  run scenarios/llama3-8b-h100-8.yaml --set plan.framework=megatron-core --set plan.use_distributed_optimizer=false
  --set plan.fp8_param_gather=true)
trainsim_cli_test(fp8_param_gather_not_a_boolean 2
  "plan.fp8_param_gather: expected true or false, got 'yes'"
  run scenarios/llama3-8b-h100-8.yaml --set plan.fp8_param_gather=yes)
trainsim_cli_test(fp8_param_gather_runs_on_megatron_core 0
  "FP8 weights \\(in weights: .*GiB per device: stage 0: [0-9.]+"
  memory scenarios/llama3-8b-h100-8.yaml --set plan.framework=megatron-core --set plan.fp8_param_gather=true)
# torchao's FSDP2 float8 all-gather (framework fsdp): fully_shard and tensorwise scales only.
trainsim_cli_test(fp8_param_gather_on_fsdp_needs_fully_shard 2
  "plan.fp8_param_gather: true with zero_stage 2, but fsdp all-gathers FP8 weights only under fully_shard .*; valid: false, or zero_stage 3"
  run scenarios/llama3-70b-h100-256-torchtitan.yaml --set plan.zero_stage=2 --set plan.fp8_param_gather=true)
trainsim_cli_test(fp8_param_gather_on_fsdp_needs_tensorwise_scales 2
  "plan.fp8_param_gather: true with fp8_recipe delayed \\(torchao: 'enable_fsdp_float8_all_gather only supports tensorwise scaling granularity'\\); valid: false, or plan.fp8_recipe tensorwise"
  run scenarios/llama3-70b-h100-256-torchtitan.yaml --set plan.fp8_recipe=delayed --set plan.fp8_param_gather=true)
trainsim_cli_test(fp8_param_gather_runs_on_fsdp 0
  "step time [0-9.]+ s"
  run scenarios/llama3-70b-h100-256-torchtitan.yaml --set plan.fp8_param_gather=true)
trainsim_cli_test(fp8_param_gather_on_fsdp_needs_data_parallel_ranks 2
  "plan.fp8_param_gather: true with data-parallel size 1: FSDP shards nothing to gather .*; valid: false, or more devices"
  run scenarios/llama3-70b-h100-256-torchtitan.yaml --set num_devices=8 --set plan.fp8_param_gather=true)
# explain replays the plan with its FP8 weights gathered in FP8 where the plan would take it.
trainsim_cli_test(explain_offers_fp8_param_gather_on_fsdp 0
  "FP8 weights all-gathered in FP8 \\(fp8_param_gather\\) +step +[0-9.]+ s +-[0-9.]+%"
  explain scenarios/llama3-70b-h100-256-torchtitan.yaml)
