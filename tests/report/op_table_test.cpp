// The per-op table: the replay's own prices, per layer kind, with the roofline term that
// bounds each op.
#include "trainsim/report/op_table.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include "trainsim/config/scenario.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;

namespace {
Scenario gpt3() { return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.yaml"); }

std::size_t lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }
}  // namespace

TEST_CASE("The op table prices every op and collective as the cost model does, layer kinds covering the model",
          "[report][ops]") {
  const Scenario s = gpt3();
  const OpTable table = build_op_table(s);
  const Workload w = build_workload(s.model, s.plan);
  const CostModel cost(s.hardware, s.plan, s.num_devices);
  REQUIRE(table.layers.size() == 3);  // dense, embedding, head
  CHECK(table.layers[0].kind == "dense");
  CHECK(table.layers[0].count == s.model.num_layers);
  const LayerWorkload& layer = w.layer_types[0];
  REQUIRE(table.layers[0].ops.size() == layer.ops.size());
  double forward = 0;
  for (std::size_t i = 0; i < layer.ops.size(); ++i) {
    CHECK(table.layers[0].ops[i].name == layer.ops[i].name);
    CHECK(table.layers[0].ops[i].forward.total_s() == cost.forward_s(layer.ops[i]));
    CHECK(table.layers[0].ops[i].backward.total_s() == cost.backward_s(layer.ops[i]));
    forward += cost.forward_s(layer.ops[i]);
  }
  CHECK(table.layers[0].forward_s() == Approx(forward));
  REQUIRE(table.layers[0].comms.size() == layer.comms.size());
  for (std::size_t i = 0; i < layer.comms.size(); ++i)
    CHECK(table.layers[0].comms[i].time_s == cost.collective_s(layer.comms[i]));
  CHECK(table.layers[2].kind == "head");
}

TEST_CASE("An op is bound by its largest roofline term: compute, memory or kernel launch", "[report][ops][cost]") {
  DeviceSpec d;
  d.peak_flops_bf16 = 1e15;
  d.peak_flops_fp32 = 1e14;
  d.hbm_bandwidth = 1e12;
  d.memory_bound_efficiency = 1.0;
  d.kernel_launch_s = 1e-5;
  Op gemm;
  gemm.op_class = OpClass::gemm;
  gemm.forward_flops = 1e12;
  gemm.forward_bytes = 1e6;
  gemm.gemm_m = gemm.gemm_n = gemm.gemm_k = 4096;
  const OpTiming g = op_forward_timing(gemm, d, Precision::bf16);
  CHECK(std::string(g.bound()) == "compute");
  CHECK(g.memory_s == Approx(1e-6));
  CHECK(g.total_s() == g.compute_s);
  Op norm;
  norm.forward_flops = 1e6;
  norm.forward_bytes = 1e9;
  const OpTiming n = op_forward_timing(norm, d, Precision::bf16);
  CHECK(std::string(n.bound()) == "memory");
  CHECK(n.total_s() == Approx(1e-3));
  Op tiny;
  tiny.forward_bytes = 1e3;
  tiny.kernels = 3;
  const OpTiming t = op_forward_timing(tiny, d, Precision::bf16);
  CHECK(std::string(t.bound()) == "launch");
  CHECK(t.total_s() == Approx(3e-5));
  CHECK(op_backward_timing(tiny, d, Precision::bf16).launch_s == Approx(6e-5));  // backward launches twice as many
}

TEST_CASE("The op table's CSV has one line per op and collective, its JSON a schema version", "[report][ops]") {
  const OpTable table = build_op_table(gpt3());
  std::size_t rows = 0;
  for (const auto& layer : table.layers) rows += layer.ops.size() + layer.comms.size();
  const std::string csv = op_table_csv(table);
  CHECK(lines(csv) == rows + 1);
  CHECK(csv.rfind("layer,count,item,name,", 0) == 0);
  CHECK(csv.find("dense,96,op,qkv,gemm,2048x4608x12288,,") != std::string::npos);
  const nlohmann::json j = op_table_json(table);
  CHECK(j.at("schema_version") == kOpTableSchemaVersion);
  CHECK(j.at("layers").at(0).at("ops").at(1).at("forward").at("bound") == "compute");
  const std::string text = format_op_table(table);
  CHECK(text.find("dense x 96") != std::string::npos);
  CHECK(text.find("lm_head") != std::string::npos);
}
