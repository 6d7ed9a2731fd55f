# Command-line tests of the variability. keys and run --samples (issue 19).
trainsim_cli_test(keys_documents_variability 0 "variability.slow_devices.*variability.slow_card_speed.*Sinha.*variability.step_jitter_cv"
                  keys variability.)
trainsim_cli_test(run_names_slow_card_and_wait_ratios 0 "slowest rank 3 \\(stage 0\\) at 0.500.*collective wait ratio per stage"
                  run scenarios/default.yaml "--set" "variability.slow_devices=[{rank: 3, speed_factor: 0.5}]")
trainsim_cli_test(run_full_mode_measures_wait_ratios 0 "full mode, measured.*      0                3  0.500      0.00   0.98"
                  run scenarios/default.yaml --mode full "--set" "variability.slow_devices=[{rank: 3, speed_factor: 0.5}]")
trainsim_cli_test(run_slow_rank_out_of_range 2 "variability.slow_devices.rank: rank 8 is out of range; valid: ranks 0 to 7 \\(num_devices 8\\)"
                  run scenarios/default.yaml "--set" "variability.slow_devices=[{rank: 8, speed_factor: 0.5}]")
trainsim_cli_test(explain_names_slow_card 0 "slow cards at nominal speed.*slow card: rank 3 \\(stage 0\\) runs at 0.5 of nominal speed"
                  explain scenarios/default.yaml "--set" "variability.slow_devices=[{rank: 3, speed_factor: 0.5}]")
trainsim_cli_test(run_samples_prints_percentiles 0 "Monte Carlo: 20 steps, seed 1.*p50 .*p90 .*p99 .*expected linearity from variability 0\\.[0-9]+.*critical stage \\(least bubble: the others wait for it\\): stage [0-9].*slowest card: rank"
                  run scenarios/default.yaml --samples 20 --seed 1 --set variability.step_jitter_cv=0.05)
trainsim_cli_test(run_samples_out_of_range 2 "--samples: 0 is out of range" run scenarios/default.yaml --samples 0 --seed 1)
# --samples 0 alone is refused too (it used to run the plain step silently), and --seed or
# --threads without --samples is named, as scale names them.
trainsim_cli_test(run_samples_zero_alone 2 "--samples: 0 is out of range" run scenarios/default.yaml --samples 0)
trainsim_cli_test(run_seed_without_samples 2 "--seed: applies to the Monte Carlo of steps only; valid: add --samples N"
                  run scenarios/default.yaml --seed 3)
trainsim_cli_test(run_threads_without_samples 2 "--threads: applies to the Monte Carlo of steps only; valid: add --samples N"
                  run scenarios/default.yaml --threads 2)
trainsim_cli_test(run_samples_json 0 "\"monte_carlo\": \\{.*\"samples\": 5,.*\"seed\": 2,.*\"p99_step_time_s\".*\"step_time_s\": \\[.*\"critical_stage\": \\[.*\"slowest_device\": \\["
                  run scenarios/default.yaml --samples 5 --seed 2 --set variability.step_jitter_cv=0.05 --json -)
