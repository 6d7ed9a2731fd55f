# Bounded work (engine/limits.hpp): a plan past a limit of the simulation exits 2 up front with
# one line naming the key and the limit; real jobs stay inside.
trainsim_cli_test(step_past_the_clock_is_refused 2
  "default.yaml: plan: a step of 32 micro-batches of 1 x 10000000 tokens may last up to [0-9.]+ days.*clock holds \\(106.5 days of int64 picoseconds\\); valid: .*plan.global_batch_size <= "
  run scenarios/default.yaml --set plan.seq_length=10000000)
trainsim_cli_test(background_loading_past_the_clock_is_refused 2
  "data.sample_load_time: 1000 s a sequence for 250000 sequences .* is 1447 days.*valid: sample_load_time <= 73.6s"
  run scenarios/default.yaml --set data.sample_load_time=1000s --set plan.global_batch_size=1000000)
trainsim_cli_test(in_loop_loading_past_the_clock_is_refused 2
  "data.sample_load_time: 1000 s a sequence makes a step of 250000 micro-batches.*106.5 days"
  run scenarios/default.yaml --set data.sample_load_time=1000s --set data.loader_workers=0 --set plan.global_batch_size=1000000)
trainsim_cli_test(sweep_point_past_the_clock_is_one_invalid_row 0
  "0s +951\\.[0-9]+ .* ok.*3600s +invalid: .*data.sample_load_time: 3600 s a sequence makes a step of 2000 micro-batches.*2 combinations, 1 simulated"
  sweep scenarios/default.yaml --set data.loader_workers=0 --set plan.global_batch_size=8000 --grid data.sample_load_time=0s,3600s)
# The loader's ranges refuse a 1 B bucket and 4,000,000 devices first (the replay's own
# limits behind them are tested in tests/engine/limits_test.cpp through the library).
trainsim_cli_test(one_byte_gradient_bucket_is_refused 2
  "^--set: plan.grad_bucket_size: 1B is below 1MiB; valid: 0B \\(Megatron's default\\) or 1MiB to 1PB\n$"
  run scenarios/llama2-70b-910b3-1024.yaml --set plan.grad_bucket_size=1B)
trainsim_cli_test(full_mode_on_four_million_devices_is_refused 2
  "^--set: num_devices: 4000000 is out of range; valid: integer in \\[1, 1048576\\]\n$"
  run scenarios/default.yaml --mode full --set num_devices=4000000 --set plan.global_batch_size=4000000)
trainsim_cli_test(full_mode_past_the_task_instances_is_refused 2
  "num_devices: full mode replays 524288 ranks per stage x 262 tasks = 137363456 task instances, more than a replay takes \\(67108864.*valid: --mode representative"
  run scenarios/default.yaml --mode full --set num_devices=1048576 --set plan.global_batch_size=16777216)
trainsim_cli_test(full_mode_on_131072_h100_runs 0 "131072 x H100.*step time"
  run scenarios/llama3-405b-h100-16384.yaml --mode full --set num_devices=131072)
# A host lead past the replay's bound was an internal error (exit 3) before the loader bounded
# kernel_launch; a launch is microseconds.
trainsim_cli_test(one_second_kernel_launch_is_refused 2
  "^--set: hardware.device.kernel_launch: 1s is out of range; valid: seconds in \\[0s, 10ms\\]\n$"
  run scenarios/default.yaml --set hardware.device.kernel_launch=1s)
