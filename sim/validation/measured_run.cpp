#include "trainsim/validation/measured_run.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <string_view>
#include <type_traits>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/config/schema.hpp"
#include "trainsim/config/yaml_file.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/model_spec.hpp"

namespace trainsim {
namespace {

// The range a measured figure can physically take. Outside it a figure is a typo or a unit
// slip, and its error against any prediction would print as inf or as hundreds of digits.
struct MeasuredRange {
  double min, max;
  const char* unit;  // as the field's name states it
};
// A step launches at least a few kernels of microseconds each; no run steps once a year.
constexpr MeasuredRange kStepTime{1e-6, 3.2e7, "s"};
// Per-pass times: the same bounds in the field's milliseconds.
constexpr MeasuredRange kPassTime{1e-3, 3.2e10, "ms"};
// Achieved TFLOPS per device: 1 GFLOPS is below any accelerator (a CPU core's order); 1e5
// TFLOPS is over 10x the largest dense peak of any device (B200's FP4, 9 PFLOPS).
constexpr MeasuredRange kTflops{1e-3, 1e5, "TFLOPS"};
// Tokens per second per device: the TFLOPS bound over the 6 FLOPs per parameter and token of
// a 1M-parameter model is under 2e10; at the low end, 1e-3 is a token every quarter hour.
constexpr MeasuredRange kTokensPerSecond{1e-3, 2e10, "tokens/s"};
// MFU and HFU as fractions of the peak: 0.01% is a device left idle, not a training
// measurement (the published rows are 14-79%); no device beats its own peak.
constexpr MeasuredRange kUtilization{1e-4, 1, "of the peak"};
// A device's memory in GB: 1 MB holds no model worth training; a million is 5,000x the largest
// HBM (B200's 192 GB), and 1e300 GB overflowed to inf bytes (a fuzzer finding).
constexpr MeasuredRange kDeviceMemory{1e-3, 1e6, "GB"};
constexpr MeasuredRange kDeviceMemoryGib{1e-3, 1e6, "GiB"};

struct RowReader {
  const std::string& file;
  std::vector<Diagnostic>& problems;
  std::vector<std::string>* readings = nullptr;  // how values written otherwise were read

  Diagnostic at(const YAML::Node& node, const std::string& path, const std::string& problem,
                const std::string& valid = "") const {
    const auto mark = node.Mark();
    return Diagnostic{{file, mark.line + 1, mark.column + 1}, path, problem, valid};
  }

