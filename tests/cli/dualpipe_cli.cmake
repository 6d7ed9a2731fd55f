# DualPipe and DualPipeV from the command line (issue 16): compare runs dualpipev beside the
# zero-bubble schedules, the plan checks name the reference code's conditions.
trainsim_cli_test(compare_runs_dualpipev 0
  "\nzb-v +[0-9]+\\.[0-9]+ .*\ndualpipev +[0-9]+\\.[0-9]+ "
  compare scenarios/gpt3-175b-a100-1024.yaml --schedules 1f1b,zb-v,dualpipev)
trainsim_cli_test(dualpipe_needs_an_even_pipeline 2
  "plan.pipeline_model_parallel_size: dualpipe runs its two directions on an even number of stages, not 3"
  run scenarios/default.yaml --set plan.schedule=dualpipe --set plan.pipeline_model_parallel_size=3)
trainsim_cli_test(dualpipev_needs_two_microbatches_per_stage 2
  "dualpipev needs at least 2 x pipeline_model_parallel_size \\(32\\) micro-batches; the plan has 24"
  run scenarios/gpt3-175b-a100-1024.yaml --set plan.schedule=dualpipev --set plan.virtual_pipeline_model_parallel_size=1
  --set plan.global_batch_size=192)
