#pragma once
// `trainsim calibrate` (fit registry keys to a user's measured runs) and `validate
// --cross-validate K|loo` (out-of-sample error of the shipped fits).
#include <CLI/CLI.hpp>
#include <functional>

// Adds the calibrate command, and the --cross-validate option to the existing validate
// command (call after validate is added). When either is parsed, `action` is set to the
// work it does, as add_explore_commands does.
void add_calibrate_commands(CLI::App& app, std::function<void()>& action);
