// The key tables of model, hardware and scenario files, and the validation walker they drive.
#include "trainsim/config/schema.hpp"
#include "trainsim/common/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "validate.hpp"

namespace trainsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using T = ValueType;
using D = Dimension;

// clang-format off
const std::vector<KeySpec> kModelKeys = {
  {"name", T::string, D::none, "", false, 0, 0, "", "model name (default: file name)"},
  {"source", T::string, D::none, "", false, 0, 0, "", "where the dimensions were published"},
  {"model_type", T::string, D::none, "", false, 0, 0, "", "HF model_type (informational)"},
  {"hidden_size", T::integer, D::none, "", true, 1, kInf, "", "model width h"},
  {"num_hidden_layers", T::integer, D::none, "", true, 1, kInf, "", "transformer layers l"},
  {"num_attention_heads", T::integer, D::none, "", true, 1, kInf, "", "query heads a"},
  {"num_key_value_heads", T::integer, D::none, "", false, 1, kInf, "", "KV heads (GQA/MQA); default num_attention_heads"},
  {"head_dim", T::integer, D::none, "", false, 1, kInf, "", "per-head width; default hidden_size / num_attention_heads"},
  {"intermediate_size", T::integer, D::none, "", true, 1, kInf, "", "dense MLP width"},
  {"vocab_size", T::integer, D::none, "", true, 1, kInf, "", "vocabulary V"},
  {"max_position_embeddings", T::integer, D::none, "", true, 1, kInf, "", "longest trained sequence"},
  {"hidden_act", T::choice, D::none, "gelu", false, 0, 0,
   "gelu|gelu_new|gelu_fast|gelu_pytorch_tanh|quick_gelu|relu|silu|swish|swiglu|geglu", "MLP activation; silu/swish/swiglu/geglu imply a gated MLP"},
  {"gated_mlp", T::boolean, D::none, "", false, 0, 0, "", "three MLP matrices; default implied by hidden_act"},
  {"tie_word_embeddings", T::boolean, D::none, "false", false, 0, 0, "", "LM head shares the embedding matrix"},
  {"learned_position_embeddings", T::boolean, D::none, "false", false, 0, 0, "", "GPT-style absolute positions (else rotary/ALiBi)"},
  {"use_bias", T::boolean, D::none, "false", false, 0, 0, "", "linear layers carry bias vectors"},
  {"norm", T::choice, D::none, "rmsnorm", false, 0, 0, "rmsnorm|layernorm", "normalization"},
  {"num_local_experts", T::integer, D::none, "", false, 1, kInf, "", "MoE experts (Mixtral name)"},
  {"num_experts", T::integer, D::none, "", false, 1, kInf, "", "MoE experts (Qwen-MoE name)"},
  {"n_routed_experts", T::integer, D::none, "", false, 1, kInf, "", "MoE experts (DeepSeek name)"},
  {"num_experts_per_tok", T::integer, D::none, "", false, 1, kInf, "", "MoE top-k"},
  {"moe_intermediate_size", T::integer, D::none, "", false, 1, kInf, "", "per-expert FFN width; default intermediate_size"},
  {"n_shared_experts", T::integer, D::none, "", false, 0, kInf, "", "always-active shared experts (DeepSeek)"},
  {"shared_expert_intermediate_size", T::integer, D::none, "", false, 0, kInf, "", "width of each shared expert (Qwen2-MoE)"},
  {"first_k_dense_replace", T::integer, D::none, "", false, 0, kInf, "", "leading dense layers (DeepSeek)"},
  {"capacity_factor", T::number, D::none, "1.0", false, 0.01, kInf, "", "MoE capacity relative to a balanced share"},
};

