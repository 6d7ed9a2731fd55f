// Speed of the simulator (Google Benchmark; -DTRAINSIM_BUILD_BENCH=ON).
//  - BM_sim_*: the real simulate() (workload, cost model, memory, pipeline costs, schedule,
//    task graph, replay, metrics) on the shipped scenarios (issue 3's speed cases).
//  - BM_analytical_*: build_workload + estimate_memory alone over a grid of plans (issue 6's
//    pruning tier; items_per_second = plans/s).
//  - BM_synthetic_*: the task graph and the replay alone on synthetic costs.
//  - BM_search_*: `trainsim search` on one thread: *_screen enumerates, checks, sizes memory
//    and estimates every plan for 1024 devices without replaying (items_per_second = plans/s
//    per core); *_1024 is the whole search with its 256 replays.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/engine/variability.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

struct Shape {
  PipelineSchedule schedule;
  int tp, pp, dp, v, microbatches;
};

// Rough per-micro-batch costs of one model chunk; the replay's speed does not depend on them.
PipelineCosts synthetic(const Shape& s) {
  ChunkCosts c;
  c.forward_s = 12e-3 / s.v;
  c.backward_input_s = 12e-3 / s.v;
  c.backward_weight_s = 12e-3 / s.v;
  c.tp_forward_s = 2e-3 / s.v;
  c.tp_backward_s = 2e-3 / s.v;
  c.activation_bytes = 3e9 / s.v;
  c.buckets.assign(4, GradBucket{1.6e8, 4e-3});
  auto costs = uniform_pipeline_costs(s.schedule, s.pp, s.v, s.microbatches, c);
  costs.p2p_s = 2e-4;
  costs.tp = s.tp;
  costs.dp = s.dp;
  for (auto& st : costs.stages) st.optimizer_s = 5e-3;
  return costs;
}

// GPT-3 175B on 1024 A100: TP8 PP16 DP8, global batch 1536, micro batch 1, interleaved v=3.
const Shape kGpt3{PipelineSchedule::interleaved, 8, 16, 8, 3, 1536 / 8};
// LLaMA-3 405B on 16384 H100: TP8 PP16 DP128, global batch 2048 (16 micro-batches), 1F1B.
const Shape kLlama405{PipelineSchedule::one_f_one_b, 8, 16, 128, 1, 2048 / 128};
// LLaMA-2 70B on 1024 910B3: TP8 PP4 DP32, global batch 1024, 1F1B.
const Shape kLlama70{PipelineSchedule::one_f_one_b, 8, 4, 32, 1, 1024 / 32};

void replay_case(benchmark::State& state, const Shape& shape, bool full) {
  const auto costs = synthetic(shape);
  const auto orders = build_schedule(costs.schedule, shape.pp, shape.microbatches, shape.v);
  ReplayOptions options;
  options.full = full;
  options.record_spans = false;
  std::int64_t tasks = 0;
  for (auto _ : state) {
    const TaskGraph graph = build_task_graph(costs, orders);
    const auto r = replay(graph, options);
    tasks = r.tasks_run;
    benchmark::DoNotOptimize(r.end);
  }
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["devices"] = full ? shape.tp * shape.pp * shape.dp : shape.pp;
}

void graph_only(benchmark::State& state, const Shape& shape) {
  const auto costs = synthetic(shape);
  const auto orders = build_schedule(costs.schedule, shape.pp, shape.microbatches, shape.v);
  for (auto _ : state) {
    const TaskGraph graph = build_task_graph(costs, orders);
    benchmark::DoNotOptimize(graph.num_tasks());
  }
}

void BM_synthetic_gpt3_175b_graph(benchmark::State& s) { graph_only(s, kGpt3); }
void BM_synthetic_gpt3_175b_representative(benchmark::State& s) { replay_case(s, kGpt3, false); }
void BM_synthetic_gpt3_175b_full_1024(benchmark::State& s) { replay_case(s, kGpt3, true); }
void BM_synthetic_llama3_405b_representative(benchmark::State& s) { replay_case(s, kLlama405, false); }
void BM_synthetic_llama2_70b_representative(benchmark::State& s) { replay_case(s, kLlama70, false); }
void BM_synthetic_llama2_70b_full_1024(benchmark::State& s) { replay_case(s, kLlama70, true); }

// ---- The real pipeline on the shipped scenarios ----

Scenario shipped(const std::string& name, const std::vector<Override>& overrides = {}) {
  const std::string root = TRAINSIM_SOURCE_DIR;
  return load_scenario(root + "/scenarios/" + name + ".yaml", overrides, {root});
}

