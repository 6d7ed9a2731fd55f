#include <catch2/catch.hpp>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/explain.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {
Scenario load(const std::string& name, std::vector<Override> overrides = {}) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name, overrides);
}
const Counterfactual& find(const Explanation& e, const std::string& prefix) {
  for (const auto& c : e.counterfactuals) {
    if (c.what.rfind(prefix, 0) == 0) return c;
  }
  FAIL("no counterfactual " << prefix);
  throw;
}
}  // namespace

TEST_CASE("explain: faster hardware never slows the step, and shares of the step add up to at most 1", "[explore]") {
  const auto e = explain(load("llama2-70b-910b3-1024.yaml"));
  double total = 0;
  for (const auto& share : e.shares) total += share.second;
  CHECK(total <= 1.0 + 1e-9);
  CHECK(total > 0.9);
  for (const auto& c : e.counterfactuals) {
    INFO(c.what);
    // A plan lever is not faster hardware: a larger micro-batch grows the bubble with PP.
    if (c.what.rfind("micro-batch", 0) == 0) continue;
    CHECK(c.step_time_s <= e.baseline.step_time_s * (1 + 1e-12));
  }
  // TP 8 without overlap: hiding TP communication must help, and GEMMs dominate the rest.
  CHECK(find(e, "TP communication hidden under compute").saving > 0.05);
  CHECK(find(e, "GEMMs and attention twice as fast").saving > 0.2);
}

TEST_CASE("explain: levers that do not apply change nothing", "[explore]") {
  // TP 1, no CP or EP: there is no collective to hide, so the overlap lever is not offered;
  // no recompute: dropping it saves nothing.
  const auto e = explain(load("default.yaml"));
  for (const auto& c : e.counterfactuals) CHECK(c.what.find("hidden under compute") == std::string::npos);
  CHECK(find(e, "no recomputation").saving == Approx(0).margin(1e-12));
  // Largest saving first.
  for (std::size_t i = 1; i < e.counterfactuals.size(); ++i)
    CHECK(e.counterfactuals[i - 1].saving >= e.counterfactuals[i].saving);
}

TEST_CASE("explain offers TP overlap only where the framework has it, and plan_check refuses it elsewhere",
          "[explore][framework][plan]") {
  // Megatron-LM 2021-22 had no TP communication overlap (framework.cpp tp_comm_overlap): the
  // same TP 8 plan on megatron-lm gets no such lever, and setting the key is refused by name.
  const std::string tp = "TP communication hidden under compute (tp_comm_overlap)";
  Scenario sc = load("llama2-70b-910b3-1024.yaml", {{"plan.framework", "megatron-lm"}});
  REQUIRE(sc.plan.tensor_model_parallel_size > 1);
  for (const auto& c : explain(sc).counterfactuals) CHECK(c.what != tp);
  sc.plan.tp_comm_overlap = true;
  bool refused = false;
  for (const Diagnostic& d : check_plan(sc.model, sc.hardware, sc.num_devices, sc.plan)) {
    if (d.key_path != "plan.tp_comm_overlap") continue;
    refused = true;
    CHECK(d.problem == "true, but there is no tensor-parallel communication overlap in megatron-lm");
    CHECK(d.valid == "false, or framework megatron-core, fsdp, mindspeed, nemo or mindformers");
  }
  CHECK(refused);
  sc.plan.framework = Framework::mindspeed;  // its CoC (--use-ascend-coc), which overlaps the all-reduce too
  sc.plan.sequence_parallel = false;
  for (const Diagnostic& d : check_plan(sc.model, sc.hardware, sc.num_devices, sc.plan))
    CHECK(d.key_path != "plan.tp_comm_overlap");
  // Megatron-Core overlaps only sequence parallelism's all-gather / reduce-scatter and asserts it
  // on (arguments.py): without SP the key is refused, and explain offers no such lever.
  sc.plan.framework = Framework::megatron_core;
  refused = false;
  for (const Diagnostic& d : check_plan(sc.model, sc.hardware, sc.num_devices, sc.plan)) {
    if (d.key_path != "plan.tp_comm_overlap") continue;
    refused = true;
    CHECK_THAT(d.problem, Catch::Contains("true without sequence_parallel") &&
                              Catch::Contains("can happen only when sequence parallelism is enabled"));
    CHECK(d.valid == "false, or sequence_parallel: true");
  }
  CHECK(refused);
  sc.plan.tp_comm_overlap = false;
  for (const auto& c : explain(sc).counterfactuals) CHECK(c.what != tp);
  sc.plan.sequence_parallel = true;
  sc.plan.tp_comm_overlap = true;
  for (const Diagnostic& d : check_plan(sc.model, sc.hardware, sc.num_devices, sc.plan))
    CHECK(d.key_path != "plan.tp_comm_overlap");
}

