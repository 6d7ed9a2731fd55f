#pragma once
// What an MoE layer's token dispatcher moves and holds, per rank and micro-batch (issue 18).
// Formulas and sources at the definitions (sim/model/moe_dispatch.cpp).
#include "trainsim/model/model_spec.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

// Expected number of distinct bins a token's k experts fall in, the E experts split into
// `bins` equal bins (GPUs or nodes), when the token may use only `groups_per_token` of
// `groups` equal expert groups (group-limited routing; 0: no limit) and picks its k experts
// uniformly among the allowed ones. Closed form: with a candidates and u experts per bin,
// (a / u) x (1 - C(a - u, k) / C(a, k)). Exact for uniform routing when a group holds whole
// bins (DeepSeek-V3: a group is a node) or there is no limit; when bins hold several groups
// the limit is ignored (the unlimited count, an upper bound).
double expected_distinct_bins(int experts, int k, int bins, int groups, int groups_per_token);

// Bytes one EP rank moves for one MoE layer and micro-batch, one direction (the combine moves
// the same back; backward mirrors both), as the collective's nccl-tests buffer size:
//   alltoall:  all-to-all of every token copy: 2 b s k cf h / tsp bytes (Megatron sends a
//              token once per chosen expert, local ones included).
//   allgather: all-gather of the EP group's hidden states, EP x 2 Tn h, plus their routing map
//              and probabilities (bool + fp32 per expert: EP x 5 Tn E).
//   flex:      DeepEP. EP inside one node: each token once per distinct other GPU (NVLink);
//              across nodes: once per distinct remote node over RDMA (the NIC-bound stage; the
//              NVLink forwarding runs pipelined beside it, DeepSeek-V3 report 3.2.2).
// `load` is moe_max_load_factor (the busiest rank's share); bytes here are the balanced share.
struct MoeDispatchTraffic {
  double dispatch_bytes = 0;  // the main collective (all-to-all, all-gather output, or point-to-point)
  double routing_bytes = 0;   // allgather: the routing map and probabilities all-gathered beside it
  double nvlink_bytes = 0;    // flex: bytes a rank forwards over NVLink
  double rdma_bytes = 0;      // flex: bytes a rank sends over RDMA (0 inside one node)
  int ep_nodes = 1;           // servers the EP group spans
  // Buffers alive beside the activations while the dispatcher runs (memory): alltoall and flex
  // the permuted send buffer (2 Tn k cf h); allgather the gathered hidden states and routing.
  double working_bytes = 0;
};
MoeDispatchTraffic moe_dispatch_traffic(const ModelSpec& model, const ParallelPlan& plan);

// DeepEP's communication buffer as Megatron's flex dispatcher sizes it (core/transformer/moe/
// fused_a2a.py get_buffer: the larger of the dispatch and combine configs' size hints for the EP
// group, hidden bytes 2h for 16-bit tokens, DeepEP's num_sms 20 = moe_deepep_num_sms): the NVLink
// buffer (cudaMalloc'd and IPC-shared) and, when the group spans servers, the RDMA buffer
// (NVSHMEM's symmetric heap). Both are allocated outside PyTorch's caching allocator, once per
// process. Formulas from deepseek-ai/DeepEP csrc/config.hpp Config::get_nvl_buffer_size_hint /
// get_rdma_buffer_size_hint, configs from deep_ep/buffer.py get_dispatch_config /
// get_combine_config (@ 79bbb54, the release Megatron's flex dispatcher was written against).
struct DeepEpBuffer {
  double nvl_bytes = 0;
  double rdma_bytes = 0;
  double total() const { return nvl_bytes + rdma_bytes; }
};
DeepEpBuffer deepep_buffer_bytes(std::int64_t hidden_size, int ep_size, int num_sms = 20);

}  // namespace trainsim
