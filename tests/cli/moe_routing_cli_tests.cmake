# MoE routing as it happens (issue 18): moe.* scenario keys, their errors (exit 2 naming the key
# and its valid range) and a scenario whose busiest EP rank sets the step.
trainsim_cli_test(moe_load_cv_out_of_range 2 "moe\\.expert_load_cv: -1 is out of range.*\\[0, 256\\]"
  run scenarios/mixtral-8x7b-a100-64.yaml --set moe.expert_load_cv=-1)
trainsim_cli_test(moe_load_cv_above_model_bound 2 "moe\\.expert_load_cv: 3 exceeds sqrt\\(E/k - 1\\) = 1\\.732.*valid: 0 to 1\\.732"
  run scenarios/mixtral-8x7b-a100-64.yaml --set moe.expert_load_cv=3)
trainsim_cli_test(moe_load_cv_on_dense_model 2 "moe\\.expert_load_cv: the model .* has no experts"
  run scenarios/default.yaml --set moe.expert_load_cv=0.2)
trainsim_cli_test(moe_imbalanced_scenario_runs 0 "mixtral-8x7b-a100-64-imbalanced on 64 x A100.*step time 10\\.1"
  run scenarios/mixtral-8x7b-a100-64-imbalanced.yaml)
