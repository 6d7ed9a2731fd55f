// Host time (issue 15): the host's time issuing kernels, from the framework (eager dispatch per
// kernel, graph capture) and the device (the driver's launch), beside the device's time.
#include <catch2/catch.hpp>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/report/op_table.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

// GPT-3 1.3B (Brown et al. 2020, Table 2.1: 24 layers, d_model 2048, 16 heads, context 2048) on
// the Megatron-Core 1.7B's layers (GeLU MLP 4h, learned positions), on one H100.
Scenario gpt3_1_3b(int micro_batch) {
  Scenario sc;
  sc.name = "gpt3-1.3b";
  sc.model = load_model(std::string(TRAINSIM_SOURCE_DIR) + "/models/mcore-gpt-1.7b.yaml");
  sc.model.vocab_size = 50257;
  sc.model.max_position_embeddings = 2048;
  sc.hardware = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/h100-80gb.yaml");
  sc.num_devices = 1;
  sc.plan.micro_batch_size = micro_batch;
  sc.plan.global_batch_size = 8;
  sc.plan.seq_length = 2048;
  sc.plan.use_flash_attn = true;
  return sc;
}

}  // namespace

TEST_CASE("Host time: each kernel costs the framework's eager dispatch and the driver's launch, backward issues "
          "twice as many, a graph-captured layer costs one launch a pass",
          "[graph][host]") {
  const FrameworkEntry& mcore = framework_entry(Framework::megatron_core);
  CHECK(mcore.host_dispatch_per_kernel_s.value == 8.2e-6);
  CHECK_FALSE(mcore.layers_graph_captured.value);
  const HostTime op = op_host_time(5, 4e-6, mcore);
  CHECK(op.forward_s == Approx(5 * 12.2e-6));
  CHECK(op.backward_s == Approx(10 * 12.2e-6));
  const HostTime eager = layer_host_time(30, 4e-6, mcore);
  CHECK(eager.forward_s == Approx(30 * 12.2e-6));
  CHECK(eager.backward_s == Approx(60 * 12.2e-6));
  FrameworkEntry graphs = mcore;
  graphs.layers_graph_captured.value = true;
  const HostTime captured = layer_host_time(30, 4e-6, graphs);
  CHECK(captured.forward_s == 4e-6);
  CHECK(captured.backward_s == 4e-6);
  CHECK(layer_host_time(0, 4e-6, graphs).forward_s == 0);  // a layer with no kernels launches nothing
}

TEST_CASE("trainsim ops on GPT-3 1.3B: the host time per op stays while the device time grows with the micro "
          "batch (1 -> 8), so the layer's host share falls",
          "[report][ops][host]") {
  const OpTable one = build_op_table(gpt3_1_3b(1));
  const OpTable eight = build_op_table(gpt3_1_3b(8));
  REQUIRE(one.layers[0].kind == "dense");
  REQUIRE(one.layers[0].ops.size() == eight.layers[0].ops.size());
  const double per_kernel = 4e-6 + 8.2e-6;  // h100-80gb.yaml kernel_launch + PyTorch eager dispatch
  const LayerWorkload layer = build_workload(gpt3_1_3b(1).model, gpt3_1_3b(1).plan).layer_types[0];
  double kernels = 0;
  for (std::size_t i = 0; i < one.layers[0].ops.size(); ++i) {
    const OpRow& a = one.layers[0].ops[i];
    const OpRow& b = eight.layers[0].ops[i];
    CHECK(a.host_forward_s == Approx(layer.ops[i].kernels * per_kernel));
    CHECK(a.host_backward_s == Approx(2 * layer.ops[i].kernels * per_kernel));
    CHECK(b.host_forward_s == a.host_forward_s);
    kernels += layer.ops[i].kernels;
  }
  CHECK(one.layers[0].host_forward_s == Approx(kernels * per_kernel));
  CHECK(eight.layers[0].host_forward_s == one.layers[0].host_forward_s);
  // Eight times the tokens: more than 4x the device time (the GEMMs' M grows 8x), same host.
  CHECK(eight.layers[0].forward_s() > 4 * one.layers[0].forward_s());
  CHECK(one.layers[0].host_forward_s < one.layers[0].forward_s());  // not host-bound at s = 2048 even at mbs 1
  const std::string text = format_op_table(one);
  CHECK(text.find("host_fwd") != std::string::npos);
  // The summary says which side bounds one micro-batch: here the device's kernels.
  CHECK(text.find("device-bound (the host issues ahead of the device)") != std::string::npos);
  CHECK(op_table_csv(one).find(",host_forward_s,host_backward_s\n") != std::string::npos);
  CHECK(op_table_json(one)["layers"][0]["host_forward_s"].get<double>() == one.layers[0].host_forward_s);
}

