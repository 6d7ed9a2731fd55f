#include "trainsim/explore/choose.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "trainsim/common/error.hpp"

using namespace trainsim;

namespace {
const std::string kRoot = TRAINSIM_SOURCE_DIR;
// LLaMA-2 7B with a small global batch: a few hundred plans per hardware, fast.
Scenario small_case(const std::vector<Override>& extra = {}) {
  // Megatron-Core, which runs on every file here (the scenario's MindSpeed runs on Ascend only).
  std::vector<Override> overrides{{"plan.global_batch_size", "16"}, {"plan.framework", "megatron-core"}};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return load_scenario(kRoot + "/scenarios/default.yaml", overrides);
}
HardwareSpec hardware(const std::string& name) { return load_hardware(kRoot + "/hardware/" + name + ".yaml"); }
HardwareSpec tiny_hbm() { return load_hardware(kRoot + "/tests/explore/data/tiny-hbm.yaml"); }

// The row is what the plan search finds best for `searched` (its hardware and framework).
void check_row_is_search_best(const HardwareChoiceRow& row, const Scenario& searched) {
  SearchOptions search;
  search.top = 1;
  const auto found = search_plans(searched, search);
  REQUIRE(found.best.size() == 1);
  CHECK(describe_plan(row.best.plan) == describe_plan(found.best[0].plan));
  CHECK(row.best.outcome.step_time_s == found.best[0].outcome.step_time_s);
  CHECK(row.enumerated == found.enumerated);
  CHECK(row.fit == found.fit);
}
}  // namespace

TEST_CASE("choose: time = tokens / tokens_per_s, cost = device-hours x price, energy = devices x power x hours x PUE",
          "[explore][choose]") {
  const Scenario s = small_case();
  HardwareChoiceOptions options;
  options.tokens = 3e9;
  options.pue = 1.3;
  const auto r = choose_hardware(s, {hardware("a100-80gb"), hardware("h100-80gb")}, options);
  CHECK(r.devices == 8);  // the scenario's
  CHECK(r.global_batch_size == 16);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].hardware_name == "a100-80gb");
  CHECK(r.rows[1].hardware_name == "h100-80gb");
  for (const auto& row : r.rows) {
    REQUIRE(row.fits);
    CHECK(row.reason.empty());
    const double tps = row.best.outcome.tokens_per_s;
    REQUIRE(tps > 0);
    CHECK(row.time_to_train_s == 3e9 / (tps * row.goodput.goodput));  // goodput < 1: failures, restarts, checkpoints
    CHECK(row.goodput.goodput < 1);
    const double hours = row.time_to_train_s / 3600;
    CHECK(row.device_hours == Approx(8 * hours).epsilon(1e-12));
    CHECK(row.cost == row.device_hours * row.price_per_hour);
    CHECK(row.energy_mwh == Approx(8 * row.power_w * hours * 1.3 / 1e6).epsilon(1e-12));
  }
  // The prices and powers are the hardware files' own.
  CHECK(r.rows[0].price_per_hour == 2.0);
  CHECK(r.rows[0].power_w == 400.0);
  CHECK(r.rows[1].price_per_hour == 3.0);
  CHECK(r.rows[1].power_w == 700.0);
}

TEST_CASE("choose: each row's plan is the plan search's best on that hardware", "[explore][choose]") {
  Scenario s = small_case();
  const auto r = choose_hardware(s, {hardware("h100-80gb")});
  REQUIRE(r.rows.size() == 1);
  s.hardware = hardware("h100-80gb");
  check_row_is_search_best(r.rows[0], s);
}

TEST_CASE("choose: the same hardware twice gives identical rows and the first listed wins the tie",
          "[explore][choose]") {
  const auto r = choose_hardware(small_case(), {hardware("a100-80gb"), hardware("a100-80gb")});
  REQUIRE(r.rows.size() == 2);
  const auto& a = r.rows[0];
  const auto& b = r.rows[1];
  CHECK(describe_plan(a.best.plan) == describe_plan(b.best.plan));
  CHECK(a.best.outcome.step_time_s == b.best.outcome.step_time_s);
  CHECK(a.best.outcome.tokens_per_s == b.best.outcome.tokens_per_s);
  CHECK(a.cost == b.cost);
  CHECK(a.energy_mwh == b.energy_mwh);
  CHECK(r.winner == 0);
}

TEST_CASE("choose: the winner has the best objective among the rows", "[explore][choose]") {
  const Scenario s = small_case();
  const std::vector<HardwareSpec> hw{hardware("ascend-910b3"), hardware("a100-80gb"), hardware("h100-80gb")};
  HardwareChoiceOptions options;
  for (auto objective : {SearchObjective::throughput, SearchObjective::time_to_train, SearchObjective::cost}) {
    options.objective = objective;
    const auto r = choose_hardware(s, hw, options);
    REQUIRE(r.winner >= 0);
    const auto& win = r.rows[static_cast<std::size_t>(r.winner)];
    for (const auto& row : r.rows) {
      REQUIRE(row.fits);
      if (objective == SearchObjective::cost) {
        CHECK(win.cost <= row.cost);
      } else {
        CHECK(win.best.outcome.tokens_per_s >= row.best.outcome.tokens_per_s);
        CHECK(win.time_to_train_s <= row.time_to_train_s);
      }
    }
    CHECK_THAT(format_hardware_choice(r),
               Catch::Contains("best on " + std::string(to_string(objective)) + ": " + win.hardware_name));
  }
}