const std::vector<KeySpec> kHardwareKeys = {
  {"name", T::string, D::none, "", true, 0, 0, "", "hardware name"},
  {"source", T::string, D::none, "", false, 0, 0, "", "where the numbers come from"},
  {"device.name", T::string, D::none, "", true, 0, 0, "", "accelerator name"},
  {"device.peak_flops_bf16", T::quantity, D::flops_rate, "", true, 1, kInf, "", "dense BF16 tensor FLOP/s"},
  {"device.peak_flops_fp16", T::quantity, D::flops_rate, "", false, 1, kInf, "", "dense FP16 FLOP/s; default = bf16"},
  {"device.peak_flops_fp8", T::quantity, D::flops_rate, "0FLOPS", false, 0, kInf, "", "dense FP8 FLOP/s; 0 = no FP8 units"},
  {"device.peak_flops_fp32", T::quantity, D::flops_rate, "", true, 1, kInf, "", "FP32 (vector) FLOP/s"},
  {"device.hbm_bytes", T::quantity, D::bytes, "", true, 1, kInf, "", "device memory capacity"},
  {"device.hbm_bandwidth", T::quantity, D::bandwidth, "", true, 1, kInf, "", "nominal HBM bandwidth"},
  {"device.memory_bound_efficiency", T::number, D::none, "0.8", false, 0.01, 1, "", "achieved fraction of hbm_bandwidth, elementwise ops"},
  {"device.gemm.large", T::number, D::none, "0.8", false, 0.01, 1, "", "GEMM efficiency for large shapes"},
  {"device.gemm.small", T::number, D::none, "0.3", false, 0.01, 1, "", "GEMM efficiency for tiny shapes"},
  {"device.gemm.half_flops", T::number, D::none, "1e9", false, 1, kInf, "", "GEMM FLOPs at which efficiency is halfway"},
  {"device.gemm.misaligned_factor", T::number, D::none, "1", false, 0.01, 1, "", "efficiency factor when n or k is not a multiple of 64"},
  {"device.gemm.fp8_relative_efficiency", T::number, D::none, "1", false, 0.01, 1, "", "FP8 GEMM efficiency relative to BF16 (MAMF ratio)"},
  {"device.sustained_compute_fraction", T::number, D::none, "1", false, 0.05, 1, "", "share of microbenchmarked GEMM/attention speed sustained in training"},
  {"device.overlap_slowdown", T::number, D::none, "0", false, 0, 1, "", "compute time lost per second of TP/CP/EP collective overlapped with it"},
  {"device.attention_efficiency", T::number, D::none, "0.6", false, 0.01, 1, "", "fused attention, fraction of peak"},
  {"device.eager_attention_memory_efficiency", T::number, D::none, "0", false, 0, 1, "", "achieved fraction of hbm_bandwidth over the s x s score passes of attention without flash kernels; 0 = memory_bound_efficiency"},
  {"device.kernel_launch", T::quantity, D::time, "5us", false, 0, 1, "", "host dispatch time per kernel"},
  {"device.allocator_reserve", T::quantity, D::bytes, "0B", false, 0, kInf, "", "runtime context, workspace, fragmentation"},
  {"device.price_per_hour", T::number, D::none, "0", false, 0, kInf, "", "currency units per device-hour (0: unknown)"},
  {"device.power", T::quantity, D::power, "0W", false, 0, kInf, "", "board power"},
  {"node.devices_per_node", T::integer, D::none, "8", false, 1, 1024, "", "devices in one server"},
  {"node.fabric", T::choice, D::none, "switched", false, 0, 0, "full_mesh|switched", "intra-node fabric"},
  {"node.link_bandwidth", T::quantity, D::bandwidth, "", true, 1, kInf, "", "switched: per device into the switch; full_mesh: per pair link (per direction)"},
  {"node.link_latency", T::quantity, D::time, "", true, 0, 1, "", "intra-node link latency"},
  {"node.achievable_fraction", T::number, D::none, "0.8", false, 0.01, 1, "", "measured busbw / peak inside a node"},
  {"node.in_switch_reduction", T::boolean, D::none, "false", false, 0, 0, "", "NVLink SHARP (NVLS)"},
  {"node.in_switch_reduction_fraction", T::number, D::none, "0.6", false, 0.01, 1, "", "NVLS all-reduce: achieved fraction of link bandwidth"},
  {"node.ll_bandwidth_fraction", T::number, D::none, "1", false, 0.01, 1, "", "NCCL low-latency (LL) protocol: share of achievable link bandwidth (1: one protocol, as before)"},
  {"node.bulk_protocol_latency", T::quantity, D::time, "0us", false, 0, 1, "", "NCCL bulk (Simple) protocol: fixed latency per intra-node collective on top of link_latency steps"},
  {"cluster.nics_per_node", T::integer, D::none, "8", false, 1, 64, "", "NICs per server"},
  {"cluster.nic_bandwidth", T::quantity, D::bandwidth, "", true, 1, kInf, "", "per NIC per direction"},
  {"cluster.hop_latency", T::quantity, D::time, "", true, 0, 1, "", "latency per switch hop"},
  {"cluster.nic_latency", T::quantity, D::time, "0us", false, 0, 1, "", "software + NIC latency per inter-node message, on top of hops"},
  {"cluster.hops", T::integer, D::none, "3", false, 1, 16, "", "switch hops between two servers"},
  {"cluster.topology", T::choice, D::none, "fat_tree", false, 0, 0, "fat_tree|rail_optimized", "inter-node network"},
  {"cluster.oversubscription", T::number, D::none, "1", false, 1, kInf, "", "1 = full bisection"},
  {"cluster.achievable_fraction", T::number, D::none, "0.8", false, 0.01, 1, "", "measured busbw / NIC line rate"},
  {"cluster.host_link_bandwidth", T::quantity, D::bandwidth, "0B/s", false, 0, kInf, "", "device <-> host (PCIe), for offload"},
};

