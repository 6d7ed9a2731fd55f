// Network use counts the TP, CP and EP collectives inside the layers: each carries the bytes one
// rank moves on its tier, from the estimate that prices it (pipeline_costs.cpp comm_tier_bytes).
#include <catch2/catch.hpp>
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/metrics/step_metrics.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/report/summary.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

// Sum over every layer of the model (embedding, each transformer layer, head) of the buffer
// bytes of its EP collectives, both passes; `kinds_ok` false when one is not `kind`.
double model_ep_bytes(const Workload& w, CollectiveKind kind, bool& kinds_ok) {
  double total = 0;
  auto add = [&](const LayerWorkload& layer) {
    for (const CommOp& c : layer.comms) {
      if (c.group != CommGroup::ep) continue;
      kinds_ok = kinds_ok && c.kind == kind;
      total += c.bytes;
    }
  };
  add(w.embedding);
  for (int type : w.layer_type_of) add(w.layer_types[static_cast<std::size_t>(type)]);
  add(w.head);
  return total;
}

}  // namespace

TEST_CASE("An EP all-to-all over two servers counts (n - g) / n of its buffer through each rank's NIC, both ways",
          "[report][network]") {
  // Qwen3-30B-A3B on 16 devices of 8 per server, EP 16 (one stage, no TP): each rank keeps 8 of
  // the 16 shares of its all-to-all buffer S in its server and sends the other 8 through its
  // NIC, receiving as many: S / 2 each way per all-to-all.
  const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/qwen3-30b-a3b-910b3-16.yaml",
                                   {{"plan.pipeline_model_parallel_size", "1"},
                                    {"plan.expert_model_parallel_size", "16"},
                                    {"plan.recompute_granularity", "none"},
                                    {"plan.recompute_num_layers", "0"},
                                    {"plan.global_batch_size", "32"}});
  REQUIRE(s.hardware.node.devices_per_node == 8);
  const Workload w = build_workload(s.model, s.plan);
  const CostModel cost(s.hardware, s.plan, s.num_devices);
  const GroupShape ep = cost.shape_of(CommGroup::ep);
  REQUIRE(ep.ranks == 16);
  REQUIRE(ep.ranks_per_node == 8);
  bool all_to_all = true;
  const double buffer = model_ep_bytes(w, CollectiveKind::all_to_all, all_to_all);
  REQUIRE(all_to_all);
  REQUIRE(buffer > 0);

  const PipelineCosts costs = build_pipeline_costs(s, w, cost, estimate_memory(s, w));
  REQUIRE(costs.ep_inter_node);
  const int m = costs.microbatches;
  REQUIRE(m == 2);
  const double expected = m * buffer * (16.0 - 8.0) / 16.0;

  const TaskGraph g = build_task_graph(costs, build_schedule(costs.schedule, 1, m, 1));
  double ep_bytes = 0, dp_bytes = 0;
  for (const Task& t : g.tasks) {
    if (t.category == SpanCategory::ep_comm) {
      CHECK(t.tier == 1);
      ep_bytes += t.bytes;
    } else if (t.category == SpanCategory::dp_comm) {
      CHECK(t.tier == 1);  // DP 16 spans both servers too
      dp_bytes += t.bytes;
    }
  }
  CHECK(ep_bytes == Approx(expected));

  // The replay adds them to the device's NIC tier both ways, beside the gradient buckets'.
  MetricInputs in;
  in.num_devices = s.num_devices;
  const StepMetrics metrics = compute_step_metrics(replay(g), in);
  const TierTraffic& nic = metrics.tiers[1];
  CHECK(nic.bytes_sent == Approx(expected + dp_bytes));
  CHECK(nic.bytes_received == Approx(expected + dp_bytes));
  CHECK(metrics.tiers[0].busy_s == 0);  // nothing inside the server: no TP, CP or PP
}

