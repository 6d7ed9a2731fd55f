// MoE token dispatch: bytes per dispatcher and the distinct-destination counts behind them.
//
// Sources:
//  - Megatron-Core core/transformer/moe/token_dispatcher.py: MoEAlltoAllTokenDispatcher
//    (permute k copies per token, all-to-all over EP, sort by local expert), MoEAllGatherTokenDispatcher
//    (gather_from_sequence_parallel_region of hidden states, routing map and probs over the
//    TP x EP group, local gather; combine by reduce-scatter), MoEFlexTokenDispatcher (DeepEP).
//  - deepseek-ai/DeepEP README (docs/legacy.md @ 0297fc80): normal kernels send a token to
//    each destination node once over RDMA (to the GPU of the same local index) and forward it
//    over NVLink to the GPUs of that node holding its experts; combine reduces in the node
//    first. Measured: intranode EP8 153 GB/s NVLink, internode EP16-64 43-58 GB/s RDMA.
//  - DeepSeek-V3 technical report (arXiv 2412.19437) 2.1.2 (node-limited routing, M = 4 nodes)
//    and 3.2.2 (IB and NVLink stages fully overlapped; 3.2 experts a node at no NVLink cost).
#include "trainsim/model/moe_dispatch.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim {

namespace {

// C(a - u, k) / C(a, k): the chance that none of k distinct draws from a items hits u given ones.
double none_hit(double a, double u, int k) {
  double p = 1.0;
  for (int i = 0; i < k; ++i) {
    const double num = a - u - i;
    if (num <= 0) return 0.0;
    p *= num / (a - i);
  }
  return p;
}

}  // namespace

double expected_distinct_bins(int experts, int k, int bins, int groups, int groups_per_token) {
  if (experts <= 0 || k <= 0 || bins <= 0) return 0.0;
  const double u = static_cast<double>(experts) / bins;  // experts per bin
  double candidates = experts;
  if (groups > 0 && groups_per_token > 0 && groups_per_token < groups) {
    const double q = static_cast<double>(experts) / groups;  // experts per group
    // A group holding whole bins: the token's candidates are groups_per_token groups.
    if (std::fmod(q, u) == 0.0) candidates = groups_per_token * q;
  }
  candidates = std::max(candidates, static_cast<double>(k));
  return candidates / u * (1.0 - none_hit(candidates, u, k));
}

MoeDispatchTraffic moe_dispatch_traffic(const ModelSpec& m, const ParallelPlan& p) {
  MoeDispatchTraffic t;
  if (!m.moe) return t;
  const MoeSpec& e = *m.moe;
  const double h = static_cast<double>(m.hidden_size);
  const int ep = std::max(1, p.expert_model_parallel_size);
  const int tp = std::max(1, p.tensor_model_parallel_size);
  const int cp = std::max(1, p.context_parallel_size);
  const double tsp = (p.sequence_parallel && tp > 1) ? tp : 1.0;
  const double tokens = static_cast<double>(p.micro_batch_size) * p.seq_length / cp / tsp;  // Tn
  const double cf = e.capacity_factor > 0 ? e.capacity_factor : 1.0;
  const double k = e.experts_per_token;
  // Megatron's order tp-cp-ep-...: an EP group's consecutive members are tp x cp ranks apart.
  const int per_node = std::max(1, std::min(ep, std::max(1, e.devices_per_node / (tp * cp))));
  t.ep_nodes = (ep + per_node - 1) / per_node;
  constexpr double kHalf = 2.0;
  switch (e.token_dispatcher) {
    case TokenDispatcher::alltoall:
      t.dispatch_bytes = kHalf * tokens * k * cf * h;
      t.working_bytes = t.dispatch_bytes;
      break;
    case TokenDispatcher::allgather:
      t.dispatch_bytes = ep * kHalf * tokens * h;
      t.routing_bytes = ep * (4.0 + 1.0) * tokens * e.num_experts;
      t.working_bytes = t.dispatch_bytes + t.routing_bytes;
      break;
    case TokenDispatcher::flex: {
      // Distinct GPUs and nodes a token reaches; the token's own GPU and node cost no link.
      const double gpus = expected_distinct_bins(e.num_experts, e.experts_per_token, ep, e.num_groups,
                                                 e.groups_per_token);
      t.nvlink_bytes = kHalf * tokens * h * gpus * (per_node - 1.0) / per_node;
      if (t.ep_nodes > 1) {
        const double nodes = expected_distinct_bins(e.num_experts, e.experts_per_token, t.ep_nodes, e.num_groups,
                                                    e.groups_per_token);
        t.rdma_bytes = kHalf * tokens * h * nodes * (t.ep_nodes - 1.0) / t.ep_nodes;
      }
      // Inside a node the NVLink stage is the transfer; across nodes the RDMA stage bounds it.
      t.dispatch_bytes = t.ep_nodes > 1 ? t.rdma_bytes : t.nvlink_bytes;
      t.working_bytes = kHalf * tokens * k * cf * h;  // received tokens copied out of DeepEP's buffer
      break;
    }
  }
  if (ep <= 1) t.dispatch_bytes = t.routing_bytes = t.nvlink_bytes = t.rdma_bytes = 0;
  return t;
}

}  // namespace trainsim