  template <typename T>
  std::optional<T> optional(const YAML::Node& parent, const char* key, const std::string& path) const {
    const YAML::Node node = parent[key];
    if (!node || node.IsNull()) return std::nullopt;
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
    }
    // A whole number written as a decimal ("32.0") is that number.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      try {
        const double value = node.as<double>();
        const bool whole = std::isfinite(value) && value == std::floor(value);
        // Within T's range before the cast (2^31 as an int is undefined: fuzz finding). A signed
        // T holds [-2^(n-1), 2^(n-1)), both ends exact in a double.
        static_assert(std::is_signed_v<T>);
        const double bound = -static_cast<double>(std::numeric_limits<T>::min());
        if (whole && value >= -bound && value < bound) return static_cast<T>(value);
        problems.push_back(at(node, path + "." + key,
                              "'" + node.Scalar() + (whole ? "' is out of range" : "' is not a whole number")));
        return std::nullopt;
      } catch (const YAML::Exception&) {
      }
    }
    // A list or a mapping has no scalar text to quote: say what it is.
    const std::string written = node.IsScalar() ? "'" + node.Scalar() + "'" : node.IsSequence() ? "a list" : "a mapping";
    problems.push_back(at(node, path + "." + key, "cannot read " + written + " as a number or flag"));
    return std::nullopt;
  }

  // A ZeRO stage as sources write it: 2, "ZeRO-1", "stage 3", "zero2", "none". One digit 0-3
  // and nothing else numeric; anything else is refused.
  std::optional<int> zero_stage(const YAML::Node& parent, const char* key, const std::string& path) const {
    const YAML::Node node = parent[key];
    if (!node || node.IsNull()) return std::nullopt;
    if (node.IsScalar()) {
      const std::string written = node.Scalar();
      try {  // a number: 0 to 3
        const long long number = node.as<long long>();
        if (number >= 0 && number <= 3) return static_cast<int>(number);
        problems.push_back(at(node, path + "." + key, written + " is out of range; valid: 0, 1, 2, 3"));
        return std::nullopt;
      } catch (const YAML::Exception&) {
      }
      // The words sources put around the digit ("ZeRO-1", "ZeRO stage 3", "zero_2") and nothing
      // else: "ZeRO-1+offload" says more than a stage, and is refused.
      const std::string lowered = lower(written);
      std::string rest;
      for (std::size_t i = 0; i < lowered.size();) {
        if (lowered.compare(i, 4, "zero") == 0) i += 4;
        else if (lowered.compare(i, 5, "stage") == 0) i += 5;
        else if (lowered[i] == ' ' || lowered[i] == '-' || lowered[i] == '_') ++i;
        else rest += lowered[i++];
      }
      const bool unsharded = lowered == "none" || lowered == "no" || lowered == "off" || lowered == "false";
      if (unsharded || (rest.size() == 1 && rest[0] >= '0' && rest[0] <= '3')) {
        const int stage = unsharded ? 0 : rest[0] - '0';
        if (readings) readings->push_back("zero '" + written + "' read as " + std::to_string(stage));
        return stage;
      }
    }
    problems.push_back(at(node, path + "." + key,
                          "cannot read '" + node.Scalar() + "' as a ZeRO stage; valid: 0, 1, 2, 3 (or \"ZeRO-1\"), or null"));
    return std::nullopt;
  }

  // A utilization: a fraction of the peak. Written above 1 (and at most 100) it can only be a
  // percentage, and is read as one.
  std::optional<double> utilization(const YAML::Node& parent, const char* key, const std::string& path) const {
    std::optional<double> value = optional<double>(parent, key, path);
    if (value && *value > 1 && *value <= 100) {
      if (readings) readings->push_back(std::string(key) + " " + parent[key].Scalar() + " read as a percentage");
      *value /= 100;
    }
    if (value && !(*value >= kUtilization.min && *value <= kUtilization.max)) {  // NaN too
      problems.push_back(at(parent[key], path + "." + key,
                            parent[key].Scalar() + " is not a utilization; valid: a fraction of the peak from " +
                                format_number("%g", kUtilization.min) + " to 1 (0.44) or a percentage up to 100, or null"));
      return std::nullopt;
    }
    return value;
  }

  // A count, dimension or parallel size: null (unknown) or at least `minimum`. A 0 would
  // reach a division in the scenario (tp: 0 was a floating point exception).
  template <typename T>
  std::optional<T> at_least(const YAML::Node& parent, const char* key, const std::string& path, T minimum) const {
    return within<T>(parent, key, path, minimum, std::numeric_limits<T>::max());
  }

  // A value null or within the bounds of a key of the model or scenario schema (which leave
  // headroom over every published model and cluster). Without the upper bound, heads of 3e9
  // reached the workload as a negative int and a hardware count of 2^30 had the simulation
  // list a billion-rank group (2 GiB at once).
  template <typename T>
  std::optional<T> schema_bounded(const YAML::Node& parent, const char* key, const std::string& path, FileKind kind,
                                  const char* schema_key) const {
    for (const KeySpec& spec : key_schema(kind)) {
      if (std::string_view(spec.path) == schema_key)
        return within<T>(parent, key, path, static_cast<T>(spec.min), static_cast<T>(spec.max));
    }
    throw SimError(std::string("measured runs: no key ") + schema_key + " in the schema");
  }

  std::optional<long long> model_dimension(const YAML::Node& parent, const char* key, const std::string& path,
                                           const char* model_key) const {
    return schema_bounded<long long>(parent, key, path, FileKind::model, model_key);
  }

  // A plan size or device count: the scenario key's bounds (a data-parallel size takes the
  // device count's).
  std::optional<int> plan_size(const YAML::Node& parent, const char* key, const std::string& path,
                               const char* scenario_key) const {
    return schema_bounded<int>(parent, key, path, FileKind::scenario, scenario_key);
  }

  template <typename T>
  std::optional<T> within(const YAML::Node& parent, const char* key, const std::string& path, T minimum,
                          T maximum) const {
    auto value = optional<T>(parent, key, path);
    if (value && (*value < minimum || *value > maximum)) {
      const std::string valid = maximum == std::numeric_limits<T>::max()
                                    ? ">= " + std::to_string(minimum)
                                    : std::to_string(minimum) + " to " + std::to_string(maximum);
      problems.push_back(at(parent[key], path + "." + key,
                            std::to_string(*value) + " is out of range; valid: " + valid +
                                " (or null when the source does not say)"));
      return std::nullopt;
    }
    return value;
  }

  // A measured figure: null or a number within `range` (a 0 gave an error of "+inf%", 5e-324 s
  // one of "+inf%" and 1e-300 one of 300 digits: a physical range keeps every error finite and
  // readable).
  std::optional<double> measured(const YAML::Node& parent, const char* key, const std::string& path,
                                 const MeasuredRange& range) const {
    auto value = optional<double>(parent, key, path);
    if (value && !(*value >= range.min && *value <= range.max)) {  // NaN too
      problems.push_back(at(parent[key], path + "." + key,
                            parent[key].Scalar() + " is not a measurement; valid: " + format_number("%g", range.min) +
                                " to " + format_number("%g", range.max) + " " + range.unit + ", or null"));
      return std::nullopt;
    }
    return value;
  }

  std::string text(const YAML::Node& parent, const char* key) const {
    const YAML::Node node = parent[key];
    return node && node.IsScalar() ? node.Scalar() : std::string();
  }
};

}  // namespace

