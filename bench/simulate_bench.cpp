// Speed of the simulator (Google Benchmark; -DTRAINSIM_BUILD_BENCH=ON). The task graph and
// the replay on synthetic costs shaped like the cases; the full-scenario cases
// (workload + cost model + memory) join when those modules land.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"

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

void BM_gpt3_175b_graph(benchmark::State& s) { graph_only(s, kGpt3); }
void BM_gpt3_175b_representative(benchmark::State& s) { replay_case(s, kGpt3, false); }
void BM_gpt3_175b_full_1024(benchmark::State& s) { replay_case(s, kGpt3, true); }
void BM_llama3_405b_representative(benchmark::State& s) { replay_case(s, kLlama405, false); }
void BM_llama2_70b_representative(benchmark::State& s) { replay_case(s, kLlama70, false); }
void BM_llama2_70b_full_1024(benchmark::State& s) { replay_case(s, kLlama70, true); }

}  // namespace

BENCHMARK(BM_gpt3_175b_graph)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gpt3_175b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gpt3_175b_full_1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_llama3_405b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_llama2_70b_representative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_llama2_70b_full_1024)->Unit(benchmark::kMillisecond)->Iterations(3);
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
