#include "trainsim/explore/compare.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/common/error.hpp"

using namespace trainsim;

namespace {
Scenario load_default() { return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml"); }
}  // namespace

TEST_CASE("parse_schedule_list reads names and interleaved:V, rejects the rest", "[explore]") {
  const auto c = parse_schedule_list("gpipe,1f1b,interleaved:2,interleaved:4,zb-h1");
  REQUIRE(c.size() == 5);
  CHECK(c[0].schedule == PipelineSchedule::gpipe);
  CHECK(c[1].schedule == PipelineSchedule::one_f_one_b);
  CHECK(c[2].schedule == PipelineSchedule::interleaved);
  CHECK(c[2].virtual_stages == 2);
  CHECK(c[3].virtual_stages == 4);
  CHECK(c[4].schedule == PipelineSchedule::zero_bubble_h1);
  CHECK(c[3].label == "interleaved:4");
  CHECK_THROWS_WITH(parse_schedule_list("1f1b,pipedream"), Catch::Contains("unknown schedule 'pipedream'"));
  CHECK_THROWS_AS(parse_schedule_list("interleaved:1"), ConfigError);
  CHECK_THROWS_AS(parse_schedule_list("interleaved:x"), ConfigError);
  // A number past any pipeline's virtual stages is named as that, not as "not an integer >= 2".
  CHECK_THROWS_WITH(parse_schedule_list("interleaved:99999999999999"), Catch::Contains("past any pipeline"));
  CHECK_THROWS_WITH(parse_schedule_list("interleaved:9x9999999999999"), Catch::Contains("an integer >= 2"));
  CHECK_THROWS_AS(parse_schedule_list("1f1b:2"), ConfigError);
  CHECK_THROWS_AS(parse_schedule_list("1f1b,"), ConfigError);
  // A choice listed twice would be compared with itself.
  CHECK_THROWS_WITH(parse_schedule_list("1f1b,zb-h1,1f1b"), Catch::Contains("'1f1b' is listed twice"));
  CHECK_THROWS_WITH(parse_schedule_list("interleaved:2,interleaved:2"), Catch::Contains("listed twice"));
  CHECK(parse_schedule_list("interleaved:2,interleaved:3").size() == 2);
}

TEST_CASE("compare: vocab-1, vocab-2 and interlaced are 1F1B with plan.vocab_parallel, every other choice without",
          "[explore][vocab]") {
  const auto c = parse_schedule_list("1f1b,vocab-1,vocab-2,interlaced");
  REQUIRE(c.size() == 4);
  CHECK(c[0].vocab_parallel == VocabParallel::none);
  CHECK(c[1].schedule == PipelineSchedule::one_f_one_b);
  CHECK(c[1].vocab_parallel == VocabParallel::vocab_1);
  CHECK(c[2].vocab_parallel == VocabParallel::vocab_2);
  CHECK(c[3].vocab_parallel == VocabParallel::interlaced);
  CHECK_THROWS_AS(parse_schedule_list("vocab-2:2"), ConfigError);
  CHECK_THROWS_WITH(parse_schedule_list("vocab-2,vocab-2"), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(parse_schedule_list("vocab-3"), Catch::Contains("vocab-1, vocab-2, interlaced"));

  Scenario s = load_default();  // LLaMA-2 7B, PP 2: the head on the last stage unbalances 1F1B
  s.plan.framework = Framework::megatron_core;  // the split is the Megatron-Core fork's
  s.plan.vocab_parallel = VocabParallel::vocab_2;
  const auto rows = compare_schedules(s, c);
  for (const auto& r : rows) REQUIRE(r.outcome.status == PlanStatus::ok);
  // "1f1b" is plain 1F1B even where the scenario sets vocab_parallel; the split beats it here.
  CHECK(rows[2].outcome.step_time_s < rows[0].outcome.step_time_s);
  CHECK(with_schedule(s, c[0]).plan.vocab_parallel == VocabParallel::none);
  // One and two more micro-batches in flight on the first stage than 1F1B's.
  CHECK(rows[1].outcome.stage_peak_memory_bytes[0] > rows[2].outcome.stage_peak_memory_bytes[0]);
  CHECK(rows[2].outcome.stage_peak_memory_bytes[0] > rows[0].outcome.stage_peak_memory_bytes[0]);
}

TEST_CASE("compare: interleaving shrinks the bubble of 1F1B, GPipe holds more activations than 1F1B", "[explore]") {
  const Scenario s = load_default();  // PP 2, 32 micro-batches per replica
  const auto rows = compare_schedules(s, parse_schedule_list("gpipe,1f1b,interleaved:2,interleaved:3"));
  REQUIRE(rows.size() == 4);
  const auto& gpipe = rows[0].outcome;
  const auto& one_f_one_b = rows[1].outcome;
  const auto& interleaved = rows[2].outcome;
  // GPipe keeps all 32 micro-batches alive: out of memory on 64 GB, still with its per-stage peaks.
  CHECK(gpipe.status == PlanStatus::out_of_memory);
  REQUIRE(one_f_one_b.status == PlanStatus::ok);
  REQUIRE(interleaved.status == PlanStatus::ok);
  CHECK(one_f_one_b.bubble_fraction > 0);
  CHECK(interleaved.bubble_fraction < one_f_one_b.bubble_fraction);
  CHECK(interleaved.step_time_s < one_f_one_b.step_time_s);
  REQUIRE(gpipe.stage_peak_memory_bytes.size() == 2);
  CHECK(gpipe.stage_peak_memory_bytes[0] > one_f_one_b.stage_peak_memory_bytes[0]);
  // 32 layers do not split into PP 2 x v 3 chunks: a row with the reason, not an exception.
  CHECK(rows[3].outcome.status == PlanStatus::invalid);
  CHECK_THAT(rows[3].outcome.reason, Catch::Contains("does not divide num_hidden_layers"));
}

TEST_CASE("compare JSON: versioned, every row in order, failures keep status and reason", "[explore]") {
  const Scenario s = load_default();
  const auto rows = compare_schedules(s, parse_schedule_list("gpipe,1f1b,interleaved:3"));
  REQUIRE(rows.size() == 3);
  const auto j = nlohmann::json::parse(schedule_comparison_json(s, rows));
  CHECK(j["schema_version"] == kCompareSchemaVersion);
  CHECK(j["num_devices"] == 8);
  REQUIRE(j["rows"].size() == 3);
  CHECK(j["rows"][0]["schedule"] == "gpipe");
  CHECK(j["rows"][0]["status"] == "out of memory");
  CHECK(j["rows"][0]["reason"] == rows[0].outcome.reason);
  CHECK(j["rows"][0]["stage_peak_memory_gib"].size() == 2);
  CHECK(j["rows"][1]["status"] == "ok");
  CHECK(j["rows"][1]["reason"] == "");
  CHECK(j["rows"][1]["step_time_s"].get<double>() == rows[1].outcome.step_time_s);
  CHECK(j["rows"][1]["tokens_per_s"].get<double>() == rows[1].outcome.tokens_per_s);
  CHECK(j["rows"][2]["schedule"] == "interleaved:3");
  CHECK(j["rows"][2]["virtual_pipeline_model_parallel_size"] == 3);
  CHECK(j["rows"][2]["status"] == "invalid");
  CHECK_THAT(j["rows"][2]["reason"].get<std::string>(), Catch::Contains("does not divide num_hidden_layers"));
}

// `interleaved` without :V on a scenario with no virtual stages takes the loader's default
// (one layer per model chunk: 32 layers on 2 stages = 16), not the scenario's 1, which the
// plan check would refuse; a scenario's own count is kept.
TEST_CASE("compare: interleaved without a count derives it when the scenario has none", "[explore]") {
  Scenario s = load_default();
  s.plan.pipeline_model_parallel_size = 2;
  s.plan.virtual_pipeline_model_parallel_size = 1;
  const ScheduleChoice plain = parse_schedule_list("interleaved").front();
  CHECK(with_schedule(s, plain).plan.virtual_pipeline_model_parallel_size == s.model.num_layers / 2);
  s.plan.schedule = PipelineSchedule::interleaved;
  s.plan.virtual_pipeline_model_parallel_size = 4;
  CHECK(with_schedule(s, plain).plan.virtual_pipeline_model_parallel_size == 4);
  CHECK(with_schedule(s, parse_schedule_list("interleaved:2").front()).plan.virtual_pipeline_model_parallel_size == 2);
}

TEST_CASE("compare: a scenario's interleaved micro-batch groups do not follow it to the other schedules",
          "[explore]") {
  Scenario s = load_default();  // PP 2, 32 micro-batches per replica
  s.plan.schedule = PipelineSchedule::interleaved;
  s.plan.virtual_pipeline_model_parallel_size = 2;
  s.plan.framework = Framework::megatron_core;
  s.plan.microbatch_group_size_per_vp_stage = 4;
  const auto rows = compare_schedules(s, parse_schedule_list("1f1b,interleaved:2"));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].outcome.status != PlanStatus::invalid);
  CHECK(rows[1].outcome.status != PlanStatus::invalid);
  CHECK(with_schedule(s, parse_schedule_list("1f1b")[0]).plan.microbatch_group_size_per_vp_stage == 0);
  CHECK(with_schedule(s, parse_schedule_list("interleaved:2")[0]).plan.microbatch_group_size_per_vp_stage == 4);
}
