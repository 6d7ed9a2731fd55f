# Command-line tests of scale --strong / --samples and goodput in scale and choose (issue 19).
trainsim_cli_test(scale_strong_keeps_the_global_batch 0
  "strong scaling: global batch 128 kept.*\n +8 +4 +128 .*\n +32 +16 +128 "
  scale scenarios/default.yaml --devices 8,32 --strong)
trainsim_cli_test(scale_samples_prints_bands 0
  "Monte Carlo of steps at each size: 6 samples, seed 3.*step_jitter_cv 0.05.*tok/s/dev p10 / p50 / p90.*\n +16 +[0-9]+ / +[0-9]+ / +[0-9]+ +[01]\\.[0-9]+ / [01]\\.[0-9]+ / [01]\\.[0-9]+"
  scale scenarios/default.yaml --devices 8,16 --samples 6 --seed 3 --set variability.step_jitter_cv=0.05)
trainsim_cli_test(scale_prints_goodput_and_days 0
  "goodput%.*days.*days = 1e\\+12 tokens / \\(tokens/s x goodput\\).*16: goodput [0-9.]+ %: MTBF .* on 16 devices \\(1.97e-05 failures per device-hour\\)"
  scale scenarios/default.yaml --devices 8,16)
trainsim_cli_test(scale_seed_needs_samples 2 "--seed: applies to the Monte Carlo of steps only; valid: add --samples N"
  scale scenarios/default.yaml --devices 8 --seed 3)
trainsim_cli_test(scale_samples_out_of_range 2 "--samples: 0 is out of range"
  scale scenarios/default.yaml --devices 8 --samples 0)
trainsim_cli_test(scale_json_has_goodput_and_bands 0
  "\"scaling\": \"strong\".*\"goodput\": \\{.*\"mtbf_s\".*\"time_to_train_s\".*\"linearity_band\": \\{.*\"p10\""
  scale scenarios/default.yaml --devices 8,16 --strong --samples 4 --json -)
trainsim_cli_test(keys_documents_goodput 0 "goodput.failure_rate.*goodput.restart_time.*goodput.storage_bandwidth.*Llama 3.*goodput.checkpoint.*goodput.checkpoint_interval.*Young"
  keys goodput.)
