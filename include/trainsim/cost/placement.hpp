#pragma once
// Where each parallel group's ranks sit on the servers, from the plan's rank order.
//
// Ranks are numbered with the first dimension of the rank order varying fastest (Megatron's
// default "tp-cp-ep-dp-pp"). As in Megatron-Core, the dense groups (tp, cp, dp, pp) use the order
// without "ep", and the expert groups (ep, expert_dp) use it without "cp", where
// expert_dp = cp * dp / ep. Consecutive ranks fill a server (devices_per_node) before the next.
#include <string>
#include <vector>

#include "trainsim/cost/cost_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

const char* comm_group_name(CommGroup group);  // "tp", "cp", ...

// One dimension of the rank grid: its name, size and stride (distance in rank between
// neighbours along it).
struct RankDimension {
  std::string name;  // "tp", "cp", "ep", "dp", "pp", "expert_dp"
  int size = 1;
  int stride = 1;
};

// The dimensions a group of `group` kind lives in, fastest first. Throws ConfigError when the
// rank order is not a permutation of tp, cp, ep, dp, pp or the sizes do not divide.
std::vector<RankDimension> rank_dimensions(const ParallelPlan& plan, int num_devices, bool expert_groups);

// Global ranks of the group of kind `group` that contains rank `member`.
std::vector<int> group_ranks(const ParallelPlan& plan, int num_devices, CommGroup group, int member = 0);

// Shape of the group of kind `group` that contains rank 0 (all are alike on a uniform cluster):
// ranks, ranks per server, servers, groups per server and groups per NIC.
GroupShape group_shape(const ParallelPlan& plan, int num_devices, int devices_per_node, int nics_per_node,
                       CommGroup group);

// Shape of one lone group of `devices` consecutive ranks (the collective table's case).
GroupShape contiguous_group_shape(int devices, int devices_per_node);

}  // namespace trainsim