const std::vector<KeySpec> kScenarioKeys = {
  {"name", T::string, D::none, "", false, 0, 0, "", "scenario name (default: file name)"},
  {"description", T::string, D::none, "", false, 0, 0, "", "free text"},
  {"model", T::string, D::none, "", true, 0, 0, "", "model file (models/*.yaml or a HF config.json)"},
  {"hardware", T::string, D::none, "", true, 0, 0, "", "hardware file (hardware/*.yaml)"},
  {"num_devices", T::integer, D::none, "", true, 1, 1e7, "", "devices in the job"},
  {"data.sample_load_time", T::quantity, D::time, "0s", false, 0, 3600, "", "host time to read and prepare one sequence (0: free)"},
  {"data.loader_workers", T::integer, D::none, "2", false, 0, 1024, "", "background data-loader workers per rank (0: load inside the training loop)"},
  {"plan.tensor_model_parallel_size", T::integer, D::none, "1", false, 1, 1024, "", "TP"},
  {"plan.pipeline_model_parallel_size", T::integer, D::none, "1", false, 1, 4096, "", "PP"},
  {"plan.virtual_pipeline_model_parallel_size", T::integer, D::none, "1", false, 1, 1024, "", "model chunks per stage (interleaved)"},
  {"plan.context_parallel_size", T::integer, D::none, "1", false, 1, 1024, "", "CP"},
  {"plan.expert_model_parallel_size", T::integer, D::none, "1", false, 1, 4096, "", "EP"},
  {"plan.sequence_parallel", T::boolean, D::none, "false", false, 0, 0, "", "Megatron sequence parallelism (needs TP > 1)"},
  {"plan.micro_batch_size", T::integer, D::none, "1", false, 1, 1e6, "", "sequences per micro-batch"},
  {"plan.global_batch_size", T::integer, D::none, "", true, 1, 1e9, "", "sequences per step"},
  {"plan.seq_length", T::integer, D::none, "", true, 1, 1e8, "", "tokens per sequence"},
  {"plan.recompute_granularity", T::choice, D::none, "none", false, 0, 0, "none|selective|full", "activation recomputation"},
  {"plan.recompute_method", T::choice, D::none, "uniform", false, 0, 0, "uniform|block", "full recompute: how layers are chosen"},
  {"plan.recompute_num_layers", T::integer, D::none, "0", false, 0, 1e6, "", "full recompute: layers per stage (0: all)"},
  {"plan.use_distributed_optimizer", T::boolean, D::none, "false", false, 0, 0, "", "Megatron: shard optimizer state over DP"},
  {"plan.zero_stage", T::integer, D::none, "0", false, 0, 3, "", "DeepSpeed ZeRO stage"},
  {"plan.offload_optimizer", T::boolean, D::none, "false", false, 0, 0, "", "ZeRO-Offload: optimizer on the host"},
  {"plan.schedule", T::choice, D::none, "1f1b", false, 0, 0, "gpipe|1f1b|interleaved|zb-h1", "pipeline schedule"},
  {"plan.precision", T::choice, D::none, "bf16", false, 0, 0, "bf16|fp16|fp8", "compute precision"},
  {"plan.use_flash_attn", T::boolean, D::none, "true", false, 0, 0, "", "fused attention (no s*s scores kept)"},
  {"plan.overlap_grad_reduce", T::boolean, D::none, "true", false, 0, 0, "", "DP reduction overlaps backward"},
  {"plan.overlap_param_gather", T::boolean, D::none, "true", false, 0, 0, "", "parameter all-gather overlaps forward"},
  {"plan.tp_comm_overlap", T::boolean, D::none, "false", false, 0, 0, "", "TP collectives hidden under GEMMs"},
  {"plan.collective_algorithm", T::choice, D::none, "auto", false, 0, 0, "auto|ring|tree|hierarchical|full_mesh", "force a collective algorithm (auto: by size and group shape)"},
  {"plan.collective_pipeline_tiers", T::boolean, D::none, "false", false, 0, 0, "", "HCCL: pipeline the intra- and inter-server phases"},
  {"plan.collective_split_intra", T::boolean, D::none, "false", false, 0, 0, "", "HCCL: split an intra-server all-reduce between HCCS and RoCE"},
  {"plan.grad_bucket_size", T::quantity, D::bytes, "0B", false, 0, kInf, "", "DP gradient bucket; 0 = Megatron's max(40M, 1M x DP) parameters"},
  {"plan.layers_per_stage", T::int_list, D::none, "", false, 1, 1e6, "", "explicit pipeline split, one entry per stage"},
  {"plan.rank_order", T::string, D::none, "tp-cp-ep-dp-pp", false, 0, 0, "", "rank order, fastest-varying first"},
};
// clang-format on

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string number_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", x);
  return buffer;
}

