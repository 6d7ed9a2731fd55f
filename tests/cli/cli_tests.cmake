# Command-line behaviour: exit codes and messages.
trainsim_cli_test(help_lists_commands 0 "run" --help)
trainsim_cli_test(unknown_subcommand_fails 2 "no-such-command|subcommand" no-such-command)
include(${CMAKE_CURRENT_LIST_DIR}/config_cli_tests.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/engine_cli_tests.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/explore_cli_tests.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/choose_cli_tests.cmake)
