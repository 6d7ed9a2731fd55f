#include "trainsim/explore/search.hpp"

#include <algorithm>
#include <cmath>
#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {
Scenario load(const std::string& name, const std::vector<Override>& overrides = {}) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name, overrides);
}
// LLaMA-2 7B on 8 x 910B3 with a small global batch: a few hundred plans.
Scenario small_case() { return load("default.yaml", {{"plan.global_batch_size", "16"}}); }
}  // namespace

TEST_CASE("parse_search_objective reads the three objectives and rejects others", "[explore][search]") {
  CHECK(parse_search_objective("throughput") == SearchObjective::throughput);
  CHECK(parse_search_objective("time-to-train") == SearchObjective::time_to_train);
  CHECK(parse_search_objective("cost") == SearchObjective::cost);
  CHECK_THROWS_WITH(parse_search_objective("speed"), Catch::Contains("throughput, time-to-train, cost"));
}

TEST_CASE("enumerate_plans: every plan uses exactly N devices and splits the global batch", "[explore][search]") {
  const Scenario s = small_case();
  const auto plans = enumerate_plans(s, 8);
  REQUIRE(plans.size() > 100);
  bool has_interleaved = false, has_cp = false, has_zero3 = false;
  for (const auto& p : plans) {
    CHECK(p.tensor_model_parallel_size * p.pipeline_model_parallel_size * p.context_parallel_size *
              p.data_parallel_size == 8);
    CHECK(p.global_batch_size % (p.micro_batch_size * p.data_parallel_size) == 0);
    CHECK(p.sequence_parallel == (p.tensor_model_parallel_size > 1));
    has_interleaved |= p.schedule == PipelineSchedule::interleaved;
    has_cp |= p.context_parallel_size == 2;
    has_zero3 |= p.zero_stage == 3;
  }
  CHECK(has_interleaved);
  CHECK(has_cp);
  CHECK(has_zero3);
  // Selective recompute differs from none only when attention keeps its s x s scores.
  auto count_selective = [](const std::vector<ParallelPlan>& list) {
    return std::count_if(list.begin(), list.end(), [](const ParallelPlan& p) {
      return p.recompute_granularity == RecomputeGranularity::selective;
    });
  };
  CHECK(count_selective(plans) == 0);
  const Scenario unfused = load("default.yaml", {{"plan.global_batch_size", "16"}, {"plan.use_flash_attn", "false"}});
  const auto unfused_plans = enumerate_plans(unfused, 8);
  CHECK(count_selective(unfused_plans) * 3 == static_cast<long>(unfused_plans.size()));
  CHECK(unfused_plans.size() == plans.size() * 3 / 2);
}

TEST_CASE("search: every returned plan is valid and fits, best throughput first, cost = device-hours x price",
          "[explore][search]") {
  const Scenario s = small_case();
  SearchOptions o;
  o.top = 20;
  o.objective = SearchObjective::cost;
  o.tokens = 1e9;
  const SearchResult r = search_plans(s, o);
  REQUIRE(r.best.size() == 20);
  CHECK(r.enumerated >= r.valid);
  CHECK(r.valid >= r.fit);
  CHECK(r.fit >= r.replayed);
  for (std::size_t i = 0; i < r.best.size(); ++i) {
    const auto& c = r.best[i];
    CHECK(check_plan(s.model, s.hardware, 8, c.plan).empty());
    Scenario t = s;
    t.plan = c.plan;
    CHECK(estimate_memory(t, build_workload(t.model, t.plan)).fits);
    REQUIRE(c.outcome.status == PlanStatus::ok);
    CHECK(c.cost == Approx(1e9 / c.outcome.tokens_per_s / 3600 * 8 * s.hardware.device.price_per_hour));
    if (i > 0) CHECK(r.best[i - 1].outcome.tokens_per_s >= c.outcome.tokens_per_s);
    if (i > 0) CHECK(r.best[i - 1].cost <= c.cost);
    // The analytical tier prices the same ops with the same cost model: within 20% of the replay.
    CHECK(c.estimate_step_s == Approx(c.outcome.step_time_s).epsilon(0.2));
  }
}