// The cases, pinned with overrides so a change to the shipped file cannot change
// what is measured.
Scenario gpt3_175b() {  // 1024 A100, TP8 PP16 DP8, global batch 1536, micro batch 1, interleaved
  return shipped("gpt3-175b-a100-1024", {{"plan.tensor_model_parallel_size", "8"},
                                         {"plan.pipeline_model_parallel_size", "16"},
                                         {"plan.schedule", "interleaved"},
                                         {"plan.global_batch_size", "1536"},
                                         {"plan.micro_batch_size", "1"}});
}
Scenario llama3_405b() {  // 16384 H100, TP8 PP16 DP128, global batch 2048, seq 8192
  return shipped("llama3-405b-h100-16384", {{"plan.tensor_model_parallel_size", "8"},
                                            {"plan.pipeline_model_parallel_size", "16"},
                                            {"plan.global_batch_size", "2048"},
                                            {"plan.seq_length", "8192"}});
}
Scenario llama2_70b() { return shipped("llama2-70b-910b3-1024"); }  // 1024 910B3, TP8 PP4 VPP4 DP32

void sim_case(benchmark::State& state, Scenario (*make)(), ReplayMode mode, bool timeline) {
  const Scenario scenario = make();
  SimOptions options;
  options.mode = mode;
  options.record_timeline = timeline;
  double step = 0;
  std::size_t spans = 0;
  for (auto _ : state) {
    const SimResult r = simulate(scenario, options);
    // (DoNotOptimize on the const result: benchmark 1.7.1's non-const overload garbles doubles under GCC.)
    benchmark::DoNotOptimize(r.metrics.step_time_s);
    step = r.metrics.step_time_s;
    spans = r.timeline.spans.size();
  }
  state.SetLabel("step " + std::to_string(step) + " s");
  state.counters["spans"] = static_cast<double>(spans);
  state.counters["devices"] = mode == ReplayMode::full ? scenario.num_devices
                                                       : scenario.plan.pipeline_model_parallel_size;
}

void BM_sim_gpt3_175b_representative(benchmark::State& s) {
  sim_case(s, gpt3_175b, ReplayMode::representative, false);
}
void BM_sim_gpt3_175b_representative_timeline(benchmark::State& s) {
  sim_case(s, gpt3_175b, ReplayMode::representative, true);
}
void BM_sim_gpt3_175b_full_1024(benchmark::State& s) { sim_case(s, gpt3_175b, ReplayMode::full, false); }
void BM_sim_llama3_405b_representative(benchmark::State& s) {
  sim_case(s, llama3_405b, ReplayMode::representative, false);
}
void BM_sim_llama3_405b_representative_timeline(benchmark::State& s) {
  sim_case(s, llama3_405b, ReplayMode::representative, true);
}
void BM_sim_llama2_70b_representative(benchmark::State& s) {
  sim_case(s, llama2_70b, ReplayMode::representative, false);
}
void BM_sim_llama2_70b_representative_timeline(benchmark::State& s) {
  sim_case(s, llama2_70b, ReplayMode::representative, true);
}
void BM_sim_llama2_70b_full_1024(benchmark::State& s) { sim_case(s, llama2_70b, ReplayMode::full, false); }

// ---- Monte Carlo of steps under variability (issue 19) ----

// GPT-3 175B on 1024 A100 (as above) with 1% step jitter (the hardware file's) and a 3%
// fixed spread: each sample replays the graph built once. items_per_second = samples/s on one core.
Scenario gpt3_175b_variable() {
  Scenario s = gpt3_175b();
  s.variability.step_jitter_cv = 0.01;
  s.variability.device_speed_cv = 0.03;
  return s;
}
// LLaMA-3 405B on 131,072 H100: TP8 PP16 DP1024, 16 micro-batches per replica (the 16,384
// case's global batch x 8), seq 8192, with the same variability: every device replayed.
Scenario llama3_405b_131072_variable() {
  Scenario s = shipped("llama3-405b-h100-16384", {{"num_devices", "131072"},
                                                  {"plan.tensor_model_parallel_size", "8"},
                                                  {"plan.pipeline_model_parallel_size", "16"},
                                                  {"plan.global_batch_size", "16384"},
                                                  {"plan.seq_length", "8192"}});
  s.variability.step_jitter_cv = 0.01;
  s.variability.device_speed_cv = 0.03;
  return s;
}

void monte_carlo_case(benchmark::State& state, Scenario (*make)(), ReplayMode mode, int samples) {
  const Scenario scenario = make();
  MonteCarloOptions options;
  options.samples = samples;
  options.mode = mode;
  options.max_threads = 1;
  double mean = 0;
  for (auto _ : state) {
    const MonteCarloResult r = monte_carlo(scenario, options);
    benchmark::DoNotOptimize(r.mean_s);
    mean = r.mean_s;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * samples);
  state.SetLabel("mean step " + std::to_string(mean) + " s");
}

// One step of the full replay with every device's speed drawn (spread x jitter): simulate()
// from the scenario, graph and all, the cost of a step without the Monte Carlo's reuse.
void full_step_case(benchmark::State& state, Scenario (*make)()) {
  const Scenario scenario = make();
  SimOptions options;
  options.mode = ReplayMode::full;
  options.record_timeline = false;
  options.device_speed =
      step_device_speeds(scenario.variability, fixed_device_speeds(scenario.variability, scenario.num_devices), 0);
  double step = 0;
  for (auto _ : state) {
    const SimResult r = simulate(scenario, options);
    benchmark::DoNotOptimize(r.metrics.step_time_s);
    step = r.metrics.step_time_s;
  }
  state.SetLabel("step " + std::to_string(step) + " s");
}