TEST_CASE("explain: the overlap lever names the groups whose collectives it hides", "[explore]") {
  // Mixtral 8x7B, TP 2 EP 8 PP 4 interleaved: tp_comm_overlap hides the TP collectives,
  // overlap_moe_expert_parallel_comm (Megatron-Core's combined 1F1B) the EP all-to-alls.
  const auto e = explain(load("mixtral-8x7b-a100-64.yaml", {{"plan.schedule", "interleaved"}}));
  const std::string tp = "TP communication hidden under compute (tp_comm_overlap)";
  const std::string ep = "EP all-to-alls hidden under another micro-batch's compute (overlap_moe_expert_parallel_comm)";
  CHECK(find(e, tp).saving > 0);
  CHECK(find(e, ep).saving > 0);
  // DeepSeek-V3 on DualPipe, TP 1: no TP lever, and no EP lever (its F&B pairs hide the
  // all-to-alls; Megatron-Core's combined 1F1B needs PP 1 or virtual stages).
  const auto d = explain(load("deepseek-v3-h800-2048.yaml"));
  for (const auto& c : d.counterfactuals) {
    CHECK(c.what != ep);
    CHECK(c.what != tp);
  }
}

TEST_CASE("explain: the heaviest ops are ranked by their share of a device's op time, GEMMs on top for a 70B model",
          "[explore][ops]") {
  const auto e = explain(load("llama2-70b-910b3-1024.yaml"));
  REQUIRE(e.heaviest_ops.size() == 5);
  double shares = 0;
  for (std::size_t i = 0; i < e.heaviest_ops.size(); ++i) {
    shares += e.heaviest_ops[i].share;
    if (i > 0) CHECK(e.heaviest_ops[i - 1].share >= e.heaviest_ops[i].share);
  }
  CHECK(shares <= 1.0 + 1e-12);
  CHECK(shares + e.memory_bound_share <= 1.0 + 1e-12);  // the five are all compute-bound here
  CHECK(e.heaviest_ops[0].op == "mlp_gate_up");         // SwiGLU's up projection: 2/3 of the MLP FLOPs
  CHECK(e.heaviest_ops[0].bound == "compute");
  CHECK(e.heaviest_ops[0].share == Approx(2 * e.heaviest_ops[1].share).epsilon(0.05));  // gate_up vs down
  CHECK(e.memory_bound_share < 0.25);
}

TEST_CASE("explain: a 128-token micro-batch is diagnosed as memory-bound", "[explore][ops]") {
  // A 128-token micro-batch: each GEMM reads its whole weight matrix for 128 rows, so HBM bounds it.
  const auto e = explain(load("default.yaml", {{"plan.seq_length", "128"}}));
  INFO(format_explanation(load("default.yaml"), e));
  CHECK(e.memory_bound_share > 0.25);
  bool said = false;
  for (const auto& d : e.diagnoses) said = said || d.find("memory-bound ops take") != std::string::npos;
  CHECK(said);
}

TEST_CASE("measurement_advice: the key a compute-bound plan leans on, and nothing between a plan and itself",
          "[explore]") {
  const auto plan = load("default.yaml");
  const auto advice = measurement_advice(plan);
  REQUIRE_FALSE(advice.empty());
  CHECK(advice.size() <= 2);
  // Compute-bound (explain's diagnosis): 10% more sustained compute makes the step faster,
  // by less than 1 - 1/1.1 (not everything in the step is compute).
  CHECK(advice.front().key == "device.sustained_compute_fraction");
  CHECK(advice.front().change < 0);
  CHECK(advice.front().change > 1 / 1.1 - 1 - 1e-9);
  CHECK(advice.front().measurement.find("on one Ascend-910B3 server (TP 1, PP 1, DP 8") != std::string::npos);
  // Every key moves a plan and itself alike: no measurement narrows that choice.
  CHECK(measurement_advice(plan, &plan).empty());
  // A GEMM key is pinned by GEMMs: the H100 scenario leans on device.gemm.large second, which
  // once got the catch-all advice of an all-reduce sweep.
  for (const auto& a : measurement_advice(load("llama3-8b-h100-8.yaml"))) {
    INFO(a.key << ": " << a.measurement);
    if (a.key.rfind("device.gemm.", 0) == 0) {
      CHECK(a.measurement.find("GEMM") != std::string::npos);
      CHECK(a.measurement.find("all-reduce") == std::string::npos);
    }
  }
}

