// A plan's launch arguments, read from the framework entries' launch tables (framework.cpp).
#include "trainsim/framework/launch.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/schedule/layer_split.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {

namespace {

using Values = std::map<std::string, std::string>;

Values plan_values(const ParallelPlan& plan) {
  Values out;
  for (const auto& o : plan_overrides(plan)) out[o.key_path] = o.value;
  // plan_overrides leaves the recompute method out unless recompute is full (the loader refuses
  // it with selective, as Megatron does); the tables' rows name its value, read only under full.
  out.emplace("plan.recompute_method", plan.recompute_method == RecomputeMethod::block ? "block" : "uniform");
  return out;
}

const LaunchSyntax& syntax_of(Framework launcher) {
  const LaunchSyntax& s = framework_entry(launcher).launch;
  if (s.name.empty()) throw SimError("launch: framework entry " + std::string(to_string(launcher)) + " has no launcher");
  return s;
}

// The rows naming the value exactly, else the "*" rows.
std::vector<const LaunchArgument*> rows_for(const LaunchSyntax& s, const std::string& key, const std::string& value) {
  std::vector<const LaunchArgument*> exact, any;
  for (const LaunchArgument& a : s.arguments) {
    if (a.key != key) continue;
    if (a.value == value) exact.push_back(&a);
    if (a.value == "*") any.push_back(&a);
  }
  return exact.empty() ? any : exact;
}

bool holds(const std::string& when, const Values& values) {
  if (when.empty()) return true;
  const auto eq = when.find('=');
  const auto it = values.find(when.substr(0, eq));
  return it != values.end() && it->second == when.substr(eq + 1);
}

// The table's keys, in the order of their first row.
std::vector<std::string> keys_of(const LaunchSyntax& s) {
  std::vector<std::string> keys;
  for (const LaunchArgument& a : s.arguments)
    if (std::find(keys.begin(), keys.end(), a.key) == keys.end()) keys.push_back(a.key);
  return keys;
}

// The rows written for the plan's value of `key`; `cannot` gets the first refusal ("" none),
// `gap` whether no row names the value at all.
std::vector<const LaunchArgument*> applied_rows(const LaunchSyntax& s, const std::string& key, const Values& values,
                                                std::string& cannot, bool& gap) {
  const auto it = values.find(key);
  const std::string value = it == values.end() ? "" : it->second;
  const auto rows = rows_for(s, key, value);
  gap = rows.empty();
  cannot.clear();
  std::vector<const LaunchArgument*> out;
  for (const LaunchArgument* a : rows) {
    if (!holds(a->when, values)) continue;
    if (!a->cannot.empty() && cannot.empty()) cannot = a->cannot;
    out.push_back(a);
  }
  return out;
}

bool expresses(const LaunchSyntax& s, const std::string& key, const Values& values) {
  std::string cannot;
  bool gap = false;
  applied_rows(s, key, values, cannot, gap);
  return !gap && cannot.empty();
}

// Model chunks over the pipeline: p x the schedule's chunks per stage (zb-v and dualpipev
// hold two in a V; DualPipe's two are whole stages of two copies of the model, p in all).
long long pipeline_chunks(const ParallelPlan& plan) {
  const int p = std::max(1, plan.pipeline_model_parallel_size);
  const int v = chunks_per_stage(plan.schedule, plan.virtual_pipeline_model_parallel_size);
  return static_cast<long long>(p) * (model_copies(plan.schedule) > 1 ? 1 : v);
}

int layers_per_chunk(const Scenario& scenario, const ParallelPlan& plan) {
  return static_cast<int>(scenario.model.num_layers / pipeline_chunks(plan));
}

std::string substitute(std::string text, const std::map<std::string, std::string>& with) {
  for (const auto& [name, value] : with) {
    const std::string mark = "{" + name + "}";
    for (auto at = text.find(mark); at != std::string::npos; at = text.find(mark, at + value.size()))
      text.replace(at, mark.size(), value);
  }
  return text;
}

// "true" / "false" / a number as JSON literals, anything else as a string.
nlohmann::json json_value(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  try {
    std::size_t used = 0;
    const long long n = std::stoll(text, &used);
    if (used == text.size()) return n;
  } catch (const std::exception&) {
  }
  return text;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// Megatron's uneven-split keys (layer_split.hpp): plan_overrides writes each only when the plan
// sets it, so a launcher whose table has no row for one would drop it silently.
constexpr std::array<const char*, 4> kUnevenSplitKeys = {
    "plan.decoder_first_pipeline_num_layers", "plan.decoder_last_pipeline_num_layers",
    "plan.account_for_embedding_in_pipeline_split", "plan.account_for_loss_in_pipeline_split"};

bool sets_uneven_split(const ParallelPlan& plan) {
  return plan.decoder_first_pipeline_num_layers > 0 || plan.decoder_last_pipeline_num_layers > 0 ||
         plan.account_for_embedding_in_pipeline_split || plan.account_for_loss_in_pipeline_split;
}

}  // namespace

std::string launch_choices() {
  std::string out;
  for (const FrameworkEntry& e : framework_table())
    if (!e.launch.name.empty()) out += (out.empty() ? "" : "|") + e.launch.name;
  return out;
}

Framework parse_launch_option(const std::string& name, const std::string& option) {
  for (const FrameworkEntry& e : framework_table())
    if (!e.launch.name.empty() && e.launch.name == name) return e.id;
  throw ConfigError(Diagnostic({}, option, "unknown launcher '" + name + "'", launch_choices()));
}

std::vector<LaunchProblem> launch_problems(const ParallelPlan& plan, Framework launcher) {
  const LaunchSyntax& s = syntax_of(launcher);
  const Values values = plan_values(plan);
  std::vector<LaunchProblem> out;
  std::vector<std::string> keys = keys_of(s);
  for (const std::string key : kUnevenSplitKeys)
    if (values.count(key) && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  for (const std::string& key : keys) {
    std::string cannot;
    bool gap = false;
    applied_rows(s, key, values, cannot, gap);
    if (!gap && cannot.empty()) continue;
    LaunchProblem p{key, values.count(key) ? values.at(key) : "", gap ? "no argument in the table" : cannot, !gap, {}};
    for (const FrameworkEntry& e : framework_table())
      if (!e.launch.name.empty() && e.id != launcher && expresses(e.launch, key, values)) p.can.push_back(e.launch.name);
    out.push_back(std::move(p));
  }
  return out;
}

LaunchArguments launch_arguments(const Scenario& scenario, const ParallelPlan& plan, Framework launcher,
                                 const std::string& option) {
  const LaunchSyntax& s = syntax_of(launcher);
  std::vector<Diagnostic> problems;
  for (const LaunchProblem& p : launch_problems(plan, launcher)) {
    std::string valid = p.can.empty() ? "no launcher trainsim knows takes it" : "--launch " + join(p.can, ", --launch ");
    problems.push_back(Diagnostic({}, option,
                                  p.key + " = " + p.value + " cannot be expressed in " + s.name + "'s arguments: " +
                                      p.reason,
                                  valid));
  }
  const long long layers = scenario.model.num_layers;
  const long long chunks = pipeline_chunks(plan);
  // An uneven split is Megatron's own rule (layer_split.hpp), written as its keys; its checks
  // are Megatron's. Otherwise the arguments give an even split.
  if (sets_uneven_split(plan)) {
    for (const SplitProblem& p : layer_split_problems(plan, static_cast<int>(layers)))
      problems.push_back(Diagnostic({}, option, p.key + ": " + p.problem, p.valid));
  } else if (chunks > 1 && layers % chunks != 0 && framework_entry(plan.framework).pipeline_split_edge_layers.value == 0)
    problems.push_back(Diagnostic({}, option,
                                  std::to_string(layers) + " layers do not split evenly over " +
                                      std::to_string(chunks) + " pipeline chunks (PP x virtual stages)",
                                  "the launch arguments give an even split; set the framework's own layer split"));
  if (!problems.empty()) throw ConfigError(problems);

  const Values values = plan_values(plan);
  const int per_chunk = layers_per_chunk(scenario, plan);
  const int n = plan.recompute_num_layers;
  std::map<std::string, std::string> with = {
      {"dp", std::to_string(plan.data_parallel_size)},
      {"microbatches", std::to_string(plan.num_microbatches())},
      {"layers_per_chunk", std::to_string(per_chunk)},
      {"micro_batch_tokens", std::to_string(static_cast<long long>(plan.micro_batch_size) * plan.seq_length)},
      {"global_batch_tokens", std::to_string(static_cast<long long>(plan.global_batch_size) * plan.seq_length)},
      // trainsim's 0 is every layer: Megatron's uniform units of 1 layer, or a block of the whole chunk.
      {"recompute_num_layers",
       std::to_string(n > 0 ? n : plan.recompute_method == RecomputeMethod::uniform ? 1 : per_chunk)},
  };
  LaunchArguments out;
  out.launcher = launcher;
  nlohmann::ordered_json config;
  for (const std::string& key : keys_of(s)) {
    std::string cannot;
    bool gap = false;
    with["value"] = values.count(key) ? values.at(key) : "";
    for (const LaunchArgument* a : applied_rows(s, key, values, cannot, gap)) {
      const std::string text = substitute(a->text, with);
      if (text.empty()) continue;
      const std::string prefix = "ds_config:";
      if (text.rfind(prefix, 0) != 0) {
        out.command_line.push_back(text);
        continue;
      }
      const auto eq = text.find('=');
      nlohmann::ordered_json* node = &config;
      for (const auto& part : split(text.substr(prefix.size(), eq - prefix.size()), '.')) node = &(*node)[part];
      *node = json_value(text.substr(eq + 1));
    }
  }
  if (!config.empty()) out.ds_config_json = config.dump(2) + "\n";
  return out;
}

std::string format_launch(const Scenario& scenario, const ParallelPlan& plan, const LaunchArguments& args,
                          const std::string& config_path) {
  const LaunchSyntax& s = syntax_of(args.launcher);
  const int devices = scenario.num_devices;
  const int per_node = std::max(1, std::min(devices, scenario.hardware.node.devices_per_node));
  const int nodes = (devices + per_node - 1) / per_node;
  std::string out = "# " + s.name + " (" + framework_entry(args.launcher).name + "): " + describe_plan(plan) + "\n";
  out += "# " + std::to_string(devices) + " devices = " + std::to_string(nodes) + " x " + std::to_string(per_node) +
         "; DP " + std::to_string(plan.data_parallel_size) + " follows from them. Argument names checked in " +
         s.checked + ".\n# " + (s.note.empty() ? "" : s.note + "; the ") +
         "model's, data's and optimizer's arguments are the run's own.\n";
  out += "torchrun --nnodes " + std::to_string(nodes) + " --nproc_per_node " + std::to_string(per_node) + " " +
         s.program;
  std::vector<std::string> lines = args.command_line;
  if (!s.fixed.empty()) lines.insert(lines.begin(), substitute(s.fixed, {{"ds_config", config_path}}));
  for (const auto& line : lines) out += " \\\n    " + line;
  return out + "\n";
}

}  // namespace trainsim