TEST_CASE("choose: a hardware on which nothing fits is a row with the reason, not an error", "[explore][choose]") {
  const auto r = choose_hardware(small_case(), {tiny_hbm(), hardware("a100-80gb")});
  REQUIRE(r.rows.size() == 2);
  const auto& tiny = r.rows[0];
  CHECK_FALSE(tiny.fits);
  CHECK(tiny.enumerated > 0);
  CHECK(tiny.fit == 0);
  CHECK_THAT(tiny.reason, Catch::StartsWith("no plan fits in memory: the smallest of"));
  CHECK_THAT(tiny.reason, Catch::Contains("GiB of 4.0 GiB"));
  CHECK(tiny.time_to_train_s == 0);
  CHECK(tiny.cost == 0);
  CHECK(r.rows[1].fits);
  CHECK(r.winner == 1);
  CHECK_THAT(format_hardware_choice(r), Catch::Contains("tiny-hbm") && Catch::Contains(tiny.reason));

  // Nothing fits anywhere: no winner, still no exception.
  const auto none = choose_hardware(small_case(), {tiny_hbm()});
  CHECK(none.winner == -1);
  CHECK_THAT(format_hardware_choice(none), Catch::Contains("no winner"));
}

TEST_CASE("choose: a plan rule that rejects every plan on a hardware is the row's reason", "[explore][choose]") {
  // FP8 training: the A100 has no FP8 units, the H100 has. (The scenario itself must load,
  // so its own hardware becomes the H100.)
  const Scenario fp8 = small_case({{"plan.precision", "fp8"}, {"hardware", kRoot + "/hardware/h100-80gb.yaml"}});
  const auto r = choose_hardware(fp8, {hardware("a100-80gb"), hardware("h100-80gb")});
  REQUIRE(r.rows.size() == 2);
  CHECK_FALSE(r.rows[0].fits);
  CHECK(r.rows[0].valid == 0);
  CHECK_THAT(r.rows[0].reason, Catch::StartsWith("no valid plan") && Catch::Contains("no FP8 units"));
  CHECK(r.rows[1].fits);
  CHECK(r.winner == 1);
}

TEST_CASE("choose on cost: an unknown price (0) is reported as unknown and never wins", "[explore][choose]") {
  HardwareSpec unpriced = hardware("h100-80gb");  // faster than the A100 on this job
  unpriced.device.price_per_hour = 0;
  HardwareChoiceOptions options;
  options.objective = SearchObjective::cost;
  const auto r = choose_hardware(small_case(), {unpriced, hardware("a100-80gb")}, options);
  REQUIRE(r.rows.size() == 2);
  REQUIRE(r.rows[0].fits);
  CHECK(r.rows[0].cost == 0);
  CHECK(r.rows[0].device_hours > 0);
  CHECK(r.winner == 1);
  const std::string text = format_hardware_choice(r);
  CHECK_THAT(text, Catch::Contains("unknown"));
  CHECK_THAT(text, Catch::Contains("h100-80gb: price unknown"));
  // On throughput the unpriced hardware can still win.
  options.objective = SearchObjective::throughput;
  CHECK(choose_hardware(small_case(), {unpriced, hardware("a100-80gb")}, options).winner == 0);
  // Every price unknown: no winner on cost.
  options.objective = SearchObjective::cost;
  CHECK(choose_hardware(small_case(), {unpriced}, options).winner == -1);
}

TEST_CASE("choose: --devices changes the device count of every search", "[explore][choose]") {
  HardwareChoiceOptions options;
  options.devices = 16;
  const auto r = choose_hardware(small_case(), {hardware("a100-80gb")}, options);
  CHECK(r.devices == 16);
  REQUIRE(r.rows[0].fits);
  const auto& p = r.rows[0].best.plan;
  CHECK(p.tensor_model_parallel_size * p.pipeline_model_parallel_size * p.context_parallel_size *
            p.data_parallel_size ==
        16);
  CHECK(r.rows[0].device_hours == Approx(16 * r.rows[0].time_to_train_s / 3600).epsilon(1e-12));
}

TEST_CASE("choose rejects an empty hardware list, a non-positive token budget and a PUE below 1", "[explore][choose]") {
  const Scenario s = small_case();
  CHECK_THROWS_AS(choose_hardware(s, {}), ConfigError);
  HardwareChoiceOptions options;
  options.tokens = 0;
  CHECK_THROWS_WITH(choose_hardware(s, {hardware("a100-80gb")}, options), Catch::Contains("--tokens"));
  options.tokens = 1e9;
  options.pue = 0.9;
  CHECK_THROWS_WITH(choose_hardware(s, {hardware("a100-80gb")}, options), Catch::Contains("--pue"));
}

