// Properties of every valid plan: random plans (seeded, the same every run) over the shipped
// models and hardware, skipping what check_plan refuses, each asserting what the engine, the
// memory model and the metrics promise.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

std::vector<std::string> files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kRoot + "/" + dir))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());  // directory order is not portable
  return out;
}

// A small deterministic generator (the standard distributions differ between libraries).
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  }
  int pick(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  template <typename T>
  const T& of(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(pick(static_cast<int>(v.size())))];
  }
  bool coin() { return pick(2) == 1; }
};

struct Candidate {
  std::vector<Override> overrides;
  std::string text;  // for failure messages
};

// A random plan on at most 64 devices; `zero_pp1`: PP 1 without the distributed optimizer, so
// every ZeRO stage is valid.
Candidate random_plan(Random& r, const std::vector<std::string>& models, const std::vector<std::string>& hardware,
                      bool zero_pp1) {
  const std::vector<std::string> schedules = {"gpipe", "1f1b", "interleaved", "zb-h1"};
  const std::vector<std::string> recompute = {"none", "selective", "full"};
  const int tp = 1 << r.pick(4), pp = zero_pp1 ? 1 : 1 << r.pick(3), dp = 1 << r.pick(3);
  const int cp = r.pick(6) == 0 ? 2 : 1;
  std::string schedule = r.of(schedules);
  int vpp = 1;
  if (schedule == "interleaved") {
    if (pp < 2) schedule = "1f1b";
    else vpp = 2;
  }
  const int mbs = 1 << r.pick(2);
  const int m = (1 + r.pick(6)) * (schedule == "interleaved" ? pp : 1);
  const int zero = zero_pp1 ? 0 : (pp == 1 ? r.pick(4) : r.pick(2));
  const bool dist_opt = zero == 0 && !zero_pp1 && r.coin();
  Candidate c;
  c.overrides = {{"model", r.of(models)},
                 {"hardware", r.of(hardware)},
                 {"num_devices", std::to_string(tp * pp * dp * cp)},
                 {"plan.tensor_model_parallel_size", std::to_string(tp)},
                 {"plan.pipeline_model_parallel_size", std::to_string(pp)},
                 {"plan.virtual_pipeline_model_parallel_size", std::to_string(vpp)},
                 {"plan.context_parallel_size", std::to_string(cp)},
                 {"plan.schedule", schedule},
                 {"plan.micro_batch_size", std::to_string(mbs)},
                 {"plan.global_batch_size", std::to_string(mbs * dp * m)},
                 {"plan.seq_length", std::to_string(512 << r.pick(3))},
                 {"plan.zero_stage", std::to_string(zero)},
                 {"plan.use_distributed_optimizer", dist_opt ? "true" : "false"},
                 {"plan.recompute_granularity", r.of(recompute)},
                 {"plan.sequence_parallel", tp > 1 && r.coin() ? "true" : "false"},
                 {"plan.overlap_grad_reduce", r.pick(4) == 0 ? "false" : "true"},
                 {"plan.tp_comm_overlap", r.pick(4) == 0 ? "true" : "false"},
                 {"plan.precision", r.pick(4) == 0 ? "fp8" : "bf16"},
                 {"data.sample_load_time", r.pick(4) == 0 ? "20ms" : "0s"},
                 {"data.loader_workers", std::to_string(r.pick(3))}};
  // Megatron overlaps TP communication only with sequence parallelism (plan_check refuses it
  // without): keep the draw, and the overlap where the plan can run it.
  auto value_of = [&c](const char* key) -> std::string& {
    for (auto& o : c.overrides)
      if (o.key_path == key) return o.value;
    throw std::logic_error(key);
  };
  if (value_of("plan.sequence_parallel") == "false") value_of("plan.tp_comm_overlap") = "false";
  for (const auto& o : c.overrides) c.text += o.key_path + "=" + o.value + " ";
  return c;
}

// The scenario, or false when check_plan (or the loader) refuses the plan.
bool load(const Candidate& c, Scenario& out) {
  try {
    out = load_scenario(kRoot + "/scenarios/default.yaml", c.overrides);
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

double rel(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); }

}  // namespace