int source_year(const std::string& source) {
  const auto alnum = [&](std::size_t i) { return i < source.size() && std::isalnum(static_cast<unsigned char>(source[i])); };
  const auto digits = [&](std::size_t at, std::size_t n) {
    for (std::size_t i = at; i < at + n; ++i)
      if (i >= source.size() || !std::isdigit(static_cast<unsigned char>(source[i]))) return false;
    return true;
  };
  int arxiv = 0, standalone = 0;
  for (std::size_t at = 0; at + 4 <= source.size(); ++at) {
    if ((at > 0 && (alnum(at - 1) || source[at - 1] == '.')) || !digits(at, 4)) continue;
    const int first = std::stoi(source.substr(at, 2)), second = std::stoi(source.substr(at + 2, 2));
    const bool identifier = at + 4 < source.size() && source[at + 4] == '.' &&
                            ((digits(at + 5, 4) && !alnum(at + 9)) || (digits(at + 5, 5) && !alnum(at + 10)));
    if (identifier && second >= 1 && second <= 12 && first >= 7) {
      const int year = 2000 + first;
      arxiv = arxiv == 0 ? year : std::min(arxiv, year);
    } else if (!alnum(at + 4) && first == 20 && second >= 10 && second <= 30) {
      const int year = 2000 + second;
      standalone = standalone == 0 ? year : std::min(standalone, year);
    }
  }
  if (arxiv != 0 || standalone != 0) return arxiv != 0 ? arxiv : standalone;
  const std::string lowered = lower(source);
  // Projects whose source names no year, dated by their own records: BigScience's tr11 runs
  // (bigscience-workshop/bigscience, BLOOM's training of 2022) and BMTrain's README table
  // (OpenBMB/BMTrain, of 2022-03-28).
  if (lowered.find("bigscience-workshop") != std::string::npos || lowered.find("openbmb/bmtrain") != std::string::npos) return 2022;
  return 0;
}

