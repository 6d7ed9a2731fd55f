#include "trainsim/validation/measured_run.hpp"

#include <yaml-cpp/yaml.h>

#include "trainsim/common/error.hpp"

namespace trainsim {
namespace {

struct RowReader {
  const std::string& file;
  std::vector<Diagnostic>& problems;

  Diagnostic at(const YAML::Node& node, const std::string& path, const std::string& problem) const {
    const auto mark = node.Mark();
    return Diagnostic{{file, mark.line + 1, mark.column + 1}, path, problem, ""};
  }

  template <typename T>
  std::optional<T> optional(const YAML::Node& parent, const char* key, const std::string& path) const {
    const YAML::Node node = parent[key];
    if (!node || node.IsNull()) return std::nullopt;
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      problems.push_back(at(node, path + "." + key, "cannot read '" + node.Scalar() + "' as a number or flag"));
      return std::nullopt;
    }
  }

  std::string text(const YAML::Node& parent, const char* key) const {
    const YAML::Node node = parent[key];
    return node && node.IsScalar() ? node.Scalar() : std::string();
  }
};

}  // namespace

std::vector<MeasuredRun> load_measured_runs(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    Diagnostic d;
    d.where.file = path;
    d.problem = "cannot open the file";
    d.valid = "a path to a calibration.yaml-style file";
    throw ConfigError(std::move(d));
  } catch (const YAML::ParserException& e) {
    Diagnostic d;
    d.where = SourceLocation{path, e.mark.line + 1, e.mark.column + 1};
    d.problem = "malformed YAML: " + e.msg;
    throw ConfigError(std::move(d));
  }
  if (!root.IsSequence()) {
    Diagnostic d;
    d.where = SourceLocation{path, 1, 1};
    d.problem = "expected a list of runs";
    d.valid = "- id: ... entries";
    throw ConfigError(std::move(d));
  }
  std::vector<Diagnostic> problems;
  const RowReader read{path, problems};
  std::vector<MeasuredRun> runs;
  for (std::size_t i = 0; i < root.size(); ++i) {
    const YAML::Node row = root[i];
    MeasuredRun run;
    run.id = read.text(row, "id");
    const std::string where = run.id.empty() ? "[" + std::to_string(i) + "]" : run.id;
    if (run.id.empty()) problems.push_back(read.at(row, where, "run has no id"));
    for (const char* section : {"model", "hardware", "plan", "measured"}) {
      if (!row[section] || !row[section].IsMap()) problems.push_back(read.at(row, where + "." + section, "missing section"));
    }
    if (!problems.empty()) continue;
    run.group = read.text(row, "group");
    run.schedule = read.text(row, "schedule");
    run.source = read.text(row, "source");
    run.notes = read.text(row, "notes");

    const YAML::Node model = row["model"];
    const std::string mp = where + ".model";
    run.model_name = read.text(model, "name");
    run.layers = read.optional<long long>(model, "layers", mp);
    run.hidden = read.optional<long long>(model, "hidden", mp);
    run.heads = read.optional<long long>(model, "heads", mp);
    run.kv_heads = read.optional<long long>(model, "kv_heads", mp);
    run.ffn = read.optional<long long>(model, "ffn", mp);
    run.vocab = read.optional<long long>(model, "vocab", mp);
    run.seq_len = read.optional<long long>(model, "seq_len", mp);
    if (model["moe"] && model["moe"].IsMap()) {
      const YAML::Node moe = model["moe"];
      run.moe_experts = read.optional<long long>(moe, "experts", mp + ".moe");
      run.moe_topk = read.optional<long long>(moe, "topk", mp + ".moe");
      run.moe_ffn = read.optional<long long>(moe, "moe_ffn", mp + ".moe");
      run.moe_shared_experts = read.optional<long long>(moe, "shared_experts", mp + ".moe");
    }

    const YAML::Node hardware = row["hardware"];
    run.accelerator = read.text(hardware, "accelerator");
    run.count = read.optional<int>(hardware, "count", where + ".hardware").value_or(0);
    run.per_node = read.optional<int>(hardware, "per_node", where + ".hardware").value_or(8);

    const YAML::Node plan = row["plan"];
    const std::string pp = where + ".plan";
    run.tp = read.optional<int>(plan, "tp", pp);
    run.pp = read.optional<int>(plan, "pp", pp);
    run.dp = read.optional<int>(plan, "dp", pp);
    run.vpp = read.optional<int>(plan, "vpp", pp);
    run.cp = read.optional<int>(plan, "cp", pp);
    run.ep = read.optional<int>(plan, "ep", pp);
    run.micro_batch = read.optional<int>(plan, "micro_batch", pp);
    run.global_batch = read.optional<int>(plan, "global_batch", pp);
    run.zero = read.optional<int>(plan, "zero", pp);
    run.sp = read.optional<bool>(plan, "sp", pp);
    run.recompute = read.optional<std::string>(plan, "recompute", pp);

    const YAML::Node measured = row["measured"];
    const std::string mm = where + ".measured";
    run.step_time_s = read.optional<double>(measured, "step_time_s", mm);
    run.tflops_per_device = read.optional<double>(measured, "tflops_per_device", mm);
    run.mfu = read.optional<double>(measured, "mfu", mm);
    run.hfu = read.optional<double>(measured, "hfu", mm);
    run.tokens_per_s_per_device = read.optional<double>(measured, "tokens_per_s_per_device", mm);
    run.memory_gb = read.optional<double>(measured, "memory_gb", mm);
    run.memory_gib = read.optional<double>(measured, "memory_gib", mm);
    runs.push_back(std::move(run));
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
  return runs;
}

}  // namespace trainsim