TEST_CASE("Recompute's kernels cost the host their forward dispatch again: every kernel under full recompute, the "
          "recomputed ops' under selective",
          "[graph][host]") {
  const FrameworkEntry& mcore = framework_entry(Framework::megatron_core);
  const double per_kernel = 4e-6 + 8.2e-6;
  CHECK(op_host_time(5, 4e-6, mcore, 2).selective_recompute_s == Approx(2 * per_kernel));
  CHECK(op_host_time(5, 4e-6, mcore).selective_recompute_s == 0);
  FrameworkEntry graphs = mcore;
  graphs.layers_graph_captured.value = true;
  CHECK(layer_host_time(30, 4e-6, graphs, 3).selective_recompute_s == 4e-6);  // one launch of the captured pass
  CHECK(layer_host_time(30, 4e-6, graphs, 0).selective_recompute_s == 0);

  // GPT-3 1.3B on one H100: 24 layers of one type, all in one chunk; unfused attention, whose
  // score, softmax and dropout kernels selective recompute repeats.
  Scenario s = gpt3_1_3b(1);
  s.plan.use_flash_attn = false;
  const Workload w = build_workload(s.model, s.plan);
  const LayerWorkload& layer = w.layer_types[0];
  double kernels = 0, recomputed = 0;
  s.plan.recompute_granularity = RecomputeGranularity::selective;
  for (const Op& op : layer.ops) {
    kernels += op.kernels;
    recomputed += recomputed_share(op, s.plan) * op.kernels;
  }
  REQUIRE(recomputed > 0);
  REQUIRE(recomputed < kernels);
  auto chunk_of = [](const Scenario& sc) {
    const Workload wl = build_workload(sc.model, sc.plan);
    const CostModel cost(sc.hardware, sc.plan, sc.num_devices);
    return build_pipeline_costs(sc, wl, cost, estimate_memory(sc, wl)).stages.at(0).chunks.at(0);
  };
  const double layers = s.model.num_layers;
  CHECK(chunk_of(s).host_recompute_s == Approx(layers * recomputed * per_kernel));
  s.plan.recompute_granularity = RecomputeGranularity::full;
  CHECK(chunk_of(s).host_recompute_s == Approx(layers * kernels * per_kernel));
  s.plan.recompute_granularity = RecomputeGranularity::none;
  CHECK(chunk_of(s).host_recompute_s == 0);
}

TEST_CASE("A host-bound step pays full recompute's dispatch: the step grows by the recomputed forwards' host time",
          "[graph][host]") {
  // A 1 ms launch makes every pass host-bound: the device waits for the host's kernels.
  Scenario s = gpt3_1_3b(1);
  s.hardware.device.kernel_launch_s = 1e-3;
  const Workload wl = build_workload(s.model, s.plan);
  double kernels = 0;
  for (const Op& op : wl.layer_types[0].ops) kernels += op.kernels;
  const double recompute_host_s = s.model.num_layers * kernels * (1e-3 + 8.2e-6);
  const double m = s.plan.num_microbatches();
  const double none = simulate(s).metrics.step_time_s;
  s.plan.recompute_granularity = RecomputeGranularity::full;
  const double full = simulate(s).metrics.step_time_s;
  // The recompute's device time runs while its kernels are issued; the host's issue time adds.
  CHECK(full - none == Approx(m * recompute_host_s).epsilon(0.02));
}