TEST_CASE("Every valid random plan keeps the engine's, memory model's and metrics' promises", "[property]") {
  const auto models = files("models"), hardware = files("hardware");
  REQUIRE(models.size() > 10);
  Random r{20261130};
  int checked = 0;
  for (int attempt = 0; attempt < 4000 && checked < 600; ++attempt) {
    const Candidate c = random_plan(r, models, hardware, false);
    Scenario s;
    if (!load(c, s)) continue;
    INFO(c.text);
    ++checked;
    SimOptions options;
    options.record_timeline = false;
    const SimResult res = simulate(s, options);
    const StepMetrics& m = res.metrics;

    // The step: positive and finite; each stage's breakdown adds up to it.
    CHECK(std::isfinite(m.step_time_s));
    CHECK(m.step_time_s > 0);
    for (const auto& b : m.stages) {
      const double sum = b.forward_s + b.backward_s + b.recompute_s + b.tp_exposed_s + b.cp_exposed_s +
                         b.ep_exposed_s + b.pp_exposed_s + b.dp_exposed_s + b.bubble_s + b.optimizer_s + b.data_s +
                         b.host_s;
      CHECK(rel(sum, m.step_time_s) <= 1e-9);
    }
    // Utilization: finite, model FLOPs within hardware FLOPs, within the peak.
    CHECK(std::isfinite(m.mfu));
    CHECK(std::isfinite(m.hfu));
    CHECK(m.mfu > 0);
    CHECK(m.mfu <= m.hfu);
    CHECK(m.hfu <= 1.0);
    CHECK(std::isfinite(m.tokens_per_s));
    // Memory: each stage's parts add up to its peak; the report's peak is the worst stage's.
    double worst = 0;
    for (const auto& sm : res.memory.stages) {
      const double parts = sm.weights + sm.gradients + sm.optimizer_states + sm.activations + sm.transient +
                           sm.communication_buffers + sm.reserve + sm.communicator_buffers;
      CHECK(std::isfinite(parts));
      CHECK(rel(parts, sm.peak()) <= 1e-12);
      CHECK(sm.activations_embedding_head <= sm.activations);
      worst = std::max(worst, sm.peak());
    }
    CHECK(res.memory.peak_bytes == worst);
    CHECK(m.peak_memory_bytes == worst);

    // The graph has exactly the tasks count_tasks says (the limits are checked on the count).
    const CostModel cost(s.hardware, s.plan, s.num_devices);
    const PipelineCosts costs = build_pipeline_costs(s, res.workload, cost, res.memory);
    const auto orders = build_schedule(s.plan.schedule, s.plan.pipeline_model_parallel_size,
                                       s.plan.num_microbatches(), costs.num_chunks());
    const TaskGraph graph = build_task_graph(costs, orders);
    CHECK(count_tasks(costs, orders) == graph.num_tasks());
    // The clock's limit is checked on bounds: the costs' bound >= the graph's >= the step, up
    // to the rounding of each task to a whole picosecond (and of the sums).
    const double rounding = 0.5e-12 * graph.num_tasks();
    CHECK(step_time_bound(costs).total_s >= replay_time_bound_s(graph) * (1 - 1e-12));
    if (background_load_s(s) < m.step_time_s)  // else the step waited for the loaders: not this graph
      CHECK(replay_time_bound_s(graph) + rounding >= m.step_time_s * (1 - 1e-12));

    // Full mode on a uniform cluster: the same step (every rank in lockstep).
    if (checked % 3 == 0) {
      options.mode = ReplayMode::full;
      const SimResult full = simulate(s, options);
      CHECK(full.metrics.step_time_s == m.step_time_s);
    }
  }
  CHECK(checked >= 500);
}

TEST_CASE("Raising the ZeRO stage never raises a plan's memory when DP shards it", "[property]") {
  const auto models = files("models"), hardware = files("hardware");
  Random r{424242};
  int checked = 0, zero3_checked = 0;
  for (int attempt = 0; attempt < 1000 && checked < 60; ++attempt) {
    Candidate c = random_plan(r, models, hardware, true);
    std::vector<double> peaks;
    int dp = 1, layers_per_stage = 0;
    for (int zero = 0; zero <= 3; ++zero) {
      for (auto& o : c.overrides)
        if (o.key_path == "plan.zero_stage") o.value = std::to_string(zero);
      Scenario s;
      if (!load(c, s)) break;
      peaks.push_back(estimate_memory(s, build_workload(s.model, s.plan)).peak_bytes);
      dp = s.plan.data_parallel_size;
      layers_per_stage = s.model.num_layers / s.plan.pipeline_model_parallel_size;
    }
    // With DP 1 there is nothing to shard, and ZeRO-2/3's buckets and gathered layers only add
    // (DeepSpeed allocates them at any DP size).
    if (peaks.size() != 4 || c.overrides[2].value == c.overrides[3].value) continue;
    INFO(c.text);
    ++checked;
    for (std::size_t z = 1; z < 3; ++z) CHECK(peaks[z] <= peaks[z - 1]);
    // ZeRO-3 shards the 16-bit weights too, but holds the units it gathers: the one computing and
    // the next (gathered_units_in_flight, 2, of the largest layer) and FSDP's root unit (embedding
    // and head). Few large units over a small DP group can take more than the shard saves:
    // DeepSeek-V2's four 3.3B-parameter layers on DP 2 save half the weights (two layers) and
    // hold two whole layers and more. So ZeRO-3 is held to ZeRO-2's peak where the saving wins by
    // a margin: the layers' worth it saves, L (1 - 1/DP), at least twice the two it gathers (room
    // for the root unit): 8 layers a stage on DP 2, 6 on DP 4.
    if (layers_per_stage * (dp - 1) >= 4 * dp) {
      ++zero3_checked;
      CHECK(peaks[3] <= peaks[2]);
    }
  }
  CHECK(checked >= 40);
  CHECK(zero3_checked >= 30);
}
