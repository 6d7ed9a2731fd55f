// Issue 18: MLA at its exact dimensions against DeepSeek's published FLOPs and parameters; MoE
// token dispatch bytes per dispatcher against their formulas (and the distinct-destination count
// against a Monte Carlo of node-limited routing); multi-token prediction; the model keys.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "reference_models.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/model/moe_dispatch.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }
const std::string root = TRAINSIM_SOURCE_DIR;

ParallelPlan one_sequence(int seq) {
  ParallelPlan p = plan(1, 1, 1, 1, 1, seq);
  return p;
}

// Per-token training FLOPs with the causal half of the attention core left out (DeepSeek's
// "causal" count): the model count less half of 3 x the core's forward FLOPs per layer.
double causal_flops_per_token(const ModelSpec& m, int seq) {
  const double full = model_flops_per_step(m, one_sequence(seq)) / seq;
  return full - 1.5 * attention_core_forward_flops_per_token(m, seq) * m.num_layers;
}

const CommOp* find_comm(const LayerWorkload& layer, const std::string& name) {
  for (const auto& c : layer.comms)
    if (c.name == name) return &c;
  return nullptr;
}

const LayerWorkload& moe_layer(const Workload& w) {
  for (const auto& layer : w.layer_types)
    if (layer.kind == "moe") return layer;
  FAIL("no MoE layer");
  return w.layer_types.front();
}

}  // namespace

TEST_CASE("MLA FLOPs per token match DeepSeek's published counts", "[model][mla][flops]") {
  // Zhao et al., "Insights into DeepSeek-V3" (ISCA'25), Table 4: 2048 H800, 19.926 s a step of
  // 15360 x 4096 tokens at 432 TFLOPS (non-causal) / 385 TFLOPS (causal) per GPU:
  // 432e12 x 2048 x 19.926 / 62914560 = 280.21 GFLOP a token, 385e12 ... = 249.72.
  const ModelSpec v3 = deepseek_v3();
  const double non_causal = model_flops_per_step(v3, one_sequence(4096)) / 4096;
  CHECK(rel(non_causal, 280.21e9) < 0.005);  // 281.15e9
  CHECK(rel(causal_flops_per_token(v3, 4096), 249.72e9) < 0.005);
  // The same paper's Table 2 ("training costs", GFLOPS a token at 4K): V3 250, V2 155.
  CHECK(rel(causal_flops_per_token(v3, 4096), 250e9) < 0.005);
  CHECK(rel(causal_flops_per_token(deepseek_v2(60), 4096), 155e9) < 0.005);
  // The attention core runs at the MLA head dims: QK at 128 + 64, PV at 128 (not 2 x 192).
  CHECK(attention_core_forward_flops_per_token(v3, 4096) == 2.0 * 4096 * 128 * (192 + 128));
}

TEST_CASE("DeepSeek-V3 parameters: 671B total, 37B activated (report section 1)", "[model][mla][parameters]") {
  const ParameterCount c = count_parameters(deepseek_v3());
  CHECK(rel(c.total, 671e9) < 0.01);
  CHECK(rel(c.active, 37e9) < 0.02);
}

TEST_CASE("MLA projections: shapes from the ranks and head dims, down projections replicated over TP",
          "[model][mla]") {
  ModelSpec m = deepseek_v3();
  m.mtp_layers = 0;
  ParallelPlan p = plan(2, 1, 1, 1, 1, 4096);
  const Workload w = build_workload(m, p);
  const LayerWorkload& layer = w.layer_types.front();
  auto op = [&](const std::string& name) -> const Op& {
    for (const auto& o : layer.ops)
      if (o.name == name) return o;
    FAIL("no op " << name);
    return layer.ops.front();
  };
  CHECK(op("q_down_proj").gemm_n == 1536);
  CHECK(op("q_up_proj").gemm_n == 128 * 192 / 2);
  CHECK(op("kv_down_proj").gemm_n == 512 + 64);
  CHECK(op("kv_up_proj").gemm_n == 128 * (128 + 128) / 2);
  CHECK(op("out_proj").gemm_k == 128 * 128 / 2);
  // Rope and assembly of Q, K, V (fused MLA rope): per token, Q's rope part in place (2 x 64 x 64
  // heads), kv_up's output (64 x 256) and the shared rope key (64) read, K (64 x 192) and V (64 x 128) written.
  const Op& rope = op("mla_rope_qkv");
  CHECK(rope.forward_bytes == 2.0 * 4096 * (64 * 64 + 64 * 256 + 64 + 64 * 64 + 64 * (192 + 128)));
  CHECK(rope.backward_bytes == rope.forward_bytes);
  // Flash attention keeps Q, K (192 per head) and V (128 per head) of the local heads.
  const Op& core = op("attention_core");
  CHECK(core.forward_flops == 2.0 * 4096 * 4096 * 64 * (192 + 128));
  CHECK(core.activation_bytes == 2.0 * 4096 * 64 * (192 + 192 + 128) + 4.0 * 64 * 4096);
}

