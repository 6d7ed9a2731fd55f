# Command-line tests of run / memory / trace output (engine and report modules).
trainsim_cli_test(run_offers_json_trace_and_mode 0 "--json.*--trace.*--mode" run --help)
trainsim_cli_test(run_rejects_unknown_mode 2 "mode" run scenarios/none.yaml --mode sideways)
trainsim_cli_test(run_default_scenario_prints_summary 0 "step time.*MFU.*throughput" run scenarios/default.yaml)
trainsim_cli_test(run_override_changes_plan 0 "mbs 2" run scenarios/default.yaml --set plan.micro_batch_size=2)
trainsim_cli_test(run_bad_override_names_key 2 "--set: plan.micro_batch_sise: unknown key.*did you mean 'plan.micro_batch_size'"
                  run scenarios/default.yaml --set plan.micro_batch_sise=2)
trainsim_cli_test(memory_prints_per_stage_table 0 "stage.*weights.*optimizer.*peak.*fits" memory scenarios/default.yaml)
trainsim_cli_test(memory_reports_out_of_memory 0 "OUT OF MEMORY.*does not fit: stage 1 needs [0-9.]+ GiB of 64.0 GiB HBM.*fits with --set "
                  memory scenarios/default.yaml --set plan.micro_batch_size=32)
trainsim_cli_test(collective_prints_nccl_tests_columns 0 "size_bytes.*devices.*time_us.*algbw_GBps.*busbw_GBps"
                  collective --hardware hardware/a100-80gb.yaml --op all_reduce --devices 8,16 --sizes 1MiB:8MiB)
trainsim_cli_test(collective_rejects_unknown_op 2 "op" collective --hardware hardware/a100-80gb.yaml --op all_sum)
trainsim_cli_test(validate_closes_with_mape_per_family 0 "A100 MAPE: [0-9.]+% over [0-9]+ runs.*910B MAPE" validate)
trainsim_cli_test(validate_trends_closes_with_group_count 0 "trends: [0-9]+ of [0-9]+ groups in the measured order"
                  validate --trends tests/validation/trends.yaml)
trainsim_cli_test(validate_missing_file_exits_2 2 "cannot open" validate tests/validation/none.yaml)
trainsim_cli_test(run_out_of_memory_is_an_answer_with_advice 0 "DOES NOT FIT.*does not fit: stage 1 needs.*fits with --set "
                  run scenarios/default.yaml --set plan.micro_batch_size=32)
trainsim_cli_test(explain_lists_counterfactuals_and_diagnosis 0 "where the step goes.*if \\.\\.\\..*diagnosis"
                  explain scenarios/llama2-70b-910b3-1024.yaml)
trainsim_cli_test(collective_algorithm_choices_are_listed 2 "plan.collective_algorithm.*valid: auto, ring, tree, hierarchical, full_mesh|plan.collective_algorithm.*auto\\|ring"
                  run scenarios/default.yaml --set plan.collective_algorithm=sideways)
trainsim_cli_test(collective_algorithm_can_be_forced 0 "step time" run scenarios/default.yaml --set plan.collective_algorithm=ring)
