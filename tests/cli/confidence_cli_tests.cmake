# Command-line tests of confidence: run's interval, compare's probability, explain's measurement.
trainsim_cli_test(run_prints_the_step_time_interval 0
  "step time [0-9.]+ s \\(80% interval [0-9.]+-[0-9.]+ s from [0-9]+ measured runs of 910B \\([^)]*\\), leave-one-out\\)"
  run scenarios/default.yaml)
trainsim_cli_test(compare_says_which_schedule_beats_with_probability 0
  "P\\(A beats B\\) = Phi\\(log\\(tB / tA\\) / 0\\.[0-9]+\\): normal on the log ratio.*  [a-z0-9:-]+ beats [a-z0-9:-]+ (with probability 0\\.[5-9][0-9]|beyond the model's error)"
  compare scenarios/default.yaml --schedules 1f1b,zb-h1)
trainsim_cli_test(compare_names_the_measurement_for_a_close_choice 0
  "close choice \\(zb-h1 vs 1f1b\\): (no fitted key|[a-z_.]+ 10% larger moves them [-+][0-9.]+% vs [-+][0-9.]+%(; to narrow it, measure|, far less than the [0-9.]+% gap: no fitted value decides it))"
  compare scenarios/default.yaml --schedules 1f1b,zb-h1)
trainsim_cli_test(run_json_has_the_interval 0 "\"step_time_interval\": {[^}]*\"coverage\": 0.8,[^}]*\"low_s\": [0-9.]+,[^}]*\"runs\": [0-9]+,[^}]*\"family\": \"910B\""
  run scenarios/default.yaml --json -)
trainsim_cli_test(explain_names_the_measurement_that_narrows_the_prediction 0
  "what would most narrow this prediction.*device\\.sustained_compute_fraction +-[0-9.]+%.*measure one step of .* on one Ascend-910B3 server \\(TP [0-9]+, PP 1"
  explain scenarios/default.yaml)
trainsim_cli_test(explain_versus_names_the_key_that_moves_the_ratio 0
  "against the plan with plan.tensor_model_parallel_size=2: step [0-9.]+ s vs [0-9.]+ s\n  device\\.sustained_compute_fraction 10% larger: -[0-9.]+% vs -[0-9.]+% \\(ratio moves -[0-9.]+%\\)\n    measure one step of"
  explain scenarios/default.yaml --versus plan.tensor_model_parallel_size=2)
