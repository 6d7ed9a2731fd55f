#pragma once
// The arguments a training framework's launcher takes for a plan (issue 20: `search --launch
// megatron`). Each framework entry (framework.cpp, the one table) carries its launcher's
// syntax: for each plan key, the argument each value is written as, or why the framework
// cannot express it. Every argument name there was checked against the framework's own
// argument parser at the commit the entry names (LaunchSyntax::checked).
#include <string>
#include <vector>

#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

struct Scenario;

// One plan value's argument. For a key, the rows naming its value exactly apply, else the
// "*" rows; of those, the ones whose `when` holds are written. A value no row names cannot
// be expressed (launch_problems reports it as a gap in the table).
struct LaunchArgument {
  std::string key;    // plan key as plan_overrides names it: "plan.tensor_model_parallel_size"
  std::string value;  // the plan value (as plan_overrides writes it); "*": any
  std::string when;   // "" or "plan.key=value": only when the plan has that value too
  // What the launcher takes, "" for nothing (its default). Placeholders: {value}, {dp},
  // {microbatches}, {layers_per_chunk}, {micro_batch_tokens}, {global_batch_tokens}. A
  // "ds_config:" prefix makes it a key of DeepSpeed's JSON config: "ds_config:bf16.enabled=true".
  std::string text;
  std::string cannot;  // non-empty: the value cannot be expressed, and why
};

struct LaunchSyntax {
  std::string name;     // as --launch takes it: "megatron"; "": the entry has no launcher
  std::string checked;  // the repositories, commits and files every argument name was read in
  std::string program;  // what the arguments go to: "pretrain_gpt.py"
  std::string note;     // a comment line on the program ("" none): whose pretrain_gpt.py
  std::string fixed;    // arguments every plan takes ({ds_config}: the DeepSpeed config's file)
  std::vector<LaunchArgument> arguments;
};

// "megatron|mindspeed|torchtitan|deepspeed": the entries that have a launcher, in table order.
std::string launch_choices();
// The framework entry whose launcher is `name`; throws ConfigError keyed by `option` with the
// valid names otherwise.
Framework parse_launch_option(const std::string& name, const std::string& option = "--launch");

// A plan value the launcher cannot express.
struct LaunchProblem {
  std::string key, value;
  std::string reason;             // the table's reason, or "no argument in the table" (a gap)
  bool listed = true;             // false: a gap in the table, not a documented limit
  std::vector<std::string> can;   // the launchers that can express it (their --launch names)
};
std::vector<LaunchProblem> launch_problems(const ParallelPlan& plan, Framework launcher);

// The plan's arguments for the launcher: command-line tokens ("--tensor-model-parallel-size",
// "8") and, for DeepSpeed, the JSON config (empty otherwise). `scenario` gives the layer count;
// plan.data_parallel_size must be derived. Throws ConfigError (keyed by `option`) naming each
// value the launcher cannot express and the launchers that can.
struct LaunchArguments {
  Framework launcher = Framework::megatron_core;
  std::vector<std::string> command_line;  // tokens, flags each followed by its value if any
  std::string ds_config_json;             // "" unless the launcher takes a DeepSpeed config
};
LaunchArguments launch_arguments(const Scenario& scenario, const ParallelPlan& plan, Framework launcher,
                                 const std::string& option = "--launch");

// The text printed for a plan: a comment line naming the launcher, the commit checked and the
// device layout, then "torchrun ... PROGRAM \" and the arguments, two per line; `config_path`
// is the DeepSpeed config's file name the command refers to.
std::string format_launch(const Scenario& scenario, const ParallelPlan& plan, const LaunchArguments& args,
                          const std::string& config_path = "ds_config.json");

}  // namespace trainsim
