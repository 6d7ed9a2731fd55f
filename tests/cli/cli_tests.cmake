# Command-line behaviour: exit codes and messages.
trainsim_cli_test(help_lists_commands 0 "run" --help)
trainsim_cli_test(unknown_subcommand_fails 2 "no-such-command|subcommand" no-such-command)
include(${CMAKE_CURRENT_LIST_DIR}/config_cli_tests.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/engine_cli_tests.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/explore_cli_tests.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/choose_cli_tests.cmake)
trainsim_cli_test(ops_prints_each_layer_kind 0 "dense x 32:.*qkv +gemm.*compute.*head x 1:.*lm_head" ops scenarios/default.yaml)
trainsim_cli_test(ops_bad_plan_fails 2 "tensor_model_parallel_size: 3 does not divide" ops scenarios/default.yaml --set plan.tensor_model_parallel_size=3)
