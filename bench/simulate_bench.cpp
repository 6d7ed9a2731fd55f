// Speed of the simulator (Google Benchmark). Cases are filled in by the engine work.
#include <benchmark/benchmark.h>

static void BM_placeholder(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(state.iterations());
}
BENCHMARK(BM_placeholder);
BENCHMARK_MAIN();
