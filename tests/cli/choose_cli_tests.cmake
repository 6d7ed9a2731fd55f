# Command-line tests of choose, and of the JSON output of compare and scale (explore module).
trainsim_cli_test(choose_help_teaches_what_and_an_example 0
  "hardware files to compare.*--objective.*--pue.*board power only.*Example:.*trainsim choose scenarios/"
  choose --help)
trainsim_cli_test(choose_prints_each_hardware_and_the_winner 0
  "board power only.*a100-80gb +2.00 +400 .*TP[0-9]+ PP[0-9]+.*h100-80gb +3.00 +700 .*best on throughput: h100-80gb"
  choose scenarios/default.yaml --set plan.global_batch_size=16
  --hardware hardware/a100-80gb.yaml,hardware/h100-80gb.yaml --tokens 1e9)
trainsim_cli_test(choose_row_says_why_nothing_fits 0
  "tiny-hbm +2.00 +400 no plan fits in memory: the smallest of [0-9]+ valid plans needs [0-9.]+ GiB of 4.0 GiB.*best on cost: a100-80gb"
  choose scenarios/default.yaml --set plan.global_batch_size=16 --objective cost
  --hardware tests/explore/data/tiny-hbm.yaml,hardware/a100-80gb.yaml --json ${CMAKE_CURRENT_BINARY_DIR}/choose.json)
# The default scenario is a MindSpeed run: on NVIDIA files choose prices Megatron-Core, what
# MindSpeed patches, and says so; with --framework megatron-core it has nothing to say.
trainsim_cli_test(choose_prices_what_an_ascend_only_framework_patches_on_other_hardware 0
  "note: mindspeed runs on Ascend NPUs only; on a100-80gb, h100-80gb the plans are megatron-core's, the framework it patches"
  choose scenarios/default.yaml --set plan.global_batch_size=16
  --hardware hardware/ascend-910b3.yaml,hardware/a100-80gb.yaml,hardware/h100-80gb.yaml --tokens 1e9)
trainsim_cli_test(choose_names_no_note_for_a_framework_of_every_vendor 0
  "framework megatron-core [^\n]*\nhardware +price"
  choose scenarios/default.yaml --set plan.global_batch_size=16 --framework megatron-core
  --hardware hardware/a100-80gb.yaml --tokens 1e9)
# One line naming the file (the trailing . is the newline).
trainsim_cli_test(choose_missing_hardware_file_is_one_line_naming_it 2
  "^hardware/no-such\\.yaml: cannot open file[^:]*.$"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml,hardware/no-such.yaml)
trainsim_cli_test(choose_invalid_hardware_file_names_file_and_key 2 "bad_hardware.yaml:[0-9]+:[0-9]+: device.peak_flops_bf16"
  choose scenarios/default.yaml --hardware tests/config/data/bad_hardware.yaml)
trainsim_cli_test(choose_unknown_objective_is_bad_input 2 "unknown objective 'speed'"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml --objective speed)
trainsim_cli_test(choose_pue_below_one_is_bad_input 2 "--pue: 0.5 is out of range"
  choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml --pue 0.5)
trainsim_cli_test(compare_offers_json 0 "--json" compare --help)
trainsim_cli_test(scale_offers_json 0 "--json" scale --help)
