#pragma once
// The exploration commands of `trainsim`: sweep, max-batch, compare, search, choose, explain, scale.
#include <CLI/CLI.hpp>
#include <functional>

// Adds the commands to `app`. When one of them is parsed, `action` is set to the work it
// does; main calls it inside its error handling (ConfigError -> exit 2, ...). Option
// storage lives in the closures, so nothing here outlives `action`.
void add_explore_commands(CLI::App& app, std::function<void()>& action);
