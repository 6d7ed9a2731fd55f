#pragma once
// Time of one op on one device and of one collective on one group, in seconds.
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

enum class CollectiveAlgorithm { automatic, ring, double_binary_tree, hierarchical, full_mesh_direct };

// Where a group's ranks sit: how many servers it spans, how many of its ranks share
// one server, and how many groups use the same NICs at the same moment.
struct GroupShape {
  int ranks = 1;
  int ranks_per_node = 1;   // ranks of this group inside one server
  int nodes = 1;            // servers the group spans
  int concurrent_groups_per_nic = 1;  // groups crossing one NIC at once
};

// Time of one collective of `bytes` (buffer size as nccl-tests counts it).
double collective_time_s(const HardwareSpec& hardware, CollectiveKind kind, const GroupShape& group,
                         double bytes, CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic);

// nccl-tests bus bandwidth factor: busbw = algbw * factor (2(n-1)/n for all-reduce ...).
double bus_bandwidth_factor(CollectiveKind kind, int ranks);

class CostModel {
 public:
  CostModel(const HardwareSpec& hardware, const ParallelPlan& plan, int num_devices);

  double forward_s(const Op& op) const;
  double backward_s(const Op& op) const;
  double backward_weight_s(const Op& op) const;  // the weight-gradient part of backward_s
  double collective_s(const CommOp& comm) const;
  double collective_s(CollectiveKind kind, CommGroup group, double bytes) const;
  // Pipeline send/recv of `bytes` between neighbouring stages.
  double p2p_s(double bytes) const;
  // Memory-bound time of streaming `bytes` through HBM (optimizer step, ...).
  double memory_bound_s(double bytes) const;
  GroupShape shape_of(CommGroup group) const;

  const HardwareSpec& hardware() const { return hardware_; }

 private:
  HardwareSpec hardware_;
  ParallelPlan plan_;
  int num_devices_;
};

}  // namespace trainsim
