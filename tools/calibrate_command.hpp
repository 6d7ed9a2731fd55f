#pragma once
// `trainsim calibrate` (fit registry keys to a user's measured runs), `validate
// --cross-validate K|loo` (out-of-sample error of the shipped fits) and `validate
// --write-out-of-sample FILE` (the committed leave-one-out errors, confidence.hpp).
#include <CLI/CLI.hpp>
#include <functional>

// Adds the calibrate command, and the --cross-validate and --write-out-of-sample options to the existing validate
// command (call after validate is added). When either is parsed, `action` is set to the
// work it does, as add_explore_commands does.
void add_calibrate_commands(CLI::App& app, std::function<void()>& action);