// A framework as a source writes it ("DeepSpeed", "PyTorch FSDP", "MindSpeed-LLM"), as the
// framework table's entry: an entry's own name first; then, case, spaces and underscores free,
// the projects' names. "Megatron-LM" and "DeepSpeed" name the version of the run's date
// (source_year): Megatron-LM of the 2021-22 papers (megatron-lm) until 2022, Megatron-Core after;
// DeepSpeed before 0.6.0 (deepspeed-2021) for a source dated 2021 or earlier.
static std::optional<std::string> framework_entry_named(const std::string& written, const std::string& source) {
  if (parse_framework(written)) return written;
  std::string name = lower(written);
  std::replace(name.begin(), name.end(), ' ', '-');
  std::replace(name.begin(), name.end(), '_', '-');
  const int year = source_year(source);
  if (name == "megatron-lm") return year != 0 && year <= 2022 ? "megatron-lm" : "megatron-core";
  if (name == "deepspeed" || name == "megatron-deepspeed")
    return year != 0 && year <= 2021 ? "deepspeed-2021" : "deepspeed";
  if (parse_framework(name)) return name;
  static const std::pair<const char*, const char*> kAliases[] = {
      {"mcore", "megatron-core"},       {"pytorch-fsdp", "fsdp"},  {"fsdp2", "fsdp"},
      {"torchtitan", "fsdp"},           {"mindspeed-llm", "mindspeed"},
      {"modellink", "mindspeed"},       {"mindspore", "mindformers"}, {"openbmb-bmtrain", "bmtrain"},
      {"composer", "llm-foundry"},      {"mosaicml-llm-foundry", "llm-foundry"}};
  for (const auto& [alias, entry] : kAliases)
    if (name == alias) return std::string(entry);
  return std::nullopt;
}

