# FP8 recipes (issue 15): plan.fp8_recipe's values and its refusals.
trainsim_cli_test(fp8_recipe_mxfp8_refused_on_h100 2
  "plan.fp8_recipe: mxfp8 but H100-SXM5-80GB has no MXFP8 tensor cores \\(device.mxfp8 false\\); valid: delayed, tensorwise, blockwise"
  run scenarios/llama3-8b-h100-8.yaml --set plan.fp8_recipe=mxfp8)
trainsim_cli_test(fp8_recipe_bad_name_lists_the_recipes 2
  "plan.fp8_recipe: 'current' is not a valid value; valid: delayed, tensorwise, blockwise, mxfp8"
  run scenarios/llama3-8b-h100-8.yaml --set plan.fp8_recipe=current)
trainsim_cli_test(fp8_recipe_on_a_bf16_plan_refused 2
  "plan.fp8_recipe: blockwise on a bf16 plan \\(no FP8 Linears\\); valid: delayed \\(the default\\), or plan.precision fp8"
  run scenarios/default.yaml --set plan.fp8_recipe=blockwise)
# Sorted fastest first: tensorwise's amax pass reads every cast tensor once more.
trainsim_cli_test(fp8_recipes_side_by_side_current_scaling_slowest 0
  "fp8_recipe +step_s.*delayed +[0-9.]+.*blockwise +[0-9.]+.*tensorwise +[0-9.]+.*3 combinations, 3 simulated"
  sweep scenarios/llama3-8b-h100-8.yaml --set plan.recompute_granularity=full
  --grid plan.fp8_recipe=delayed,tensorwise,blockwise)
trainsim_cli_test(fp8_first_last_layers_bf16_refused_with_delayed 2
  "plan.first_last_layers_bf16: true with fp8_recipe delayed"
  run scenarios/llama3-8b-h100-8.yaml --set plan.first_last_layers_bf16=true)
trainsim_cli_test(fp8_first_last_layers_bf16_is_its_own_layer_type 0
  "dense x 30: .*dense_bf16 x 2: "
  ops scenarios/llama3-8b-h100-8.yaml --set plan.first_last_layers_bf16=true --set plan.fp8_recipe=tensorwise)