TEST_CASE("explain: twice the micro-batch where a replica runs an even number of them and it fits", "[explore]") {
  // Megatron-Core reduces gradients only during the last micro-batch's backward, so a larger
  // micro-batch hides more of the reduction (Megatron-Core README's 32B weak-scaling plan, TP 8
  // DP 48 with four micro-batches of 1: -18.5% in `trainsim explain`). Offered, replayed, as
  // any lever; whether it helps is the replay's answer.
  const auto e = explain(load("default.yaml"));
  bool offered = false;
  for (const auto& c : e.counterfactuals) offered = offered || c.what.rfind("micro-batch 2, 16 per replica", 0) == 0;
  CHECK(offered);  // 32 micro-batches of 1, and 2 fits
  // An odd count keeps the lever out (the global batch would change).
  const auto odd = explain(load("default.yaml", {{"plan.global_batch_size", "20"}}));
  for (const auto& c : odd.counterfactuals) CHECK(c.what.rfind("micro-batch", 0) != 0);
}

TEST_CASE("explain offers PyTorch's other rotate method on a torchtitan plan with context parallelism",
          "[explore][cp][torch_cp]") {
  // Table 4's plan at CP 2 over 32k tokens (scenarios/llama3-70b-h100-256-torchtitan.yaml).
  const std::vector<Override> cp2 = {{"plan.context_parallel_size", "2"}, {"plan.seq_length", "32768"},
                                     {"plan.micro_batch_size", "1"}, {"plan.global_batch_size", "64"}};
  std::vector<Override> gather = cp2;
  gather.push_back({"plan.cp_comm_type", "all_gather"});
  const Scenario sc = load("llama3-70b-h100-256-torchtitan.yaml", gather);
  const Explanation e = explain(sc);
  const Counterfactual& lever = find(e, "K and V sent one block a step");
  Scenario alltoall = sc;
  alltoall.plan.cp_comm_type = CpCommType::p2p;
  CHECK(lever.step_time_s == Approx(explain(alltoall).baseline.step_time_s));
  std::vector<Override> p2p = cp2;
  p2p.push_back({"plan.cp_comm_type", "p2p"});
  find(explain(load("llama3-70b-h100-256-torchtitan.yaml", p2p)), "K and V all-gathered once");
  // Megatron-Core's CP (Transformer Engine's) has no rotate method to offer.
  std::vector<Override> mcore = gather;
  mcore.push_back({"plan.framework", "megatron-core"});
  mcore.push_back({"plan.zero_stage", "0"});
  mcore.push_back({"plan.torch_compile", "false"});
  mcore.push_back({"plan.fp8_recipe", "delayed"});
  for (const auto& c : explain(load("llama3-70b-h100-256-torchtitan.yaml", mcore)).counterfactuals)
    CHECK(c.what.find("rotate method") == std::string::npos);
}

TEST_CASE("explain offers the vocabulary split on a 1F1B pipeline where the framework has it and it fits",
          "[explore][vocab]") {
  // LLaMA-2 7B, PP 2 under megatron-core: the split is offered, at the replay's step for the plan
  // with plan.vocab_parallel: vocab-2; MindSpeed (no split) and a plan already split are not.
  const Scenario mcore = load("default.yaml", {{"plan.framework", "megatron-core"}});
  const auto e = explain(mcore);
  const Counterfactual& c = find(e, "vocabulary split over the stages");
  Scenario split = mcore;
  split.plan.vocab_parallel = VocabParallel::vocab_2;
  CHECK(c.step_time_s == Approx(simulate(split).metrics.step_time_s).epsilon(1e-9));
  CHECK(c.saving > 0);
  for (const Scenario& s : {load("default.yaml", {{"plan.framework", "mindspeed"}}),
                            load("default.yaml", {{"plan.framework", "megatron-core"},
                                                                        {"plan.vocab_parallel", "vocab-2"}})})
    for (const auto& other : explain(s).counterfactuals) CHECK(other.what.find("vocabulary split") == std::string::npos);
}