std::string range_text(const KeySpec& spec) {
  auto fmt = [&](double x) { return spec.type == T::quantity ? format_quantity(x, spec.dim) : number_text(x); };
  const std::string kind = spec.type == T::integer || spec.type == T::int_list ? "integer" : dimension_name(spec.dim);
  if (std::isinf(spec.max)) return kind + " >= " + fmt(spec.min);
  return kind + " in [" + fmt(spec.min) + ", " + fmt(spec.max) + "]";
}

bool parse_integer(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0') return false;
  out = static_cast<double>(v);
  return true;
}

bool parse_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return *end == '\0' && std::isfinite(out);
}

// Parses one scalar `text` for `spec` into `value`; returns the problem or "".
std::string parse_scalar(const KeySpec& spec, const std::string& text, Value& value, std::string& valid) {
  value.text = text;
  switch (spec.type) {
    case T::string:
      return "";
    case T::boolean:
      if (text == "true") {
        value.number = 1;
        return "";
      }
      if (text == "false") {
        value.number = 0;
        return "";
      }
      valid = "true, false";
      return "expected true or false, got '" + text + "'";
    case T::choice: {
      const auto choices = split(spec.choices, '|');
      if (std::find(choices.begin(), choices.end(), text) != choices.end()) return "";
      valid = join(choices, ", ");
      const std::string near = closest_key(text, choices);
      return "'" + text + "' is not a valid value" + (near.empty() ? "" : ", did you mean '" + near + "'?");
    }
    case T::integer:
    case T::int_list:
      if (!parse_integer(text, value.number)) {
        valid = range_text(spec);
        return "expected an integer, got '" + text + "'";
      }
      break;
    case T::number:
      if (!parse_number(text, value.number)) {
        valid = range_text(spec);
        return "expected a number, got '" + text + "'";
      }
      break;
    case T::quantity: {
      std::string error;
      if (!parse_quantity(text, spec.dim, value.number, error)) {
        valid = range_text(spec);
        return error;
      }
      break;
    }
  }
  if (value.number < spec.min || value.number > spec.max) {
    valid = range_text(spec);
    return text + " is out of range";
  }
  return "";
}