TEST_CASE("DeepSeek-V3's EP traffic across servers counts in its inter-node network use", "[report][network]") {
  // EP 64 over servers of 8 with DeepEP (token_dispatcher flex): each dispatch and combine is a
  // send/recv of the rank's deduplicated tokens through its own NIC, all of the buffer crossing
  // servers. Each micro-batch passes the whole model once, so the mean device moves
  // m x (the model's EP buffers) / p each way; the run's inter-node use is at least that over
  // the tier's busy time (DP and PP add theirs), where it showed ~4% counting DP and PP alone.
  const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/deepseek-v3-h800-2048.yaml");
  const SimResult r = simulate(s);
  const CostModel cost(s.hardware, s.plan, s.num_devices);
  REQUIRE(cost.shape_of(CommGroup::ep).nodes > 1);
  bool send_recv = true;
  const double buffer = model_ep_bytes(r.workload, CollectiveKind::send_recv, send_recv);
  REQUIRE(send_recv);
  const double ep_per_device = s.plan.num_microbatches() * buffer / s.plan.pipeline_model_parallel_size;
  const TierTraffic& nic = r.metrics.tiers[1];
  REQUIRE(nic.busy_s > 0);
  CHECK(nic.bytes_sent >= ep_per_device);
  CHECK(nic.bytes_received >= ep_per_device);
  const double ep_use = ep_per_device / (nic.busy_s * tier_bandwidth(s.hardware, 1));
  CHECK(tier_bandwidth_use(s, r.metrics, 1) >= ep_use);
  CHECK(tier_bandwidth_use(s, r.metrics, 1) <= 1.0);
}

TEST_CASE("A ring CP exchange over two servers counts every send/recv through the NIC, split between its hidden "
          "and exposed tasks by their time",
          "[report][network]") {
  // Llama 3 8B at 128k on 16 devices of 8 per server, CP 16 as a ring (cp_comm_type p2p): the
  // group spans both servers, so the cost model prices each rank's ring steps as send/recvs
  // through its NIC (pairwise across servers: the whole message). The forward's r - 1 steps send
  // one K, V block each and the backward's 2 (r - 1) blocks in all (cp_ring.cpp): the chunk's CP
  // bytes, hidden and exposed, are the layers' CP buffers, each pass once.
  const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-8b-h100-64-128k-cp.yaml",
                                   {{"num_devices", "16"},
                                    {"plan.context_parallel_size", "16"},
                                    {"plan.global_batch_size", "1"},
                                    {"plan.recompute_granularity", "none"}});
  REQUIRE(s.plan.cp_comm_type == CpCommType::p2p);
  const Workload w = build_workload(s.model, s.plan);
  const CostModel cost(s.hardware, s.plan, s.num_devices);
  REQUIRE(cost.shape_of(CommGroup::cp).nodes == 2);
  double buffer = 0;
  auto add = [&](const LayerWorkload& layer) {
    for (const CommOp& c : layer.comms) {
      if (c.group != CommGroup::cp) continue;
      CHECK(c.kind == CollectiveKind::send_recv);
      buffer += c.bytes;
    }
  };
  add(w.embedding);
  for (int type : w.layer_type_of) add(w.layer_types[static_cast<std::size_t>(type)]);
  add(w.head);
  REQUIRE(buffer > 0);
  const PipelineCosts costs = build_pipeline_costs(s, w, cost, estimate_memory(s, w));
  REQUIRE(costs.cp_inter_node);
  const ChunkCosts& c = costs.stages[0].chunks[0];
  CHECK(c.cp_forward_bytes + c.cp_backward_bytes + c.cp_hidden_forward_bytes + c.cp_hidden_backward_bytes ==
        Approx(buffer));
  REQUIRE(c.cp_hidden_forward_s > 0);
  CHECK(c.cp_hidden_forward_bytes / (c.cp_hidden_forward_bytes + c.cp_forward_bytes) ==
        Approx(c.cp_hidden_forward_s / (c.cp_hidden_forward_s + c.cp_forward_s)));
  CHECK(c.cp_hidden_backward_bytes / (c.cp_hidden_backward_bytes + c.cp_backward_bytes) ==
        Approx(c.cp_hidden_backward_s / (c.cp_hidden_backward_s + c.cp_backward_s)));
}
