# --version, `keys`, and per-subcommand help (issue 20).
trainsim_cli_test(version_prints_the_project_version 0 "^trainsim ${PROJECT_VERSION}\n$" --version)
trainsim_cli_test(keys_prints_type_default_range_and_meaning 0
  "key +type +default +valid +meaning\nplan.schedule +choice +1f1b +gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-2p, zb-v, dualpipe, dualpipev +pipeline schedule \\(zb-2p: the zero-bubble reference's heuristic under a 2p memory limit\\)\n$"
  keys plan.schedule)
trainsim_cli_test(keys_of_a_hardware_file 0 "node.devices_per_node +integer +8 +integer in \\[1, 1024\\] +devices in one server"
  keys --file hardware node.)
trainsim_cli_test(keys_unknown_prefix_is_bad_input_with_the_sections 2
  "^keys: no scenario key starts with 'plan.foo'; valid: a prefix of a key: name, description, model, hardware, num_devices, data, plan, variability, moe, goodput\n$"
  keys plan.foo)
# A subcommand's help shows its own examples only ("trainsim scale" is not a run example).
trainsim_cli_test(run_help_shows_run_examples_only 0
  "Examples:\n  trainsim run scenarios/default.yaml\n  trainsim run [^\n]*\nOutput files"
  run --help)
trainsim_cli_test(unknown_key_suggestion_lists_the_valid_keys 2
  "plan.schedle: unknown key 'plan.schedle', did you mean 'plan.schedule'\\?; valid: plan.tensor_model_parallel_size, .*plan.rank_order"
  run scenarios/default.yaml --set plan.schedle=1f1b)
# Every JSON says which trainsim wrote it.
foreach(command IN ITEMS "run" "memory" "ops")
  trainsim_cli_test(${command}_json_names_the_version 0 "\"trainsim_version\": \"${PROJECT_VERSION}\""
    ${command} scenarios/default.yaml --json -)
endforeach()
trainsim_cli_test(sweep_json_names_the_version 0 "\"trainsim_version\": \"${PROJECT_VERSION}\""
  sweep scenarios/default.yaml --grid plan.micro_batch_size=1 --json -)
trainsim_cli_test(compare_json_names_the_version 0 "\"trainsim_version\": \"${PROJECT_VERSION}\""
  compare scenarios/default.yaml --schedules 1f1b --json -)
trainsim_cli_test(scale_json_names_the_version 0 "\"trainsim_version\": \"${PROJECT_VERSION}\""
  scale scenarios/default.yaml --devices 8 --json -)
trainsim_cli_test(search_json_names_the_version 0 "\"trainsim_version\": \"${PROJECT_VERSION}\""
  search scenarios/default.yaml --devices 8 --top 1 --set plan.global_batch_size=16 --json -)
trainsim_cli_test(search_emit_scenarios_writes_runnable_plans 0
  "wrote 2 scenarios .*plans/1.yaml .*reproduces plan #1"
  search scenarios/default.yaml --top 2 --emit-scenarios ${CMAKE_CURRENT_BINARY_DIR}/emitted/plans)
trainsim_cli_test(search_emit_scenarios_into_a_file_is_bad_input 2
  "--emit-scenarios: cannot create the directory '[^']*README.md'; valid: a directory that exists or can be created"
  search scenarios/default.yaml --top 2 --emit-scenarios README.md)