struct Walker {
  const std::vector<KeySpec>& schema;
  const ValidateOptions& options;
  std::vector<Diagnostic>& diagnostics;
  Validated out;
  std::set<std::string> section_names;
  std::set<std::string> seen;  // paths written in the file, valid or not

  const KeySpec* find(const std::string& path) const {
    for (const auto& spec : schema)
      if (path == spec.path) return &spec;
    return nullptr;
  }

  SourceLocation where(const YAML::Node& node, const std::string& path) const {
    if (options.overridden.count(path)) return SourceLocation{"--set", 0, 0};
    return location_of(node, options.file);
  }

  // Names directly under `prefix` (keys and sections), for "did you mean".
  std::vector<std::string> children(const std::string& prefix) const {
    std::vector<std::string> names;
    const std::string head = prefix.empty() ? "" : prefix + ".";
    for (const auto& spec : schema) {
      const std::string path = spec.path;
      if (path.compare(0, head.size(), head) != 0) continue;
      const std::string rest = path.substr(head.size());
      const std::string name = rest.substr(0, rest.find('.'));
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
  }

  void problem(SourceLocation where, const std::string& path, std::string what, std::string valid = "") {
    diagnostics.push_back(Diagnostic{std::move(where), path, std::move(what), std::move(valid)});
  }

  void walk(const YAML::Node& map, const std::string& prefix) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      // Copies: yaml-cpp's iterator hands out references to a temporary pair.
      const YAML::Node key_node = it->first;
      const YAML::Node node = it->second;
      const std::string key = key_node.Scalar();
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      if (section_names.count(path)) {
        out.sections[path] = where(key_node, path);
        if (!node.IsMap()) {
          problem(where(node, path), path, "expected a section (a mapping of keys)", join(children(path), ", "));
        } else {
          walk(node, path);
        }
        continue;
      }
      const KeySpec* spec = find(path);
      if (!seen.insert(path).second) {
        problem(where(key_node, path), path, "duplicate key (the first value would be silently replaced)");
        continue;
      }
      if (!spec) {
        if (options.ignore_unknown) continue;
        const auto names = children(prefix);
        const std::string near = closest_key(key, names);
        if (!near.empty()) {
          problem(where(key_node, path), path, "unknown key '" + key + "', did you mean '" + near + "'?");
        } else {
          problem(where(key_node, path), path, "unknown key '" + key + "'", join(names, ", "));
        }
        continue;
      }
      if (node.IsNull()) {
        if (options.ignore_unknown) continue;  // JSON null: the HF config leaves it unset
        problem(where(node, path), path, "has no value", range_or_choices(*spec));
        continue;
      }
      check(*spec, node, path);
    }
  }

  std::string range_or_choices(const KeySpec& spec) const {
    if (spec.type == T::choice) return join(split(spec.choices, '|'), ", ");
    if (spec.type == T::boolean) return "true, false";
    if (spec.type == T::string) return "a string";
    if (spec.type == T::quantity) return std::string("a value with a unit, e.g. ") + dimension_example(spec.dim);
    return range_text(spec);
  }

  void check(const KeySpec& spec, const YAML::Node& node, const std::string& path) {
    Value value;
    value.where = where(node, path);
    std::string valid;
    if (spec.type == T::int_list) {
      if (!node.IsSequence()) {
        problem(value.where, path, "expected a list of integers, e.g. [10, 11, 11]");
        return;
      }
      bool ok = true;
      for (const auto& item : node) {
        Value element;
        if (!item.IsScalar()) {
          problem(where(item, path), path, "expected an integer");
          ok = false;
          continue;
        }
        const std::string why = parse_scalar(spec, item.Scalar(), element, valid);
        if (!why.empty()) {
          problem(where(item, path), path, why, valid);
          ok = false;
          continue;
        }
        value.list.push_back(static_cast<int>(element.number));
      }
      if (ok) out.values[path] = value;
      return;
    }
    if (!node.IsScalar()) {
      problem(value.where, path, std::string("expected a single value, not a ") + (node.IsMap() ? "mapping" : "list"),
              range_or_choices(spec));
      return;
    }
    const std::string why = parse_scalar(spec, node.Scalar(), value, valid);
    if (!why.empty()) {
      problem(value.where, path, why, valid);
      return;
    }
    out.values[path] = value;
  }

  void finish(const YAML::Node& root) {
    for (const auto& spec : schema) {
      if (out.has(spec.path) || seen.count(spec.path)) continue;
      const std::string path = spec.path;
      if (spec.required) {
        const auto dot = path.rfind('.');
        const std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
        SourceLocation at = out.sections.count(parent) ? out.sections[parent] : location_of(root, options.file);
        problem(at, path, "missing required key", range_or_choices(spec));
        continue;
      }
      if (std::string(spec.default_text).empty()) continue;
      Value value;
      std::string valid;
      parse_scalar(spec, spec.default_text, value, valid);  // defaults are checked by a test
      out.values[path] = value;
    }
  }
};

}  // namespace

