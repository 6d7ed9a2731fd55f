# compare and search know the zero-bubble schedules the schedule module names (zb-h2, zb-v).
# Each row starts with the schedule's name and then a simulated step time, so a row that
# failed (status and reason instead of numbers) does not match.
trainsim_cli_test(compare_runs_zb_h2_and_zb_v 0
  "\nzb-h2 +[0-9]+\\.[0-9]+ .*\nzb-v +[0-9]+\\.[0-9]+ "
  compare scenarios/gpt3-175b-a100-1024.yaml --schedules 1f1b,interleaved:3,zb-h1,zb-h2,zb-v)
trainsim_cli_test(compare_runs_zb_2p 0 "\nzb-2p +[0-9]+\\.[0-9]+ "
  compare scenarios/gpt3-175b-a100-1024.yaml --schedules 1f1b,zb-2p)
# The valid list comes from the schedule module: every schedule and interleaved's V.
trainsim_cli_test(compare_unknown_schedule_lists_every_schedule 2
  "unknown schedule 'pipedream'.*gpipe, 1f1b, interleaved\\[:V\\] \\(V >= 2\\), zb-h1, zb-h2, zb-2p, zb-v"
  compare scenarios/default.yaml --schedules 1f1b,pipedream)
trainsim_cli_test(compare_v_only_for_interleaved 2 "'zb-v:2': only interleaved takes a number of virtual stages"
  compare scenarios/default.yaml --schedules zb-v:2)
# A kept zb-v plan is labelled as itself, not as 1f1b.
trainsim_cli_test(search_labels_a_kept_zb_v_plan 0 "\n1 +TP[0-9]+ PP2 DP[0-9]+ mbs[0-9]+ zb-v "
  search scenarios/default.yaml --devices 8 --top 2 --keep schedule,pp --set plan.schedule=zb-v
  --set plan.pipeline_model_parallel_size=2 --set plan.global_batch_size=16)
# zb-v holds 2 chunks per device with virtual_pipeline_model_parallel_size 1: the run page's
# timeline shades the odd chunk, so its legend carries the chunk key (counted with
# chunks_per_stage); 1f1b's page has no such key.
trainsim_page_test(run_zb_v_page_has_the_chunk_legend 0 "zb-v"
  ARGS run ${TRAINSIM_PAGE_SCENARIO} --set plan.schedule=zb-v --html v.html
  FILE v.html CONTAINS "model chunk 0, 2, .* / chunk 1, 3, .* \\(interleaved, zb-v\\)" "class=\"d0\" x=")
trainsim_page_test(run_1f1b_page_has_no_chunk_legend 0 "1f1b"
  ARGS run ${TRAINSIM_PAGE_SCENARIO} --html f.html FILE f.html COUNT_REGEX "model chunk 0" COUNT 0)