TEST_CASE("expected distinct GPUs and nodes a token reaches: closed form against a Monte Carlo",
          "[model][moe][dispatch]") {
  // Closed forms: no limit, E = 8 experts on 8 bins, k = 2: 8 (1 - 7/8 x 6/7) = 2.
  CHECK(expected_distinct_bins(8, 2, 8, 0, 0) == Approx(2.0));
  CHECK(expected_distinct_bins(160, 6, 1, 0, 0) == Approx(1.0));
  // DeepSeek-V3 on EP64 over 8 nodes: node-limited to 4 of 8 groups (a group = a node).
  struct Case {
    int experts, k, bins, groups, per_token;
  };
  for (const Case c : {Case{256, 8, 8, 8, 4}, Case{256, 8, 64, 8, 4}, Case{256, 8, 8, 0, 0}, Case{160, 6, 8, 8, 3},
                       Case{64, 6, 16, 0, 0}}) {
    std::mt19937_64 rng(18);
    const int draws = 40000;
    const int per_group = c.groups > 0 ? c.experts / c.groups : c.experts;
    double sum = 0;
    for (int i = 0; i < draws; ++i) {
      std::vector<int> candidates;
      if (c.groups > 0) {
        std::vector<int> groups(c.groups);
        for (int g = 0; g < c.groups; ++g) groups[g] = g;
        std::shuffle(groups.begin(), groups.end(), rng);
        for (int g = 0; g < c.per_token; ++g)
          for (int e = 0; e < per_group; ++e) candidates.push_back(groups[g] * per_group + e);
      } else {
        for (int e = 0; e < c.experts; ++e) candidates.push_back(e);
      }
      std::shuffle(candidates.begin(), candidates.end(), rng);
      std::set<int> bins;
      for (int j = 0; j < c.k; ++j) bins.insert(candidates[j] / (c.experts / c.bins));
      sum += bins.size();
    }
    INFO(c.experts << " experts, k " << c.k << ", " << c.bins << " bins, " << c.per_token << " of " << c.groups);
    CHECK(rel(expected_distinct_bins(c.experts, c.k, c.bins, c.groups, c.per_token), sum / draws) < 0.01);
  }
}

TEST_CASE("dispatch bytes per dispatcher equal their formulas", "[model][moe][dispatch]") {
  ModelSpec m = deepseek_v3();
  m.mtp_layers = 0;
  ParallelPlan p = plan(1, 16, 128, 1, 15360, 4096);
  p.expert_model_parallel_size = 64;
  const double h = 7168, tokens = 4096;
  // alltoall: every token copy, 2 x b s k h.
  MoeDispatchTraffic t = moe_dispatch_traffic(m, p);
  CHECK(t.ep_nodes == 8);
  CHECK(t.dispatch_bytes == 2.0 * tokens * 8 * h);
  // allgather: the EP group's hidden states, and their routing map + fp32 probabilities.
  m.moe->token_dispatcher = TokenDispatcher::allgather;
  t = moe_dispatch_traffic(m, p);
  CHECK(t.dispatch_bytes == 64 * 2.0 * tokens * h);
  CHECK(t.routing_bytes == 64 * 5.0 * tokens * 256);
  // flex across nodes: once per distinct remote node over RDMA; node-limited to 4 of 8 nodes:
  // 4 (1 - C(96, 8) / C(128, 8)) distinct nodes, 7 of 8 of them remote.
  m.moe->token_dispatcher = TokenDispatcher::flex;
  t = moe_dispatch_traffic(m, p);
  double none = 1;
  for (int i = 0; i < 8; ++i) none *= (96.0 - i) / (128.0 - i);
  const double nodes = 4 * (1 - none);
  CHECK(nodes == Approx(3.6290).epsilon(1e-4));
  CHECK(t.rdma_bytes == Approx(2.0 * tokens * h * nodes * 7 / 8));
  CHECK(t.dispatch_bytes == t.rdma_bytes);
  CHECK(t.rdma_bytes < 0.4 * 2.0 * tokens * 8 * h);  // 3.16 node copies a token, not 8 expert copies
  // flex inside one node (EP8): once per distinct other GPU over NVLink.
  p.expert_model_parallel_size = 8;
  t = moe_dispatch_traffic(m, p);
  CHECK(t.ep_nodes == 1);
  CHECK(t.rdma_bytes == 0);
  CHECK(t.dispatch_bytes == Approx(2.0 * tokens * h * expected_distinct_bins(256, 8, 8, 8, 4) * 7 / 8));
}