TEST_CASE("search: one thread and all threads give the same ranking", "[explore][search]") {
  const Scenario s = small_case();
  SearchOptions o;
  o.top = 15;
  o.replay_limit = 40;
  o.max_threads = 1;
  const SearchResult a = search_plans(s, o);
  o.max_threads = 0;
  const SearchResult b = search_plans(s, o);
  REQUIRE(a.best.size() == b.best.size());
  for (std::size_t i = 0; i < a.best.size(); ++i) {
    CHECK(describe_plan(a.best[i].plan) == describe_plan(b.best[i].plan));
    CHECK(a.best[i].plan.zero_stage == b.best[i].plan.zero_stage);
    CHECK(a.best[i].outcome.step_time_s == b.best[i].outcome.step_time_s);
  }
}

TEST_CASE("search: replaying only the 16 best estimates finds the brute-force best of all fitting plans",
          "[explore][search]") {
  const Scenario s = small_case();
  double best = 0;
  for (const auto& p : enumerate_plans(s, 8)) {
    Scenario t = s;
    t.plan = p;
    const PlanOutcome o = evaluate_plan(t);
    if (o.status == PlanStatus::ok) best = std::max(best, o.tokens_per_s);
  }
  REQUIRE(best > 0);
  SearchOptions o;
  o.top = 1;
  o.replay_limit = 16;
  const SearchResult r = search_plans(s, o);
  REQUIRE(r.best.size() == 1);
  CHECK(r.best[0].outcome.tokens_per_s == Approx(best).epsilon(1e-9));
}

TEST_CASE("search space holds Megatron's published GPT-3 175B plan (TP8 PP16 v3), valid and fitting, "
          "selective recompute is listed as none under flash attention",
          "[explore][search]") {
  // The search ranks it below TP2/TP4 plans (see the report); this pins that it is considered.
  const Scenario s = load("gpt3-175b-a100-1024.yaml");
  const auto plans = enumerate_plans(s, 1024);
  int found = 0;
  for (const auto& p : plans) {
    CHECK(p.recompute_granularity != RecomputeGranularity::selective);  // scenario uses flash attention
    if (p.tensor_model_parallel_size != 8 || p.pipeline_model_parallel_size != 16 ||
        p.virtual_pipeline_model_parallel_size != 3 || p.micro_batch_size != 1 || !p.use_distributed_optimizer ||
        p.recompute_granularity != RecomputeGranularity::none || p.context_parallel_size != 1)
      continue;
    ++found;
    CHECK(p.schedule == PipelineSchedule::interleaved);
    CHECK(p.data_parallel_size == 8);
    CHECK(check_plan(s.model, s.hardware, 1024, p).empty());
    Scenario t = s;
    t.plan = p;
    CHECK(estimate_memory(t, build_workload(t.model, t.plan)).fits);
  }
  CHECK(found == 1);
}

TEST_CASE("parse_kept_axes reads any subset and names the valid axes otherwise", "[explore][search]") {
  const KeptAxes none = parse_kept_axes("");
  CHECK_FALSE((none.tp || none.pp || none.sequence_parallel || none.optimizer || none.recompute));
  const KeptAxes k = parse_kept_axes("sp,optimizer,recompute");
  CHECK((k.sequence_parallel && k.optimizer && k.recompute));
  CHECK_FALSE((k.tp || k.pp || k.cp || k.ep || k.micro_batch || k.schedule));
  CHECK_THROWS_WITH(parse_kept_axes("tp,zero"),
                    Catch::Contains("unknown plan axis 'zero'") && Catch::Contains("tp, pp, cp, ep, mbs, schedule"));
}

