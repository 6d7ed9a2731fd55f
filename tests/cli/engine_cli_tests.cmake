# Command-line tests of run / memory / trace output (engine and report modules).
trainsim_cli_test(run_offers_json_trace_and_mode 0 "--json.*--trace.*--mode" run --help)
trainsim_cli_test(run_rejects_unknown_mode 2 "mode" run scenarios/none.yaml --mode sideways)
