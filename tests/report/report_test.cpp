#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/metrics/step_metrics.hpp"
#include "trainsim/report/chrome_trace.hpp"
#include "trainsim/report/summary.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

struct Synthetic {
  Scenario scenario;
  SimResult result;
};

// A whole run built from synthetic pipeline costs (no workload or cost model needed).
Synthetic synthetic_run(bool full) {
  ChunkCosts c;
  c.forward_s = 1e-3;
  c.backward_input_s = 1e-3;
  c.backward_weight_s = 1e-3;
  c.tp_forward_s = 1e-4;
  c.tp_backward_s = 1e-4;
  c.activation_bytes = 2e9;
  c.buckets = {GradBucket{1e8, 2e-4}};
  auto costs = uniform_pipeline_costs(PipelineSchedule::interleaved, 2, 2, 4, c);
  costs.p2p_s = 5e-5;
  costs.tp = 2;
  costs.dp = 2;
  Synthetic s;
  s.scenario.name = "synthetic";
  s.scenario.num_devices = 8;
  s.scenario.hardware.name = "test-device";
  s.scenario.hardware.device.name = "TestGPU";
  s.scenario.plan.tensor_model_parallel_size = 2;
  s.scenario.plan.pipeline_model_parallel_size = 2;
  s.scenario.plan.virtual_pipeline_model_parallel_size = 2;
  s.scenario.plan.data_parallel_size = 2;
  s.scenario.plan.global_batch_size = 8;
  s.scenario.plan.schedule = PipelineSchedule::interleaved;
  ReplayOptions o;
  o.full = full;
  auto replayed = replay(build_task_graph(costs, build_schedule(costs.schedule, 2, 4, 2)), o);
  MetricInputs in;
  in.model_flops_per_step = 8e15;
  in.hardware_flops_per_step = 8e15;
  in.tokens_per_step = 8 * 2048;
  in.samples_per_step = 8;
  in.num_devices = 8;
  in.peak_flops_per_device = 312e12;
  in.stage_peak_memory_bytes = {40e9, 30e9};
  in.report_device_waits = full;
  s.result.metrics = compute_step_metrics(replayed, in);
  s.result.timeline = std::move(replayed.timeline);
  return s;
}

}  // namespace

TEST_CASE("Two runs give byte-identical JSON summaries and traces", "[report]") {
  for (bool full : {false, true}) {
    const auto a = synthetic_run(full);
    const auto b = synthetic_run(full);
    CHECK(json_summary(a.scenario, a.result) == json_summary(b.scenario, b.result));
    CHECK(chrome_trace(a.result.timeline) == chrome_trace(b.result.timeline));
  }
}

TEST_CASE("The JSON summary carries its schema version and units in field names", "[report]") {
  const auto a = synthetic_run(true);
  const auto j = nlohmann::json::parse(json_summary(a.scenario, a.result));
  CHECK(j["schema_version"] == kSummarySchemaVersion);
  CHECK(j["step_time_s"].get<double>() == Approx(a.result.metrics.step_time_s));
  CHECK(j["stages"].size() == 2);
  CHECK(j["stages"][0].contains("bubble_s"));
  CHECK(j["device_waits"].size() == 8);
  // MFU follows its definition: model FLOPs / (peak x devices x step time).
  CHECK(j["mfu"].get<double>() == Approx(8e15 / (312e12 * 8 * a.result.metrics.step_time_s)));
}

TEST_CASE("The Chrome trace names processes and threads, never overlaps slices on a thread, and links p2p",
          "[report]") {
  const auto a = synthetic_run(true);
  const auto t = nlohmann::json::parse(chrome_trace(a.result.timeline));
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;
  int threads = 0, processes = 0, flow_starts = 0, flow_ends = 0, counters = 0;
  for (const auto& e : t["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name") ++threads;
    if (ph == "M" && e["name"] == "process_name") ++processes;
    if (ph == "X")
      slices[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
    if (ph == "s") ++flow_starts;
    if (ph == "f") ++flow_ends;
    if (ph == "C") ++counters;
  }
  CHECK(processes == 8);
  CHECK(threads == static_cast<int>(slices.size()));
  for (auto& [key, v] : slices) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i].first >= v[i - 1].first + v[i - 1].second - 1e-9);
  }
  CHECK(flow_starts == static_cast<int>(a.result.timeline.flows.size()));
  CHECK(flow_ends == flow_starts);
  CHECK(flow_starts > 0);
  CHECK(counters > 0);
}

TEST_CASE("The text summary shows step time, MFU and one row per stage", "[report]") {
  const auto a = synthetic_run(false);
  const std::string text = format_summary(a.scenario, a.result);
  CHECK_THAT(text, Catch::Contains("step time") && Catch::Contains("MFU") && Catch::Contains("tokens/s"));
  CHECK_THAT(text, Catch::Contains("TP2 PP2 DP2, interleaved v=2"));
  CHECK(std::count(text.begin(), text.end(), '\n') < 16);  // readable in ten seconds
}

TEST_CASE("Network bandwidth use counts the bytes a device moves on the tier, so it never passes 100%",
          "[report][network]") {
  // Hierarchical collectives move only a device's share of the message through its NIC:
  // ZeRO-3 over 512 A100s (64 servers) gathers 140 GB of weights per micro-batch, of which
  // each NIC carries about a quarter (four of the group's ranks per server).
  const std::string root = TRAINSIM_SOURCE_DIR;
  std::vector<std::vector<Override>> cases = {
      {},
      {{"hardware", "hardware/a100-80gb.yaml"},
       {"plan.tensor_model_parallel_size", "2"},
       {"plan.pipeline_model_parallel_size", "1"},
       {"plan.virtual_pipeline_model_parallel_size", "1"},
       {"plan.schedule", "1f1b"},
       {"plan.zero_stage", "3"},
       {"plan.use_distributed_optimizer", "false"},
       {"plan.micro_batch_size", "1"}}};
  for (const auto& overrides : cases) {
    const Scenario s = load_scenario(root + "/scenarios/llama2-70b-910b3-1024.yaml", overrides);
    const SimResult r = simulate(s);
    CAPTURE(s.hardware.name);
    CHECK(r.metrics.tiers[1].busy_s > 0);
    const double use = tier_bandwidth_use(s, r.metrics, 1);
    CHECK(use > 0.3);
    CHECK(use <= 1.0);
  }
}

TEST_CASE("the summary says why MFU is above HFU when the model computes fewer FLOPs than Megatron's count, and "
          "is silent otherwise",
          "[report]") {
  Synthetic a = synthetic_run(false);
  StepMetrics& m = a.result.metrics;
  // A sliding window: the model computes 62.5% of the counted FLOPs.
  m.model_flops_per_step = 8e15;
  m.hardware_flops_per_step = 5e15;
  m.mfu = 0.8;
  m.hfu = 0.5;
  CHECK_THAT(format_summary(a.scenario, a.result),
             Catch::Contains("note: MFU above HFU") && Catch::Contains("this model computes 62 % of those FLOPs"));
  // Full recompute: HFU above MFU, the usual order, no note.
  m.hardware_flops_per_step = 32e15 / 3;
  m.hfu = 0.8 * 4 / 3;
  CHECK_THAT(format_summary(a.scenario, a.result), !Catch::Contains("note: MFU above HFU"));
}