TEST_CASE("Kept axes stay as the scenario sets them in every enumerated plan", "[explore][search]") {
  // Megatron-LM 2021: no sequence parallelism, no sharded optimizer, full recompute.
  const Scenario s = load("default.yaml", {{"plan.global_batch_size", "16"},
                                           {"plan.use_distributed_optimizer", "false"},
                                           {"plan.recompute_granularity", "full"}});
  const auto all = enumerate_plans(s, 8);
  const auto kept = enumerate_plans(s, 8, parse_kept_axes("sp,optimizer,recompute,pp"));
  REQUIRE(!kept.empty());
  CHECK(kept.size() < all.size());
  bool tp_varies = false;
  for (const auto& p : kept) {
    CHECK_FALSE(p.sequence_parallel);
    CHECK_FALSE(p.use_distributed_optimizer);
    CHECK(p.zero_stage == 0);
    CHECK(p.recompute_granularity == RecomputeGranularity::full);
    CHECK(p.pipeline_model_parallel_size == 2);
    tp_varies |= p.tensor_model_parallel_size > 1;
  }
  CHECK(tp_varies);  // the other axes are still searched
}

TEST_CASE("check_search_options: NaN, negative or out-of-range options are bad input before any work, one line each",
          "[explore][search]") {
  CHECK(check_search_options(SearchOptions{}).empty());
  SearchOptions o;
  o.devices = -1;
  o.tokens = std::nan("");
  o.top = 0;
  o.replay_limit = -3;
  o.max_threads = 100000;
  std::vector<std::string> lines;
  for (const auto& d : check_search_options(o)) lines.push_back(d.str());
  CHECK(lines == std::vector<std::string>{
                     "--devices: -1 is out of range; valid: 1 to 1048576 (the scenario's num_devices when not given)",
                     "--tokens: nan is not a token budget; valid: a finite number > 0 and <= 1e18, e.g. 1e12",
                     "--top: 0 is out of range; valid: >= 1 plans to print",
                     "--replay: -3 is out of range; valid: >= 1 candidates to replay",
                     "--threads: 100000 is out of range; valid: 0 (all cores) to 1024"});
  for (const double tokens : {-1.0, 0.0, HUGE_VAL, 2e18}) {
    SearchOptions t;
    t.tokens = tokens;
    INFO(tokens);
    CHECK(check_search_options(t).size() == 1);
  }
  o = SearchOptions{};
  o.devices = -1;
  // Before this check -1 silently meant the scenario's device count.
  CHECK_THROWS_WITH(search_plans(small_case(), o), Catch::StartsWith("--devices: -1 is out of range"));
}

TEST_CASE("the search estimate's pipeline bubble is (p-1)/(m+p-1), a third of it for ZB-H1", "[explore][search]") {
  // PP4 on 4 devices (DP 1: no gradient reduction), micro-batch 1: the estimate is
  // E(m) = m T / (1 - bubble(m)) + R, T the per-micro-batch time and R the terms that do not
  // grow with m (fill/drain sends, optimizer step). For 1F1B that is exactly T (m + p - 1) + R,
  // a straight line in m; from two points T and R follow and pin every other point, and ZB-H1's
  // m T / (1 - (p-1) / (3 (m+p-1))) + R.
  Scenario s = load("default.yaml", {{"num_devices", "4"}, {"plan.pipeline_model_parallel_size", "4"},
                                     {"plan.global_batch_size", "8"}});
  const int p = 4;
  auto estimate = [&](int m, PipelineSchedule schedule) {
    ParallelPlan plan = s.plan;
    plan.global_batch_size = m;
    plan.schedule = schedule;
    derive_plan(plan, s.num_devices);
    REQUIRE(plan.data_parallel_size == 1);
    REQUIRE(plan.num_microbatches() == m);
    return estimate_step_time(s, plan, build_workload(s.model, plan));
  };
  const double e8 = estimate(8, PipelineSchedule::one_f_one_b), e16 = estimate(16, PipelineSchedule::one_f_one_b);
  const double T = (e16 - e8) / 8, R = e8 - T * (8 + p - 1);
  REQUIRE(T > 0);
  REQUIRE(R >= 0);
  for (int m : {1, 3, 4, 32, 100}) {
    CAPTURE(m);
    CHECK(estimate(m, PipelineSchedule::one_f_one_b) == Approx(T * (m + p - 1) + R).epsilon(1e-9));
    const double zb_bubble = (p - 1.0) / (m + p - 1) / 3;
    CHECK(estimate(m, PipelineSchedule::zero_bubble_h1) == Approx(m * T / (1 - zb_bubble) + R).epsilon(1e-9));
  }
}