std::vector<MeasuredRun> read_measured_runs(const std::string& path) {
  // One document (a second is refused, not ignored); a missing file, a directory or
  // malformed YAML is a one-line ConfigError naming the file.
  const YAML::Node root = read_yaml_file(path);
  if (!root.IsSequence()) {
    Diagnostic d;
    d.where = SourceLocation{path, std::max(1, root.Mark().line + 1), std::max(1, root.Mark().column + 1)};
    d.problem = "expected a list of runs, found " + std::string(root.IsMap() ? "a mapping" : root.IsNull() ? "nothing" : "a scalar");
    d.valid = "- id: ... entries, as in tests/validation/calibration.yaml";
    throw ConfigError(std::move(d));
  }
  // A file of no runs has nothing to validate or fit: said, not reported as a MAPE over nothing.
  if (root.size() == 0) {
    throw ConfigError(Diagnostic({path, std::max(1, root.Mark().line + 1), std::max(1, root.Mark().column + 1)}, "",
                                 "the list of runs is empty",
                                 "- id: ... entries, as in tests/validation/calibration.yaml"));
  }
  std::vector<MeasuredRun> runs;
  std::vector<YAML::Node> memory_of_nodes;  // per run: where its memory_of was written
  // Where each id was first written: a run is named by its id (--show, memory_of, a fit's
  // folds), and a copied row counted twice made calibrate's leave-one-out a fake 0.1%.
  std::map<std::string, int> line_of_id;
  for (std::size_t i = 0; i < root.size(); ++i) {
    const YAML::Node row = root[i];
    MeasuredRun run;
    std::vector<Diagnostic>& problems = run.problems;
    const RowReader read{path, problems, &run.readings};
    const std::string position = "[" + std::to_string(i) + "]";
    if (!row.IsMap()) {
      problems.push_back(read.at(row, position, "a run must be a mapping",
                                 "id:, model:, hardware:, plan:, measured: (as each run of tests/validation/calibration.yaml)"));
    } else {
      run.id = read.text(row, "id");
      if (run.id.empty())
        problems.push_back(read.at(row, position, "run has no id", "id: a name no other run of the file has"));
      for (const char* section : {"model", "hardware", "plan", "measured"}) {
        if (!row[section] || !row[section].IsMap())
          problems.push_back(read.at(row, (run.id.empty() ? position : run.id) + "." + section, "missing section",
                                     std::string(section) + ": a mapping of its fields (as in tests/validation/calibration.yaml)"));
      }
    }
    if (!problems.empty()) {  // kept, named by its position when it has no id
      if (run.id.empty()) run.id = position;
      memory_of_nodes.push_back(YAML::Node());
      runs.push_back(std::move(run));
      continue;
    }
    const std::string& where = run.id;
    run.group = read.text(row, "group");
    run.schedule = read.text(row, "schedule");
    run.source = read.text(row, "source");
    run.notes = read.text(row, "notes");

    const YAML::Node model = row["model"];
    const std::string mp = where + ".model";
    run.model_name = read.text(model, "name");
    run.layers = read.model_dimension(model, "layers", mp, "num_hidden_layers");
    run.hidden = read.model_dimension(model, "hidden", mp, "hidden_size");
    run.heads = read.model_dimension(model, "heads", mp, "num_attention_heads");
    run.kv_heads = read.model_dimension(model, "kv_heads", mp, "num_key_value_heads");
    run.ffn = read.model_dimension(model, "ffn", mp, "intermediate_size");
    run.vocab = read.model_dimension(model, "vocab", mp, "vocab_size");
    run.seq_len = read.model_dimension(model, "seq_len", mp, "max_position_embeddings");
    run.position_embedding = read.optional<std::string>(model, "position_embedding", mp);
    if (run.position_embedding && !parse_position_embedding(*run.position_embedding)) {
      problems.push_back(read.at(model["position_embedding"], mp + ".position_embedding",
                                 "'" + *run.position_embedding + "' is not a position encoding; valid: " +
                                     position_embedding_choices()));
    }
    if (model["moe"] && model["moe"].IsMap()) {
      const YAML::Node moe = model["moe"];
      run.moe_experts = read.model_dimension(moe, "experts", mp + ".moe", "num_local_experts");
      run.moe_topk = read.model_dimension(moe, "topk", mp + ".moe", "num_experts_per_tok");
      run.moe_ffn = read.model_dimension(moe, "moe_ffn", mp + ".moe", "moe_intermediate_size");
      run.moe_shared_experts = read.model_dimension(moe, "shared_experts", mp + ".moe", "n_shared_experts");
      run.moe_first_dense_layers = read.model_dimension(moe, "first_dense_layers", mp + ".moe", "first_k_dense_replace");
    }

    const YAML::Node hardware = row["hardware"];
    run.accelerator = read.text(hardware, "accelerator");
    run.count = read.plan_size(hardware, "count", where + ".hardware", "num_devices").value_or(0);
    run.per_node = read.schema_bounded<int>(hardware, "per_node", where + ".hardware", FileKind::hardware, "node.devices_per_node");

    const YAML::Node plan = row["plan"];
    const std::string pp = where + ".plan";
    run.tp = read.plan_size(plan, "tp", pp, "plan.tensor_model_parallel_size");
    run.pp = read.plan_size(plan, "pp", pp, "plan.pipeline_model_parallel_size");
    run.dp = read.plan_size(plan, "dp", pp, "num_devices");
    run.vpp = read.plan_size(plan, "vpp", pp, "plan.virtual_pipeline_model_parallel_size");
    run.cp = read.plan_size(plan, "cp", pp, "plan.context_parallel_size");
    run.ep = read.plan_size(plan, "ep", pp, "plan.expert_model_parallel_size");
    run.micro_batch = read.plan_size(plan, "micro_batch", pp, "plan.micro_batch_size");
    run.global_batch = read.plan_size(plan, "global_batch", pp, "plan.global_batch_size");
    run.zero = read.zero_stage(plan, "zero", pp);
    run.sp = read.optional<bool>(plan, "sp", pp);
    run.recompute = read.optional<std::string>(plan, "recompute", pp);
    run.framework = read.optional<std::string>(plan, "framework", pp);
    if (run.framework) {
      if (const std::optional<std::string> entry = framework_entry_named(*run.framework, run.source)) {
        if (*entry != *run.framework) run.readings.push_back("framework '" + *run.framework + "' read as " + *entry);
        run.framework = entry;
      } else {
        problems.push_back(read.at(plan["framework"], pp + ".framework",
                                   "'" + *run.framework + "' is not a framework; valid: " + framework_choices() +
                                       " (or a project's name: DeepSpeed, PyTorch FSDP, torchtitan, MindSpeed-LLM, NeMo)"));
      }
    }
    run.offload_optimizer = read.optional<std::string>(plan, "offload_optimizer", pp);
    if (run.offload_optimizer && *run.offload_optimizer != "cpu" && *run.offload_optimizer != "none") {
      problems.push_back(read.at(plan["offload_optimizer"], pp + ".offload_optimizer",
                                 "'" + *run.offload_optimizer + "' is not an optimizer placement; valid: none, cpu"));
    }

    const YAML::Node measured = row["measured"];
    const std::string mm = where + ".measured";
    run.step_time_s = read.measured(measured, "step_time_s", mm, kStepTime);
    run.tflops_per_device = read.measured(measured, "tflops_per_device", mm, kTflops);
    run.mfu = read.utilization(measured, "mfu", mm);
    run.hfu = read.utilization(measured, "hfu", mm);
    run.tokens_per_s_per_device = read.measured(measured, "tokens_per_s_per_device", mm, kTokensPerSecond);
    run.memory_gb = read.measured(measured, "memory_gb", mm, kDeviceMemory);
    run.memory_gib = read.measured(measured, "memory_gib", mm, kDeviceMemoryGib);
    run.memory_of = read.text(measured, "memory_of");
    if (const auto measure = read.optional<std::string>(measured, "memory_measure", mm)) {
      const YAML::Node at = measured["memory_measure"];
      if (*measure == "allocated") run.memory_measure = MeasuredRun::MemoryMeasure::allocated;
      else if (*measure == "reserved") run.memory_measure = MeasuredRun::MemoryMeasure::reserved;
      else
        problems.push_back(read.at(at, mm + ".memory_measure",
                                   "'" + *measure + "' is not a memory measure; valid: allocated, reserved"));
      if (!run.memory_gb && !run.memory_gib)
        problems.push_back(read.at(at, mm + ".memory_measure",
                                   "says which peak a memory figure is, but the run gives none; valid: with "
                                   "memory_gb or memory_gib"));
    }
    if (const YAML::Node passes = measured["pass_times_ms"]; passes && !passes.IsNull()) {
      const std::string pm = mm + ".pass_times_ms";
      if (!passes.IsMap()) {
        problems.push_back(read.at(passes, pm,
                                   "is not a mapping; valid: forward, backward_input, backward_weight and transfer "
                                   "in ms, each a number > 0 or null"));
      } else {
        MeasuredRun::PassTimes times;
        times.forward = read.measured(passes, "forward", pm, kPassTime);
        times.backward_input = read.measured(passes, "backward_input", pm, kPassTime);
        times.backward_weight = read.measured(passes, "backward_weight", pm, kPassTime);
        times.transfer = read.measured(passes, "transfer", pm, kPassTime);
        run.pass_times_ms = times;
      }
    }
    const YAML::Node id = row["id"];
    if (const auto [first, inserted] = line_of_id.emplace(run.id, id.Mark().line + 1); !inserted) {
      problems.push_back(read.at(id, position + ".id",
                                 "'" + run.id + "' is also the id of the run at line " + std::to_string(first->second) +
                                     "; valid: an id of its own for each run"));
    }
    memory_of_nodes.push_back(measured["memory_of"]);
    runs.push_back(std::move(run));
  }
  // memory_of names an earlier or later row of the same file that measured this very figure.
  std::map<std::string, const MeasuredRun*> by_id;
  for (const auto& run : runs) by_id.emplace(run.id, &run);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    MeasuredRun& run = runs[i];
    if (run.memory_of.empty()) continue;
    const RowReader read{path, run.problems};
    const std::string key = run.id + ".measured.memory_of";
    const auto found = by_id.find(run.memory_of);
    if (found == by_id.end()) {
      run.problems.push_back(read.at(memory_of_nodes[i], key, "no run '" + run.memory_of + "' in this file"));
      continue;
    }
    const MeasuredRun& origin = *found->second;
    if (!origin.memory_of.empty() || &origin == &run) {
      run.problems.push_back(read.at(memory_of_nodes[i], key, "'" + run.memory_of + "' does not hold its own measurement"));
    } else if (origin.memory_gib != run.memory_gib || origin.memory_gb != run.memory_gb) {
      run.problems.push_back(read.at(memory_of_nodes[i], key,
                                 "'" + run.memory_of + "' has a different memory figure; valid: the figure of the run it names"));
    }
  }
  return runs;
}

std::vector<Diagnostic> problems_of(const std::vector<MeasuredRun>& runs) {
  std::vector<Diagnostic> problems;
  for (const MeasuredRun& run : runs) problems.insert(problems.end(), run.problems.begin(), run.problems.end());
  return problems;
}

std::vector<MeasuredRun> load_measured_runs(const std::string& path) {
  std::vector<MeasuredRun> runs = read_measured_runs(path);
  if (std::vector<Diagnostic> problems = problems_of(runs); !problems.empty()) throw ConfigError(std::move(problems));
  return runs;
}

}  // namespace trainsim
