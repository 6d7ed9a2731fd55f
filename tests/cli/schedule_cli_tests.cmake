# The zero-bubble schedules from the command line (issue 16): zb-h2, zb-2p and zb-v.
trainsim_cli_test(schedule_zb_v_runs 0 "zb-v"
  run scenarios/default.yaml --set plan.schedule=zb-v)
trainsim_cli_test(schedule_zb_2p_runs_as_itself 0 "zb-2p"
  run scenarios/default.yaml --set plan.schedule=zb-2p)
trainsim_cli_test(schedule_zb_v_needs_whole_layers_in_each_of_2p_chunks 2
  "zb-v: 2 \\* pipeline_model_parallel_size \\(64 chunks\\) does not divide num_hidden_layers \\(96\\)"
  run scenarios/gpt3-175b-a100-1024.yaml --set plan.schedule=zb-v --set plan.virtual_pipeline_model_parallel_size=1
  --set plan.pipeline_model_parallel_size=32)
trainsim_cli_test(schedule_zb_h2_refused_where_the_framework_has_no_zero_bubble 2
  "plan.schedule: zb-h2 with PP > 1 is not a schedule"
  run scenarios/default.yaml --set plan.schedule=zb-h2 --set plan.framework=deepspeed)
# compare --schedules lists every schedule of the schedule table in its help.
trainsim_cli_test(compare_help_lists_every_schedule 0
  "--schedules TEXT.*gpipe, 1f1b, interleaved\\[:V\\] \\(V >= 2\\), zb-h1, zb-h2, zb-2p, zb-v, dualpipe, dualpipev"
  compare --help)