TEST_CASE("search's estimate prices a ring CP exchange by what its attention steps do not hide", "[search][cp]") {
  // Llama-3 8B at 128K over CP 8 (p2p): the ring's sends hide under the attention steps, as the
  // replay runs them; pricing every send would add the whole exchange to the estimate.
  const Scenario s = load("llama3-8b-h100-64-128k-cp.yaml");
  REQUIRE(s.plan.cp_comm_type == CpCommType::p2p);
  const Workload w = build_workload(s.model, s.plan);
  const double estimate = estimate_step_time(s, s.plan, w);
  SimOptions o;
  o.record_timeline = false;
  const double replayed = simulate(s, o).metrics.step_time_s;
  CHECK(estimate == Approx(replayed).epsilon(0.005));  // every send priced: +1.6%
  // The all-gather kind hides nothing: its estimate carries the whole exchange.
  Scenario gathered = s;
  gathered.plan.cp_comm_type = CpCommType::all_gather;
  CHECK(estimate_step_time(gathered, gathered.plan, build_workload(gathered.model, gathered.plan)) > estimate);
}

TEST_CASE("search's estimate gathers FP8 parameters at 1 byte under fp8_param_gather, as the replay does", "[search][fp8]") {
  Scenario s = load("llama3-8b-h100-8.yaml", {{"plan.overlap_param_gather", "false"}});
  REQUIRE(s.plan.precision == Precision::fp8);
  REQUIRE(s.plan.use_distributed_optimizer);
  const double bf16_gather = estimate_step_time(s, s.plan, build_workload(s.model, s.plan));
  s.plan.fp8_param_gather = true;
  const double fp8_gather = estimate_step_time(s, s.plan, build_workload(s.model, s.plan));
  CHECK(fp8_gather < bf16_gather);
}

TEST_CASE("a search with no fitting plan says how far the closest valid plan is, in the text and the JSON",
          "[explore][search]") {
  // GPT-3 175B on 8 A100: every split holds ~175e9 x 18 B / 8 of model states, far over 80 GiB.
  const Scenario s = load("gpt3-175b-a100-1024.yaml");
  SearchOptions options;
  options.devices = 8;
  options.top = 3;
  const SearchResult r = search_plans(s, options);
  REQUIRE(r.best.empty());
  REQUIRE(r.valid > 0);
  CHECK(r.fit == 0);
  const std::string reason = no_plan_reason(s, r);
  CHECK_THAT(reason, Catch::StartsWith("no plan fits in memory: the smallest of " + std::to_string(r.valid) +
                                       " valid plans needs "));
  CHECK_THAT(reason, Catch::Contains(" GiB of 80.0 GiB (TP"));
  CHECK_THAT(format_search(s, r), Catch::EndsWith(reason + "\n"));
  CHECK_THAT(search_json(s, r), Catch::Contains("\"no_plan_reason\": \"" + reason + "\""));
  // 7 devices do not split the global batch of 1536 over any DP: no plan at all.
  options.devices = 7;
  const SearchResult none = search_plans(s, options);
  CHECK_THAT(no_plan_reason(s, none), Catch::StartsWith("no plan: 7 devices and global batch 1536 do not split"));
}
