// explain on a context-parallel plan: its CP line is what the step waits for of the exchange
// (a ring's sends its attention steps do not hide), the same number the graph prices, with
// or without tp_comm_overlap (which does not reach the CP exchange: cp_tp_overlap_test.cpp).
#include <catch2/catch.hpp>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/explore/explain.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/report/command_json.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

// Llama-3 8B at 16K over a ring of CP 8 with TP 2 (two servers, the CP group across them),
// DP 1: no gradient traffic shares the NICs with the ring, so the replay's exposed CP time is
// the graph's.
Scenario ring_plan(bool tp_comm_overlap) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-8b-h100-64-128k-cp.yaml",
                       {{"plan.seq_length", "16384"},
                        {"plan.tensor_model_parallel_size", "2"},
                        {"plan.sequence_parallel", "true"},
                        {"num_devices", "16"},
                        {"plan.global_batch_size", "8"},
                        {"plan.tp_comm_overlap", tp_comm_overlap ? "true" : "false"}});
}

struct GraphCp {
  double exposed_s = 0, hidden_s = 0, tp_s = 0;
};

// The ring's exchange in one step of stage 0, from the chunk costs the graph is built from.
GraphCp graph_cp(const Scenario& s) {
  const Workload w = build_workload(s.model, s.plan);
  const CostModel cost(s.hardware, s.plan, s.num_devices);
  const PipelineCosts costs = build_pipeline_costs(s, w, cost, estimate_memory(s, w));
  GraphCp out;
  for (const ChunkCosts& c : costs.stages.front().chunks) {
    out.exposed_s += costs.microbatches * (c.cp_forward_s + c.cp_backward_s);
    out.hidden_s += costs.microbatches * (c.cp_hidden_forward_s + c.cp_hidden_backward_s);
    out.tp_s += costs.microbatches * (c.tp_forward_s + c.tp_backward_s);
  }
  return out;
}

double share(const Explanation& e, const std::string& what) {
  for (const auto& [name, value] : e.shares)
    if (name == what) return value;
  FAIL("no share " << what);
  throw;
}

}  // namespace

TEST_CASE("explain: the CP line is the ring's exposed part from the graph, with tp_comm_overlap on or off",
          "[explore][cp]") {
  for (const bool overlap : {false, true}) {
    INFO("tp_comm_overlap " << overlap);
    const Scenario s = ring_plan(overlap);
    const GraphCp g = graph_cp(s);
    // A ring that hides part of its sends and not all: both parts are there to show.
    REQUIRE(g.exposed_s > 0.1);
    REQUIRE(g.hidden_s > 0.1);
    const Explanation e = explain(s);
    const double step = e.baseline.step_time_s;
    CHECK(share(e, "exposed CP comm") * step == Approx(g.exposed_s).epsilon(1e-6));
    CHECK(e.cp_exposed_s == Approx(g.exposed_s).epsilon(1e-12));
    CHECK(e.cp_hidden_s == Approx(g.hidden_s).epsilon(1e-12));
    const auto json = explanation_json(s, e);  // explain --json carries both parts
    CHECK(json["cp_exposed_s"].get<double>() == e.cp_exposed_s);
    CHECK(json["cp_hidden_s"].get<double>() == e.cp_hidden_s);
    // The TP collectives: exposed without overlap, hidden with it.
    CHECK(share(e, "exposed TP comm") * step == Approx(overlap ? 0.0 : g.tp_s).margin(1e-9).epsilon(1e-6));
    const std::string text = format_explanation(s, e);
    CHECK(text.find("CP exchange a step") != std::string::npos);
    // The overlap lever names TP only: tp_comm_overlap does not reach the CP exchange.
    for (const auto& c : e.counterfactuals) CHECK(c.what.find("CP communication") == std::string::npos);
    if (!overlap) {
      bool tp_lever = false;
      for (const auto& c : e.counterfactuals)
        tp_lever = tp_lever || c.what == "TP communication hidden under compute (tp_comm_overlap)";
      CHECK(tp_lever);
    }
  }
}

TEST_CASE("A TP + ring CP plan under tp_comm_overlap: full mode replays the representative step", "[explore][cp]") {
  const Scenario s = ring_plan(true);
  SimOptions options;
  options.record_timeline = false;
  const double representative = simulate(s, options).metrics.step_time_s;
  options.mode = ReplayMode::full;
  CHECK(simulate(s, options).metrics.step_time_s == Approx(representative).epsilon(1e-9));
  // The step with overlap is the step without it less what the TP overlap saves; the CP
  // sends the attention steps do not hide cost the same in both.
  const Scenario off = ring_plan(false);
  SimOptions quiet;
  quiet.record_timeline = false;
  const double off_step = simulate(off, quiet).metrics.step_time_s;
  const GraphCp g = graph_cp(off);
  CHECK(off_step > representative);
  CHECK(off_step - representative < g.tp_s);
}
