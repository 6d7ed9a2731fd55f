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
       {"plan.framework", "megatron-core"},
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

namespace {

// Two pipeline stages on different servers send each other one message (Megatron's
// send_forward_recv_backward in 1F1B's steady state), the second `delay_s` after the first, each
// message `bytes` over `flow_s` alone. The two flows take different NIC links (0's send and 1's
// receive; 1's send and 0's receive), so neither slows the other. `back` false: only the first.
ReplayResult pp_exchange(double bytes, double flow_s, double delay_s, bool back = true) {
  auto transfer = [&](int stage, Stream stream) {
    Task t;
    t.stage = stage;
    t.stream = stream;
    t.category = SpanCategory::pp_comm;
    t.group = RankGroup::pp;
    t.duration_s = flow_s;
    t.tier = 1;
    t.bytes = bytes;
    return t;
  };
  std::vector<Task> tasks = {transfer(0, Stream::pp_send), transfer(1, Stream::pp_recv), transfer(1, Stream::pp_send),
                             transfer(0, Stream::pp_recv)};
  tasks[0].rendezvous = tasks[1].rendezvous = 0;
  tasks[2].rendezvous = tasks[3].rendezvous = 1;
  std::vector<std::array<int, 2>> rendezvous = {{0, 1}, {2, 3}};
  if (!back) {
    tasks.resize(2);
    rendezvous.resize(1);
  }
  std::vector<std::pair<int, int>> edges;
  if (back && delay_s > 0) {
    Task c;  // stage 1's compute before its send
    c.stage = 1;
    c.duration_s = delay_s;
    tasks.push_back(c);
    edges.emplace_back(4, 2);
  }
  TaskGraph g = make_task_graph(tasks, edges);
  g.rendezvous = rendezvous;
  g.stages = 2;
  return replay(g);
}

}  // namespace

TEST_CASE("Network bandwidth use is the busier direction's: a PP exchange across servers at 90% of the NIC "
          "shows 90%, not the sum of both directions",
          "[report][network]") {
  // A link is full duplex and tier_bandwidth is one direction's. Each device sends one message
  // and receives one, each at 0.9 of the NIC's per-direction peak while it runs: the busier
  // direction carried 0.9 x bw x flow over the busy time flow + delay. Summing sent and received
  // bytes against one direction (the old figure) gave 1.8 and 1.2.
  const std::string root = TRAINSIM_SOURCE_DIR;
  Scenario sc = load_scenario(root + "/scenarios/llama2-70b-910b3-1024.yaml");
  const double bw = tier_bandwidth(sc.hardware, 1);
  REQUIRE(bw > 0);
  constexpr double kFlow = 1e-2;
  const double bytes = 0.9 * bw * kFlow;
  for (double delay : {0.0, kFlow / 2}) {
    CAPTURE(delay);
    MetricInputs in;
    in.num_devices = 2;
    SimResult r;
    r.metrics = compute_step_metrics(pp_exchange(bytes, kFlow, delay), in);
    const TierTraffic& t = r.metrics.tiers[1];
    CHECK(t.busy_s == Approx(kFlow + delay));  // each device: its send and receive, overlapped
    CHECK(t.bytes_sent == Approx(bytes));
    CHECK(t.bytes_received == Approx(bytes));
    CHECK(t.busier_direction_bytes == Approx(bytes));
    const double use = tier_bandwidth_use(sc, r.metrics, 1);
    CHECK(use == Approx(0.9 * kFlow / (kFlow + delay)));
    CHECK(use <= 1.0);
    const auto j = nlohmann::json::parse(json_summary(sc, r));
    const auto& tier = j["network_tiers"][1];
    CHECK(tier["tier"] == "inter_node");
    CHECK(tier["bytes_sent"].get<double>() == Approx(bytes));
    CHECK(tier["bytes_received"].get<double>() == Approx(bytes));
    CHECK(tier["busier_direction_bytes_per_s"].get<double>() == Approx(bytes / (kFlow + delay)));
    CHECK(tier["peak_bandwidth_bytes_per_s"].get<double>() == Approx(bw));
    CHECK(tier["bandwidth_use"].get<double>() == Approx(use));
    CHECK_FALSE(tier.contains("bytes"));  // schema 1's sum of both directions
  }
  // One direction only (pipeline fill): the sender's busier direction is its sends, the
  // receiver's its receives; the mean over devices of each one's busier direction keeps 0.9,
  // where the busier of the mean directions would give 0.45.
  MetricInputs in;
  in.num_devices = 2;
  const StepMetrics m = compute_step_metrics(pp_exchange(bytes, kFlow, 0, false), in);
  CHECK(m.tiers[1].bytes_sent == Approx(bytes / 2));
  CHECK(m.tiers[1].bytes_received == Approx(bytes / 2));
  CHECK(tier_bandwidth_use(sc, m, 1) == Approx(0.9));
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
