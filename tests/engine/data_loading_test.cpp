// Data loading (scenario key data.*): inside the training loop it sits on the critical
// path before every consuming forward; background loaders only cost what they cannot
// finish within the step.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

// LLaMA-2 7B on 8 x 910B3, TP1 PP1 DP8, 16 micro-batches of 1 sequence (4096 tokens). The
// distributed optimizer's gather after the step, not under the first forward (which the first
// micro-batch's load would hide, as a loop with background workers cannot): the step's change
// is then the loading's alone.
Scenario flat(std::vector<Override> extra) {
  std::vector<Override> o = {{"plan.pipeline_model_parallel_size", "1"},
                             {"plan.global_batch_size", "128"},
                             {"plan.overlap_param_gather", "false"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return load_scenario(kRoot + "/scenarios/default.yaml", o);
}

double step_s(const Scenario& s) { return simulate(s).metrics.step_time_s; }

std::string seconds(double s) {
  std::ostringstream out;
  out.precision(17);
  out << s << "s";
  return out.str();
}

}  // namespace

TEST_CASE("Loading inside the loop adds micro-batches x (read + copy) to a PP-1 step", "[engine][data]") {
  const Scenario base = flat({});
  const Scenario loading = flat({{"data.sample_load_time", "25ms"}, {"data.loader_workers", "0"}});
  const int m = loading.plan.num_microbatches();
  REQUIRE(m == 16);
  const double copy = 28.0 * 4096 / loading.hardware.cluster.host_link_bandwidth;
  const double expected = m * (0.025 + copy);
  // Within the base step's host-stream waits: the replay's host issues ahead during the loads
  // (loading on the host does not yet occupy the host stream), hiding some of them.
  const double base_host = simulate(base).metrics.stages.front().host_s;
  CHECK(step_s(loading) - step_s(base) == Approx(expected).epsilon(1e-6).margin(base_host));
  CHECK(step_s(loading) - step_s(base) <= expected * (1 + 1e-6));
  const SimResult result = simulate(loading);  // kept: the stage below refers into it
  const auto& stage = result.metrics.stages.front();
  CHECK(stage.data_s == Approx(expected).epsilon(1e-6));
}

TEST_CASE("Background loaders faster than the step cost nothing", "[engine][data]") {
  const Scenario base = flat({});
  const Scenario loading = flat({{"data.sample_load_time", "100ms"}, {"data.loader_workers", "2"}});
  REQUIRE(background_load_s(loading) == Approx(16 * 0.1 / 2));
  CHECK(background_load_s(loading) < step_s(base));
  CHECK(step_s(loading) == step_s(base));
}

TEST_CASE("Background loaders slower than the step make the step last as long as they do", "[engine][data]") {
  const Scenario base = flat({});
  const double base_s = step_s(base);
  // 16 sequences x t / 2 workers = 2 x the step without loading.
  const double t = 2 * base_s * 2 / 16;
  const Scenario loading = flat({{"data.sample_load_time", seconds(t)}, {"data.loader_workers", "2"}});
  REQUIRE(background_load_s(loading) == Approx(2 * base_s).epsilon(1e-9));
  const SimResult r = simulate(loading);
  CHECK(r.metrics.step_time_s == Approx(2 * base_s).epsilon(1e-6));
  CHECK(r.metrics.stages.front().data_s == Approx(base_s).epsilon(1e-6));
  // More workers share the work: four load it in the step's own time.
  const Scenario more = flat({{"data.sample_load_time", seconds(t)}, {"data.loader_workers", "4"}});
  CHECK(step_s(more) == Approx(base_s).epsilon(1e-6));
}

TEST_CASE("With PP the first and the last stage load, the middle stages do not", "[engine][data]") {
  const Scenario s = load_scenario(kRoot + "/scenarios/default.yaml",
                                   {{"plan.pipeline_model_parallel_size", "4"},
                                    {"plan.global_batch_size", "64"},
                                    {"data.sample_load_time", "10ms"},
                                    {"data.loader_workers", "0"}});
  const SimResult result = simulate(s);  // kept: `stages` refers into it
  const auto& stages = result.metrics.stages;
  REQUIRE(stages.size() == 4);
  const double per_step = s.plan.num_microbatches() * (0.010 + 28.0 * 4096 / s.hardware.cluster.host_link_bandwidth);
  CHECK(stages[0].data_s == Approx(per_step).epsilon(1e-6));
  CHECK(stages[1].data_s == 0);
  CHECK(stages[2].data_s == 0);
  CHECK(stages[3].data_s == Approx(per_step).epsilon(1e-6));
}
