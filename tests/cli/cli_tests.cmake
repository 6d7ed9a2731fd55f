# Command-line behaviour: exit codes and messages.
trainsim_cli_test(help_lists_commands 0 "run" --help)
trainsim_cli_test(unknown_subcommand_fails 2 "no-such-command|subcommand" no-such-command)
