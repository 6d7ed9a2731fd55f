// plan_overrides and scenario_yaml_with: a plan written as a scenario loads back as the same
// plan, from any directory (search --emit-scenarios, issue 20).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

// Writes `text` into a fresh directory outside the source tree and loads it.
Scenario load_written(const std::string& text, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim-writer-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "scenario.yaml";
  std::ofstream(file) << text;
  Scenario s = load_scenario(file.string());
  fs::remove_all(dir);
  return s;
}

}  // namespace

TEST_CASE("every shipped scenario's plan, written as scenario keys, loads back as the same plan", "[config]") {
  for (const auto& entry : fs::directory_iterator(kRoot + "/scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    const Scenario s = load_scenario(entry.path().string());
    const Scenario again = load_written(scenario_yaml_with(entry.path().string(), plan_overrides(s.plan), "copy"),
                                        entry.path().stem().string());
    CHECK(again.plan == s.plan);
    CHECK(again.num_devices == s.num_devices);
    CHECK(again.model.name == s.model.name);
  }
}

TEST_CASE("a plan with no key at its default round-trips through plan_overrides", "[config]") {
  // Every plan key away from its default (a valid plan for LLaMA-2 7B on 16 x 910B3), so a key
  // plan_overrides forgets shows up as a difference.
  const std::string base = kRoot + "/scenarios/default.yaml";
  ParallelPlan p = load_scenario(base).plan;
  p.framework = Framework::mindspeed;  // not the default, and with TP overlap (its CoC)
  p.tensor_model_parallel_size = 2;
  p.pipeline_model_parallel_size = 2;
  p.virtual_pipeline_model_parallel_size = 2;
  p.schedule = PipelineSchedule::interleaved;
  p.sequence_parallel = true;
  p.micro_batch_size = 2;
  p.global_batch_size = 64;
  p.seq_length = 2048;
  p.recompute_granularity = RecomputeGranularity::full;
  p.recompute_method = RecomputeMethod::block;
  p.recompute_num_layers = 3;
  p.use_distributed_optimizer = false;
  p.precision = Precision::fp16;
  p.use_flash_attn = false;
  p.attention_kernel = AttentionKernel::eager;  // the one kernel 910B3 has besides auto
  p.overlap_grad_reduce = false;
  p.overlap_param_gather = false;
  p.tp_comm_overlap = true;
  p.collective_algorithm = "ring";
  p.collective_pipeline_tiers = true;
  p.collective_split_intra = true;
  p.grad_bucket_bytes = 64 << 20;
  p.rank_order = "tp-dp-cp-ep-pp";
  // An explicit split excludes virtual stages: the split is checked on a second plan.
  ParallelPlan split = p;
  split.virtual_pipeline_model_parallel_size = 1;
  split.schedule = PipelineSchedule::zero_bubble_h1;
  split.layers_per_stage = {18, 14};
  for (const ParallelPlan& plan : {p, split}) {
    std::vector<Override> overrides = plan_overrides(plan);
    overrides.push_back({"num_devices", "16"});
    const Scenario s = load_written(scenario_yaml_with(base, overrides, "every key"), "every-key");
    ParallelPlan expected = plan;
    expected.data_parallel_size = 4;  // derived: 16 / (2 x 2)
    CHECK(s.plan == expected);
  }
}

TEST_CASE("a written scenario names the hardware overrides it cannot hold instead of dropping them", "[config]") {
  const std::string base = kRoot + "/scenarios/default.yaml";
  const std::string text = scenario_yaml_with(
      base, {{"plan.micro_batch_size", "2"}, {"hardware.device.hbm_bandwidth", "1TB/s"}}, "copy");
  CHECK(text.find("micro_batch_size: 2") != std::string::npos);
  CHECK(text.find("# computed with keys of the model/hardware files this names, which a scenario cannot hold; pass "
                  "them again: --set hardware.device.hbm_bandwidth=1TB/s\n") != std::string::npos);
  // The copy itself still loads: the override is a comment, not a key.
  CHECK(load_written(text, "hardware-override").plan.micro_batch_size == 2);
}

TEST_CASE("search's top plans written as scenarios reproduce the search's step times exactly", "[config][explore]") {
  const std::string base = kRoot + "/scenarios/default.yaml";
  const Scenario s = load_scenario(base);
  SearchOptions options;
  options.top = 2;
  options.max_threads = 1;
  const SearchResult result = search_plans(s, options);
  REQUIRE(result.best.size() == 2);
  for (std::size_t i = 0; i < result.best.size(); ++i) {
    auto overrides = plan_overrides(result.best[i].plan);
    overrides.push_back({"num_devices", std::to_string(result.devices)});
    const Scenario written = load_written(scenario_yaml_with(base, overrides, "#" + std::to_string(i + 1)),
                                          "search-" + std::to_string(i));
    CHECK(simulate(written).metrics.step_time_s == result.best[i].outcome.step_time_s);
  }
}