void BM_monte_carlo_gpt3_175b_representative(benchmark::State& s) {
  monte_carlo_case(s, gpt3_175b_variable, ReplayMode::representative, 200);
}
void BM_monte_carlo_llama3_405b_full_131072(benchmark::State& s) {
  monte_carlo_case(s, llama3_405b_131072_variable, ReplayMode::full, 2);
}
void BM_sim_llama3_405b_full_131072_variability(benchmark::State& s) { full_step_case(s, llama3_405b_131072_variable); }

// ---- Analytical tier: workload + memory per candidate plan ----

// Every valid plan of a small grid around the scenario (TP x PP x VPP x micro batch x
// recompute), derived and checked once outside the timed loop.
std::vector<Scenario> plan_grid(const Scenario& base) {
  std::vector<Scenario> out;
  for (int tp : {1, 2, 4, 8})
    for (int pp : {1, 2, 4, 8, 16})
      for (int v : {1, 2, 4})
        for (int mbs : {1, 2, 4})
          for (auto rc : {RecomputeGranularity::none, RecomputeGranularity::selective, RecomputeGranularity::full}) {
            Scenario s = base;
            ParallelPlan& p = s.plan;
            p.tensor_model_parallel_size = tp;
            p.pipeline_model_parallel_size = pp;
            p.virtual_pipeline_model_parallel_size = v;
            p.schedule = v > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
            p.micro_batch_size = mbs;
            p.recompute_granularity = rc;
            p.layers_per_stage.clear();
            p.sequence_parallel = tp > 1;
            try {
              derive_plan(p, s.num_devices);
              if (check_plan(s.model, s.hardware, s.num_devices, p).empty()) out.push_back(std::move(s));
            } catch (const std::exception&) {
            }
          }
  return out;
}

void analytical_case(benchmark::State& state, Scenario (*make)()) {
  const std::vector<Scenario> plans = plan_grid(make());
  if (plans.empty()) {
    state.SkipWithError("no valid plan in the grid");
    return;
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const Scenario& s = plans[i];
    i = i + 1 == plans.size() ? 0 : i + 1;
    const Workload w = build_workload(s.model, s.plan);
    const MemoryReport m = estimate_memory(s, w);
    benchmark::DoNotOptimize(m.stages.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["plans_in_grid"] = static_cast<double>(plans.size());
}

void BM_analytical_llama2_70b_plans(benchmark::State& s) { analytical_case(s, llama2_70b); }
void BM_analytical_gpt3_175b_plans(benchmark::State& s) { analytical_case(s, gpt3_175b); }

// ---- Plan search ----

void search_case(benchmark::State& state, Scenario (*make)(), int replay_limit) {
  const Scenario scenario = make();
  SearchOptions options;
  options.devices = 1024;
  options.max_threads = 1;
  options.replay_limit = replay_limit;
  long long plans = 0;
  for (auto _ : state) {
    const SearchResult r = search_plans(scenario, options);
    plans += r.enumerated;
    benchmark::DoNotOptimize(r.best.data());
  }
  state.SetItemsProcessed(plans);
}

// Screening: every plan enumerated, checked and estimated, and one replayed (the fewest the
// search takes since its options are checked: replay_limit >= 1).
void BM_search_gpt3_175b_screen(benchmark::State& s) { search_case(s, gpt3_175b, 1); }
void BM_search_llama2_70b_screen(benchmark::State& s) { search_case(s, llama2_70b, 1); }
void BM_search_gpt3_175b_1024(benchmark::State& s) { search_case(s, gpt3_175b, 256); }
void BM_search_llama2_70b_1024(benchmark::State& s) { search_case(s, llama2_70b, 256); }

}  // namespace

BENCHMARK(BM_sim_gpt3_175b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sim_gpt3_175b_representative_timeline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sim_gpt3_175b_full_1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_sim_llama3_405b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sim_llama3_405b_representative_timeline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sim_llama2_70b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sim_llama2_70b_representative_timeline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sim_llama2_70b_full_1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_monte_carlo_gpt3_175b_representative)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_monte_carlo_llama3_405b_full_131072)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_sim_llama3_405b_full_131072_variability)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_analytical_llama2_70b_plans)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_analytical_gpt3_175b_plans)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_synthetic_gpt3_175b_graph)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_synthetic_gpt3_175b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_synthetic_gpt3_175b_full_1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_synthetic_llama3_405b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_synthetic_llama2_70b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_synthetic_llama2_70b_full_1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_search_gpt3_175b_screen)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_search_llama2_70b_screen)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_search_gpt3_175b_1024)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_search_llama2_70b_1024)->Unit(benchmark::kMillisecond)->Iterations(1);
// A long-running process (a sweep) reuses freed memory; keep glibc from returning every
// large block to the kernel so each iteration does not pay fresh page faults.
int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