TEST_CASE("load_hardware_list loads each file and names a missing one", "[explore][choose]") {
  const auto list = load_hardware_list(kRoot + "/hardware/a100-80gb.yaml," + kRoot + "/hardware/h100-80gb.yaml");
  REQUIRE(list.size() == 2);
  CHECK(list[0].name == "a100-80gb");
  CHECK(list[1].name == "h100-80gb");
  CHECK_THROWS_WITH(load_hardware_list(kRoot + "/hardware/a100-80gb.yaml," + kRoot + "/hardware/no-such.yaml"),
                    Catch::Contains("no-such.yaml: cannot open file"));
  CHECK_THROWS_WITH(load_hardware_list(kRoot + "/hardware/a100-80gb.yaml,"), Catch::Contains("--hardware"));
  // A hardware file is validated like any input: the error names the file and the key.
  CHECK_THROWS_WITH(load_hardware_list(kRoot + "/tests/config/data/bad_hardware.yaml"),
                    Catch::Contains("bad_hardware.yaml") && Catch::Contains("peak_flops_bf16"));
}

TEST_CASE("hardware_choice_json: versioned, one entry per row, reasons and winner kept", "[explore][choose]") {
  HardwareChoiceOptions options;
  options.pue = 1.2;
  const auto r = choose_hardware(small_case(), {tiny_hbm(), hardware("h100-80gb")}, options);
  const auto j = nlohmann::json::parse(hardware_choice_json(r));
  CHECK(j["schema_version"] == kHardwareChoiceSchemaVersion);
  CHECK(j["devices"] == 8);
  CHECK(j["pue"] == 1.2);
  CHECK(j["winner"] == "h100-80gb");
  CHECK(j["winner_index"] == 1);
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["status"] == "no plan fits");
  CHECK(j["rows"][0]["reason"] == r.rows[0].reason);
  CHECK(j["rows"][0]["plan"].is_null());
  const auto& ok = j["rows"][1];
  CHECK(ok["status"] == "ok");
  CHECK(ok["plan"] == describe_plan(r.rows[1].best.plan));
  CHECK(ok["tokens_per_s"].get<double>() == r.rows[1].best.outcome.tokens_per_s);
  CHECK(ok["cost"].get<double>() == r.rows[1].cost);
  CHECK(ok["energy_mwh"].get<double>() == r.rows[1].energy_mwh);
  CHECK(ok["device_hours"].get<double>() == r.rows[1].device_hours);
  CHECK(ok["price_per_hour"] == 3.0);
}

TEST_CASE("check_choice_options: a PUE or token budget that is not a finite number in range is bad input",
          "[explore][choose]") {
  CHECK(check_choice_options(HardwareChoiceOptions{}).empty());
  HardwareChoiceOptions o;
  o.tokens = std::nan("");
  o.pue = HUGE_VAL;
  std::vector<std::string> lines;
  for (const auto& d : check_choice_options(o)) lines.push_back(d.str());
  CHECK(lines == std::vector<std::string>{
                     "--tokens: nan is not a token budget; valid: a finite number > 0 and <= 1e18, e.g. 1e12",
                     "--pue: inf is out of range; valid: a number from 1 (board power only) to 3 (facility power / IT "
                     "power), e.g. 1.2"});
  for (const double pue : {0.99, 3.01, -HUGE_VAL}) {
    HardwareChoiceOptions p;
    p.pue = pue;
    INFO(pue);
    CHECK(check_choice_options(p).size() == 1);
  }
}

TEST_CASE("choose: an Ascend-only framework's rows on other hardware are what it patches, searched as such",
          "[explore][choose]") {
  // The default scenario as it is: MindSpeed on 910B3.
  const Scenario s = load_scenario(kRoot + "/scenarios/default.yaml", {{"plan.global_batch_size", "16"}});
  REQUIRE(s.plan.framework == Framework::mindspeed);
  const auto r = choose_hardware(s, {hardware("ascend-910b3"), hardware("a100-80gb")});
  REQUIRE(r.rows.size() == 2);
  CHECK(r.framework == Framework::mindspeed);
  CHECK(r.rows[0].framework == Framework::mindspeed);
  CHECK(r.rows[1].framework == Framework::megatron_core);
  REQUIRE(r.rows[1].fits);
  Scenario on_a100 = s;
  on_a100.hardware = hardware("a100-80gb");
  on_a100.plan.framework = Framework::megatron_core;
  check_row_is_search_best(r.rows[1], on_a100);
  CHECK_THAT(format_hardware_choice(r),
             Catch::Contains("note: mindspeed runs on Ascend NPUs only; on a100-80gb the plans are megatron-core's"));
  // Searched as MindSpeed there, every plan is refused.
  on_a100.plan.framework = Framework::mindspeed;
  const auto refused = search_plans(on_a100, SearchOptions{});
  CHECK(refused.valid == 0);
  CHECK(refused.best.empty());
}