TEST_CASE("the MoE layer's EP collectives follow the dispatcher", "[model][moe][dispatch]") {
  ModelSpec m = deepseek_v2(4);
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.expert_model_parallel_size = 8;
  const double h = 5120, tokens = 4096;
  const LayerWorkload a2a = moe_layer(build_workload(m, p));
  REQUIRE(find_comm(a2a, "ep_all_to_all_dispatch"));
  CHECK(find_comm(a2a, "ep_all_to_all_dispatch")->bytes == 2.0 * tokens * 6 * h);
  m.moe->token_dispatcher = TokenDispatcher::allgather;
  const LayerWorkload ag = moe_layer(build_workload(m, p));
  REQUIRE(find_comm(ag, "ep_all_gather_dispatch"));
  CHECK(find_comm(ag, "ep_all_gather_dispatch")->kind == CollectiveKind::all_gather);
  CHECK(find_comm(ag, "ep_all_gather_dispatch")->bytes == 8 * 2.0 * tokens * h);
  CHECK(find_comm(ag, "ep_reduce_scatter_combine")->kind == CollectiveKind::reduce_scatter);
  CHECK(find_comm(ag, "ep_all_gather_routing")->bytes == 8 * 5.0 * tokens * 160);
  CHECK(find_comm(ag, "ep_all_gather_combine_backward")->phase == Phase::backward);
  m.moe->token_dispatcher = TokenDispatcher::flex;
  const LayerWorkload flex = moe_layer(build_workload(m, p));
  REQUIRE(find_comm(flex, "ep_deepep_dispatch"));
  CHECK(find_comm(flex, "ep_deepep_dispatch")->kind == CollectiveKind::send_recv);
  CHECK(find_comm(flex, "ep_deepep_dispatch")->bytes == Approx(moe_dispatch_traffic(m, p).nvlink_bytes));
  // Expert work does not depend on the dispatcher.
  CHECK(flex.forward_flops() == a2a.forward_flops());
}

TEST_CASE("multi-token prediction: one more layer, projection and LM head on the head's stage, out of MFU",
          "[model][mtp]") {
  ModelSpec m = deepseek_v3();
  ParallelPlan p = plan(1, 16, 1, 1, 16, 4096);
  const Workload with = build_workload(m, p);
  m.mtp_layers = 0;
  const Workload without = build_workload(m, p);
  CHECK(with.model_flops_per_step == without.model_flops_per_step);
  const double h = 7168, V = 129280;
  m.mtp_layers = 1;
  const double mtp = mtp_forward_flops_per_token(m, 4096);
  CHECK(mtp == 4.0 * h * h + layer_forward_flops_per_token(m, 60, 4096) + 2.0 * h * V);
  CHECK(with.hardware_flops_per_step - without.hardware_flops_per_step == Approx(3.0 * 16 * 4096 * mtp));
  CHECK(with.head.forward_flops() - without.head.forward_flops() ==
        Approx(moe_layer(with).forward_flops() + 2.0 * 4096 * (h * 2 * h + h * 129280)).epsilon(1e-3));
  // Its own layer, projection and norms, and a copy of the embedding on the last stage (PP > 1).
  CHECK(with.head.parameters - without.head.parameters ==
        Approx(moe_layer(with).parameters + 2 * h * h + 3 * h + with.padded_vocab_size * h));
}

TEST_CASE("MLA, routing-group and MTP keys load from the model file, MLA without its dims is refused",
          "[config][mla]") {
  const ModelSpec v3 = load_model(root + "/models/deepseek-v3.yaml");
  CHECK(v3.kv_lora_rank == 512);
  CHECK(v3.q_lora_rank == 1536);
  CHECK(v3.head_dim == 192);
  CHECK(v3.mtp_layers == 1);
  REQUIRE(v3.moe);
  CHECK(v3.moe->num_groups == 8);
  CHECK(v3.moe->groups_per_token == 4);
  CHECK(rel(count_parameters(v3).total, count_parameters(deepseek_v3()).total) < 1e-12);
  const std::string model = (std::filesystem::temp_directory_path() / "trainsim_mla_missing.yaml").string();
  {
    std::ofstream out(model);
    out << "hidden_size: 1024\nnum_hidden_layers: 2\nnum_attention_heads: 8\nintermediate_size: 4096\n"
           "vocab_size: 1000\nmax_position_embeddings: 4096\nkv_lora_rank: 256\nqk_rope_head_dim: 64\n";
  }
  try {
    load_model(model);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("qk_nope_head_dim: multi-head latent attention") &&
                                          Catch::Contains("v_head_dim: multi-head latent attention"));
  }
  std::filesystem::remove(model);
  const Scenario s = load_scenario(root + "/scenarios/deepseek-v3-h800-2048.yaml");
  CHECK(s.model.moe->token_dispatcher == TokenDispatcher::flex);
  CHECK(s.model.moe->devices_per_node == 8);
}
