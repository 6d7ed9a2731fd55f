#include "trainsim/cost/placement.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "trainsim/common/error.hpp"

namespace trainsim {

const char* comm_group_name(CommGroup group) {
  switch (group) {
    case CommGroup::tp:
      return "tp";
    case CommGroup::cp:
      return "cp";
    case CommGroup::ep:
      return "ep";
    case CommGroup::dp:
      return "dp";
    case CommGroup::pp:
      return "pp";
    case CommGroup::expert_dp:
      return "expert_dp";
    case CommGroup::cp_inner:
      return "cp_inner";
    case CommGroup::cp_outer:
      return "cp_outer";
  }
  return "?";
}

namespace {

std::vector<std::string> split_order(const std::string& order) {
  // By hand, not through a stringstream: this runs for every group of every plan a search
  // estimates.
  std::vector<std::string> names;
  std::size_t from = 0;
  while (from <= order.size()) {
    const std::size_t dash = order.find('-', from);
    const std::size_t to = dash == std::string::npos ? order.size() : dash;
    if (to > from || dash != std::string::npos) names.push_back(order.substr(from, to - from));
    if (dash == std::string::npos) break;
    from = dash + 1;
  }
  return names;
}

ConfigError plan_error(const std::string& key, const std::string& problem, const std::string& valid) {
  Diagnostic diagnostic;
  diagnostic.key_path = key;
  diagnostic.problem = problem;
  diagnostic.valid = valid;
  return ConfigError(diagnostic);
}

}  // namespace

std::vector<RankDimension> rank_dimensions(const ParallelPlan& plan, int num_devices, bool expert_groups) {
  const std::vector<std::string> names = split_order(plan.rank_order);
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != std::vector<std::string>{"cp", "dp", "ep", "pp", "tp"}) {
    throw plan_error("plan.rank_order", "'" + plan.rank_order + "' is not an order of tp, cp, ep, dp, pp",
                     "a permutation such as tp-cp-ep-dp-pp");
  }
  const int tp = plan.tensor_model_parallel_size;
  const int cp = plan.context_parallel_size;
  const int pp = plan.pipeline_model_parallel_size;
  const int ep = plan.expert_model_parallel_size;
  const int model_parallel = tp * cp * pp;
  if (tp < 1 || cp < 1 || pp < 1 || ep < 1 || num_devices < 1 || num_devices % model_parallel != 0) {
    throw plan_error("plan",
                     "tp x cp x pp = " + std::to_string(model_parallel) + " does not divide " +
                         std::to_string(num_devices) + " devices",
                     "");
  }
  const int dp = num_devices / model_parallel;
  if (expert_groups && (cp * dp) % ep != 0) {
    throw plan_error("plan.expert_model_parallel_size",
                     std::to_string(ep) + " does not divide cp x dp = " + std::to_string(cp * dp), "");
  }
  std::vector<RankDimension> dims;
  int stride = 1;
  for (const std::string& name : names) {
    int size = 1;
    std::string label = name;
    if (name == "tp") size = tp;
    if (name == "pp") size = pp;
    if (expert_groups) {
      if (name == "cp") continue;
      if (name == "ep") size = ep;
      if (name == "dp") size = cp * dp / ep, label = "expert_dp";
    } else {
      if (name == "ep") continue;
      if (name == "cp") size = cp;
      if (name == "dp") size = dp;
    }
    dims.push_back({label, size, stride});
    stride *= size;
  }
  return dims;
}

std::vector<int> group_ranks(const ParallelPlan& plan, int num_devices, CommGroup group, int member) {
  const bool expert = group == CommGroup::ep || group == CommGroup::expert_dp;
  const bool cp_level = group == CommGroup::cp_inner || group == CommGroup::cp_outer;
  const std::vector<RankDimension> dims = rank_dimensions(plan, num_devices, expert);
  const std::string name = cp_level ? "cp" : comm_group_name(group);
  const auto dim = std::find_if(dims.begin(), dims.end(), [&](const RankDimension& d) { return d.name == name; });
  if (dim == dims.end()) throw SimError("group_ranks: no dimension " + name);
  // Hierarchical CP (a2a+p2p): the inner group is `inner` consecutive CP ranks, the outer one
  // the CP ranks with the same position in their inner group (TE's ring: cp_global_ranks[(rank
  // + 1) % p2p_size * a2a_size + rank_a2a]). Without sizes the inner group is the whole of CP.
  const std::vector<int>& sizes = plan.hierarchical_context_parallel_sizes;
  const int inner = sizes.size() == 2 && sizes[0] * sizes[1] == dim->size ? sizes[0] : dim->size;
  int size = dim->size;
  int stride = dim->stride;
  if (group == CommGroup::cp_inner) size = inner;
  if (group == CommGroup::cp_outer) size = dim->size / inner, stride = dim->stride * inner;
  const int coordinate = (member / stride) % size;
  const int base = member - coordinate * stride;
  std::vector<int> ranks;
  for (int j = 0; j < size; ++j) ranks.push_back(base + j * stride);
  return ranks;
}

GroupShape group_shape(const ParallelPlan& plan, int num_devices, int devices_per_node, int nics_per_node,
                       CommGroup group) {
  if (devices_per_node < 1) throw SimError("group_shape: devices_per_node < 1");
  const std::vector<int> ranks = group_ranks(plan, num_devices, group, 0);
  std::map<int, int> per_node;
  for (int rank : ranks) ++per_node[rank / devices_per_node];
  GroupShape shape;
  shape.ranks = static_cast<int>(ranks.size());
  shape.nodes = static_cast<int>(per_node.size());
  shape.ranks_per_node = 0;
  for (const auto& [node, count] : per_node) shape.ranks_per_node = std::max(shape.ranks_per_node, count);
  // Every device belongs to exactly one group of each kind, so a server holds
  // (devices in it) / ranks_per_node of them, all communicating at once.
  shape.groups_per_node = std::max(1, std::min(devices_per_node, num_devices) / shape.ranks_per_node);
  const int nics = std::max(1, nics_per_node);
  shape.concurrent_groups_per_nic = shape.nodes > 1 ? (shape.groups_per_node + nics - 1) / nics : 0;
  return shape;
}

GroupShape contiguous_group_shape(int devices, int devices_per_node) {
  if (devices < 1 || devices_per_node < 1) throw SimError("contiguous_group_shape: devices < 1");
  GroupShape shape;
  shape.ranks = devices;
  shape.ranks_per_node = std::min(devices, devices_per_node);
  shape.nodes = (devices + devices_per_node - 1) / devices_per_node;
  shape.groups_per_node = 1;
  shape.concurrent_groups_per_nic = shape.nodes > 1 ? 1 : 0;
  return shape;
}

}  // namespace trainsim
