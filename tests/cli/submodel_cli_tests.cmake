# 910B sub-models and H800 (issue 18): validate's range column and family line on a small fixture,
# and `run` of a shipped scenario on another hardware file through --set.
trainsim_cli_test(validate_names_submodel_and_reports_range 0
  "fixture-910b-unnamed .*range 910B1\\.\\.910B3: [0-9.]+\\.\\.[0-9.]+.*910B sub-model range .*910B1 [0-9.]+%, 910B2 [0-9.]+%, 910B3 [0-9.]+%"
  validate tests/validation/submodel_runs.yaml)
trainsim_cli_test(run_910b3_scenario_on_910b2 0 "Ascend-910B2"
  run scenarios/llama2-70b-910b3-1024.yaml --set hardware=hardware/ascend-910b2.yaml)
trainsim_cli_test(run_h100_scenario_on_h800 0 "H800-SXM5-80GB"
  run scenarios/llama3-8b-h100-8.yaml --set hardware=hardware/h800.yaml)