const std::vector<KeySpec>& key_schema(FileKind kind) {
  switch (kind) {
    case FileKind::model:
      return kModelKeys;
    case FileKind::hardware:
      return kHardwareKeys;
    case FileKind::scenario:
      return kScenarioKeys;
  }
  return kModelKeys;
}

std::string describe_schema(FileKind kind) {
  std::string out;
  for (const auto& spec : key_schema(kind)) {
    std::string type;
    switch (spec.type) {
      case T::integer:
        type = "integer";
        break;
      case T::number:
        type = "number";
        break;
      case T::boolean:
        type = "boolean";
        break;
      case T::string:
        type = "string";
        break;
      case T::choice:
        type = "choice";
        break;
      case T::quantity:
        type = dimension_name(spec.dim);
        break;
      case T::int_list:
        type = "list of integers";
        break;
    }
    std::string valid;
    if (spec.type == T::choice)
      valid = join(split(spec.choices, '|'), ", ");
    else if (spec.type == T::integer || spec.type == T::number || spec.type == T::quantity || spec.type == T::int_list)
      valid = range_text(spec);
    const std::string deflt = spec.required                            ? "(required)"
                              : std::string(spec.default_text).empty() ? "(unset)"
                                                                       : spec.default_text;
    out += std::string(spec.path) + "  " + type + "  " + deflt + (valid.empty() ? "" : "  [" + valid + "]") + "  " +
           spec.doc + "\n";
  }
  return out;
}

int edit_distance(const std::string& a, const std::string& b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string closest_key(const std::string& key, const std::vector<std::string>& candidates) {
  // Close enough: at most a third of the longer name changed (and always 2 edits).
  std::string best;
  int best_distance = 1 << 30;
  for (const auto& c : candidates) {
    const int d = edit_distance(key, c);
    const int limit = std::max(2, static_cast<int>(std::max(key.size(), c.size())) / 3);
    if (d <= limit && d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

SourceLocation location_of(const YAML::Node& node, const std::string& file) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return SourceLocation{file, 0, 0};
  return SourceLocation{file, mark.line + 1, mark.column + 1};  // yaml-cpp marks are 0-based
}

Validated validate_tree(const YAML::Node& root, FileKind kind, const ValidateOptions& options,
                        std::vector<Diagnostic>& diagnostics) {
  Walker walker{key_schema(kind), options, diagnostics, {}, {}, {}};
  for (const auto& spec : walker.schema) {
    std::string path = spec.path;
    for (auto dot = path.rfind('.'); dot != std::string::npos; dot = path.rfind('.')) {
      path = path.substr(0, dot);
      walker.section_names.insert(path);
    }
  }
  if (!root.IsMap()) {
    diagnostics.push_back(
        Diagnostic{location_of(root, options.file), "", "expected a mapping of keys at the top level", ""});
    return {};
  }
  walker.walk(root, "");
  walker.finish(root);
  return walker.out;
}

}  // namespace trainsim
