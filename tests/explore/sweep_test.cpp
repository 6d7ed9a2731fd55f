#include "trainsim/explore/sweep.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "trainsim/common/error.hpp"

using namespace trainsim;

namespace {

const std::string kDefault = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml";

bool is_sorted_by_throughput_then_failures(const SweepResult& r) {
  for (std::size_t i = 1; i < r.rows.size(); ++i) {
    const auto& a = r.rows[i - 1].outcome;
    const auto& b = r.rows[i].outcome;
    if (a.status != PlanStatus::ok && b.status == PlanStatus::ok) return false;
    if (a.status == PlanStatus::ok && b.status == PlanStatus::ok && a.tokens_per_s < b.tokens_per_s) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("parse_grid_axis splits KEY=V1,V2 and rejects unknown keys with a suggestion", "[explore]") {
  const GridAxis axis = parse_grid_axis("plan.micro_batch_size=1,2,4");
  CHECK(axis.key_path == "plan.micro_batch_size");
  CHECK(axis.values == std::vector<std::string>{"1", "2", "4"});
  CHECK_THROWS_WITH(parse_grid_axis("plan.micro_batch_sise=1"), Catch::Contains("did you mean 'plan.micro_batch_size'"));
  CHECK_THROWS_AS(parse_grid_axis("plan.micro_batch_size=1,,2"), ConfigError);
  CHECK_THROWS_AS(parse_grid_axis("plan.micro_batch_size"), ConfigError);
  CHECK_THROWS_WITH(parse_grid_axis("plan.micro_batch_size=1,2,1"), Catch::Contains("value '1' is listed twice"));
  CHECK_THROWS_WITH(parse_grid_axis("nosuch=1"), Catch::Contains("valid: a scenario key"));
}

TEST_CASE("parse_grid_axis checks each value as its key's type and range before any replay", "[explore]") {
  // A typo is bad input (exit 2), not a row of the answer; a plan the value makes impossible
  // (TP not dividing the heads) stays a row.
  CHECK_THROWS_WITH(parse_grid_axis("plan.micro_batch_size=1,x"),
                    Catch::Contains("--grid: plan.micro_batch_size: expected an integer, got 'x'"));
  CHECK_THROWS_WITH(parse_grid_axis("plan.micro_batch_size=0"), Catch::Contains("0 is out of range"));
  CHECK_THROWS_WITH(parse_grid_axis("plan.schedule=1f1b,interleavd"), Catch::Contains("did you mean 'interleaved'"));
  CHECK_THROWS_WITH(parse_grid_axis("hardware.cluster.nic_bandwidth=5"), Catch::Contains("missing unit"));
  CHECK_THROWS_WITH(parse_grid_axis("model.hidden_size=abc"), Catch::Contains("model.hidden_size: expected an integer"));
  CHECK(parse_grid_axis("plan.tensor_model_parallel_size=3,7").values.size() == 2);
  CHECK(parse_grid_axis("hardware.cluster.nic_bandwidth=100Gb/s,400Gb/s").values.size() == 2);
}

TEST_CASE("sweep has one row per combination: the product of the axis sizes, each combination once", "[explore]") {
  const auto r = sweep(kDefault, {parse_grid_axis("plan.micro_batch_size=1,2,4"),
                                  parse_grid_axis("plan.tensor_model_parallel_size=1,2")});
  REQUIRE(r.rows.size() == 6);
  std::set<std::pair<std::string, std::string>> combos;
  for (const auto& row : r.rows) {
    REQUIRE(row.overrides.size() == 2);
    combos.insert({row.overrides[0].value, row.overrides[1].value});
  }
  CHECK(combos.size() == 6);
  CHECK(is_sorted_by_throughput_then_failures(r));
}

TEST_CASE("sweep keeps invalid and out-of-memory combinations as rows with the reason, after simulated rows",
          "[explore]") {
  // TP 3 does not divide LLaMA-2 7B's 32 heads; micro batch 8 x 4096 tokens does not fit 64 GB.
  const auto r = sweep(kDefault, {parse_grid_axis("plan.tensor_model_parallel_size=1,3"),
                                  parse_grid_axis("plan.micro_batch_size=1,8")});
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[0].outcome.status == PlanStatus::ok);
  CHECK(r.rows[0].outcome.tokens_per_s > 0);
  CHECK(r.rows[1].outcome.status == PlanStatus::out_of_memory);
  CHECK_THAT(r.rows[1].outcome.reason, Catch::Contains("GiB"));
  CHECK(r.rows[1].outcome.peak_memory_bytes > r.rows[1].outcome.hbm_bytes);
  for (std::size_t i : {2u, 3u}) {
    CHECK(r.rows[i].outcome.status == PlanStatus::invalid);
    CHECK(r.rows[i].overrides[0].value == "3");
    CHECK_THAT(r.rows[i].outcome.reason, Catch::Contains("does not divide num_attention_heads"));
    CHECK(r.rows[i].outcome.reason.find('\n') == std::string::npos);
  }
  CHECK(is_sorted_by_throughput_then_failures(r));
  CHECK_THAT(sweep_csv(r), Catch::Contains("invalid,") && Catch::Contains("out of memory,"));
}

TEST_CASE("sweep is deterministic: parallel and one-thread runs give the same rows in the same order", "[explore]") {
  const std::vector<GridAxis> grid = {parse_grid_axis("plan.micro_batch_size=1,2"),
                                      parse_grid_axis("plan.pipeline_model_parallel_size=1,2,3")};
  std::atomic<std::size_t> calls{0};
  std::size_t last_total = 0;
  SweepOptions options;
  options.progress = [&](std::size_t, std::size_t total) {
    ++calls;
    last_total = total;
  };
  const auto a = sweep(kDefault, grid, options);
  SweepOptions one_thread;
  one_thread.max_threads = 1;
  const auto b = sweep(kDefault, grid, one_thread);
  CHECK(calls == 6);
  CHECK(last_total == 6);
  CHECK(sweep_json(a) == sweep_json(b));
  CHECK(sweep_csv(a) == sweep_csv(b));
  // One line per row plus the header.
  const std::string csv = sweep_csv(a);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);
}

TEST_CASE("sweep rejects an empty grid, a repeated key and a base scenario that does not load", "[explore]") {
  CHECK_THROWS_AS(sweep(kDefault, {}), ConfigError);
  const auto axis = parse_grid_axis("plan.micro_batch_size=1");
  CHECK_THROWS_WITH(sweep(kDefault, {axis, axis}), Catch::Contains("twice"));
  SweepOptions bad;
  bad.base_overrides = {Override{"plan.tensor_model_parallel_size", "5"}};
  CHECK_THROWS_AS(sweep(kDefault, {axis}, bad), ConfigError);
  CHECK_THROWS_AS(sweep(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/no-such.yaml", {axis}), ConfigError);
}

TEST_CASE("sweep accepts an invalid base when the grid sets the key at fault", "[explore]") {
  SweepOptions bad;
  bad.base_overrides = {Override{"plan.tensor_model_parallel_size", "5"}};
  const auto r = sweep(kDefault, {parse_grid_axis("plan.tensor_model_parallel_size=1,2")}, bad);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].outcome.status == PlanStatus::ok);
  CHECK(r.rows[1].outcome.status == PlanStatus::ok);
}

TEST_CASE("a sweep row that did not run has no step time in JSON or CSV: null and empty, not 0", "[explore]") {
  const auto r = sweep(kDefault, {parse_grid_axis("plan.tensor_model_parallel_size=1,3"),
                                  parse_grid_axis("plan.micro_batch_size=1,8")});
  REQUIRE(r.rows.size() == 4);
  const auto j = nlohmann::json::parse(sweep_json(r));
  const auto& ok = j["rows"][0];
  const auto& oom = j["rows"][1];
  const auto& invalid = j["rows"][2];
  CHECK(ok["step_time_s"].get<double>() > 0);
  for (const char* key : {"step_time_s", "tokens_per_s", "tokens_per_s_per_device", "mfu", "bubble_fraction"}) {
    INFO(key);
    CHECK(oom[key].is_null());
    CHECK(invalid[key].is_null());
  }
  CHECK(oom["peak_memory_gib"].get<double>() > 64.0);  // what it would need: known
  CHECK(invalid["peak_memory_gib"].is_null());
  // CSV: status,reason,step_time_s,... ; the out-of-memory row's metric fields are empty but peak memory.
  const std::string csv = sweep_csv(r);
  const auto line_start = csv.find("out of memory,");
  REQUIRE(line_start != std::string::npos);
  const std::string line = csv.substr(line_start, csv.find('\n', line_start) - line_start);
  CHECK(line.back() == ',');  // bubble fraction empty
  CHECK(line.find(",,,,") != std::string::npos);  // step time, tokens/s, per device, MFU empty
}
