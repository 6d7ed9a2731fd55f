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
#include <iterator>

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

namespace {

// deep_ep/buffer.py's recommended configs by EP size (tokens per channel of the receive queues):
// NVLink receive tokens (dispatch and combine agree), and the RDMA send chunk of each of the two
// configs (RDMA receive is 128 for both, rounded up to a multiple of the send chunk by Config).
// An EP size DeepEP has no config for takes the next listed one (it asserts on an unlisted size).
struct DeepEpConfig {
  int ranks, nvl_recv, rdma_send_dispatch, rdma_send_combine;
};
constexpr DeepEpConfig kDeepEpConfigs[] = {
    {2, 256, 6, 6},    {4, 256, 6, 6},    {8, 256, 6, 6},    {16, 288, 20, 12}, {24, 288, 8, 8},   {32, 288, 8, 8},
    {48, 288, 8, 8},   {64, 288, 8, 8},   {96, 480, 12, 8},  {128, 560, 12, 8}, {144, 720, 12, 8}, {160, 720, 12, 8},
};

double round_up(double value, double multiple) { return std::ceil(value / multiple) * multiple; }

}  // namespace

DeepEpBuffer deepep_buffer_bytes(std::int64_t hidden_size, int ep_size, int num_sms) {
  DeepEpBuffer b;
  if (ep_size <= 1 || hidden_size <= 0) return b;
  const DeepEpConfig* config = &kDeepEpConfigs[std::size(kDeepEpConfigs) - 1];
  for (const DeepEpConfig& c : kDeepEpConfigs) {
    if (c.ranks >= ep_size) {
      config = &c;
      break;
    }
  }
  constexpr int kMaxNvlPeers = 8;     // NUM_MAX_NVL_PEERS
  constexpr double kMaxTopK = 128;    // kNumMaxTopK
  constexpr double kMaxScales = 128;  // kNumMaxScales
  constexpr double kInt = 4, kTopkIdx = 8, kFloat = 4, kSourceMeta = 8, kInt4 = 16;  // topk_idx_t int64
  const double hidden_bytes = 2.0 * static_cast<double>(hidden_size);
  const double channels = num_sms / 2;
  const double rdma_ranks = std::max(ep_size / kMaxNvlPeers, 1);
  const double nvl_ranks = std::min(ep_size, kMaxNvlPeers);
  const double per_token = hidden_bytes + kSourceMeta + kMaxTopK * (kTopkIdx + kFloat) + kMaxScales * kFloat;
  b.nvl_bytes = round_up(channels * nvl_ranks * ((2 * rdma_ranks + 3) * kInt + config->nvl_recv * per_token), 128);
  if (ep_size > kMaxNvlPeers) {
    // The larger of the two configs' receive queues (128 rounded up to each one's send chunk).
    const double recv = std::max(round_up(128, config->rdma_send_dispatch), round_up(128, config->rdma_send_combine));
    b.rdma_bytes = round_up(channels * rdma_ranks * (kMaxNvlPeers * 2 + 2) * 2 * kInt +
                                channels * rdma_ranks * recv * 2 * (per_token + kInt4),
                            128);
  }
  return b;
}

}  // namespace trainsim
