#pragma once
// Where one layer's time goes: every op of every distinct layer kind (and the embedding and
// the head) with its FLOPs, HBM bytes, forward and backward time on one device for one
// micro-batch, the achieved rate and what bounds it (compute, memory or kernel launch), the
// host's time issuing its kernels beside it, then the layer's collectives. The prices are the
// ones the replay uses (CostModel, and pipeline_costs' host time).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"

namespace trainsim {

inline constexpr int kOpTableSchemaVersion = 1;

struct OpRow {
  std::string name;
  std::string op_class;  // "gemm", "attention", "memory_bound"
  std::string shape;     // "m x n x k" for GEMMs ("/ g" for g grouped experts), else ""
  double forward_flops = 0;
  double backward_flops = 0;
  double forward_bytes = 0;
  OpTiming forward;
  OpTiming backward;
  // Host time issuing the op's kernels (eager dispatch and launch; 0 under graph capture,
  // whose one launch per pass is the layer's).
  double host_forward_s = 0, host_backward_s = 0;
};

struct CommRow {
  std::string name;
  std::string kind;   // collective_kind_name
  std::string group;  // comm_group_name
  std::string phase;  // "forward" or "backward"
  double bytes = 0;
  double time_s = 0;
};

struct LayerTable {
  std::string kind;  // "dense", "moe", "embedding", "head"
  int count = 0;     // layers of this kind in the model (embedding and head: 1)
  std::vector<OpRow> ops;
  std::vector<CommRow> comms;
  // The layer's host time per pass: its ops' eager host time, or one graph launch per pass
  // when the framework replays captured graphs (graph_captured).
  double host_forward_s = 0, host_backward_s = 0;
  bool graph_captured = false;
  double forward_s() const;
  double backward_s() const;
  double comm_s() const;
};

struct OpTable {
  std::string plan;    // the plan in one line
  std::string device;  // hardware device name
  std::vector<LayerTable> layers;  // distinct layer kinds in model order, then embedding, head
};

// Throws ConfigError when the scenario's plan is invalid (as build_workload does).
OpTable build_op_table(const Scenario& scenario);

std::string format_op_table(const OpTable& table);
// One line per op and per collective: layer,count,item,name,class_or_kind,shape_or_group,
// phase,forward_flops,forward_bytes,forward_s,backward_s,bound,forward_tflops,host_forward_s,
// host_backward_s.
std::string op_table_csv(const OpTable& table);
nlohmann::json op_table_json(const OpTable& table);

}  // namespace trainsim
