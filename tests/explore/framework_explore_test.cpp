// search / choose --framework and compare --frameworks (issue 14): only plans the framework
// runs are proposed, and frameworks compare side by side on one plan.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/explore/choose.hpp"
#include "trainsim/explore/compare.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {
Scenario load(const std::string& name, const std::vector<Override>& overrides = {}) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name, overrides);
}
// LLaMA-2 7B on 8 x 910B3 with a small global batch: a few hundred plans.
Scenario small_case(const char* framework) {
  // Without the scenario's distributed optimizer (Megatron's): a plan every framework loads.
  return load("default.yaml", {{"plan.global_batch_size", "16"},
                               {"plan.framework", framework},
                               {"plan.use_distributed_optimizer", "false"}});
}
bool sharded_with_pp(const ParallelPlan& p) { return p.zero_stage >= 2 && p.pipeline_model_parallel_size > 1; }
}  // namespace

TEST_CASE("parse_framework_option reads plan.framework's names, an unknown one is one line listing them",
          "[explore][framework]") {
  CHECK(parse_framework_option("deepspeed") == Framework::deepspeed);
  CHECK(parse_framework_option("fsdp") == Framework::fsdp);
  CHECK(parse_framework_option("megatron-core") == Framework::megatron_core);
  try {
    parse_framework_option("jax");
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string text = e.what();
    CHECK(text.find('\n') == std::string::npos);
    CHECK_THAT(text, Catch::Contains("--framework: unknown framework 'jax'"));
    CHECK_THAT(text, Catch::Contains("megatron-core, megatron-lm, deepspeed, fsdp, mindspeed"));
  }
  CHECK_THROWS_WITH(parse_framework_list("fsdp,,deepspeed"), Catch::Contains("--frameworks: empty entry"));
  CHECK_THROWS_WITH(parse_framework_list("fsdp,jax"), Catch::Contains("--frameworks: unknown framework 'jax'"));
  CHECK_THROWS_WITH(parse_framework_list("fsdp,deepspeed,fsdp"), Catch::Contains("--frameworks: 'fsdp' is listed twice"));
  CHECK(parse_framework_list("megatron-core,deepspeed,fsdp") ==
        std::vector<Framework>{Framework::megatron_core, Framework::deepspeed, Framework::fsdp});
}

TEST_CASE("enumerate_plans: only ZeRO stages the framework runs with PP, the rest counted as skipped",
          "[explore][framework]") {
  long long mcore_skipped = -1, ds_skipped = -1, fsdp_skipped = -1;
  const auto mcore = enumerate_plans(small_case("megatron-core"), 8, {}, &mcore_skipped);
  const auto ds = enumerate_plans(small_case("deepspeed"), 8, {}, &ds_skipped);
  auto fsdp = enumerate_plans(small_case("fsdp"), 8, {}, &fsdp_skipped);
  // torchtitan's per-op selective checkpointing is a plan of its own with flash attention (the
  // others list selective once, as none): set those apart before comparing the rest.
  const auto per_op_selective = [](const ParallelPlan& p) {
    return p.recompute_granularity == RecomputeGranularity::selective;
  };
  CHECK(std::none_of(ds.begin(), ds.end(), per_op_selective));
  const auto before = fsdp.size();
  fsdp.erase(std::remove_if(fsdp.begin(), fsdp.end(), per_op_selective), fsdp.end());
  CHECK(fsdp.size() < before);
  // DeepSpeed's PipelineEngine and Megatron take ZeRO 0-1 with PP; torchtitan runs FSDP with PP.
  REQUIRE(framework_entry(Framework::deepspeed).max_zero_stage_with_pp.value == 1);
  REQUIRE(framework_entry(Framework::fsdp).max_zero_stage_with_pp.value == 3);
  CHECK(std::none_of(ds.begin(), ds.end(), sharded_with_pp));
  CHECK(std::none_of(mcore.begin(), mcore.end(), sharded_with_pp));
  // PyTorch's interleaving also takes counts of micro-batches that are no multiple of p (its
  // rounds, MicrobatchGrouping::torch_rounds); Megatron's groups of p do not.
  const auto torch_only = [](const ParallelPlan& p) {
    return p.schedule == PipelineSchedule::interleaved && p.num_microbatches() % p.pipeline_model_parallel_size != 0;
  };
  CHECK(std::none_of(mcore.begin(), mcore.end(), torch_only));
  const auto fsdp_torch_only = std::count_if(fsdp.begin(), fsdp.end(), torch_only);
  CHECK(fsdp_torch_only > 0);
  const auto fsdp_pp = std::count_if(fsdp.begin(), fsdp.end(),
                                     [&](const ParallelPlan& p) { return sharded_with_pp(p) && !torch_only(p); });
  CHECK(fsdp_pp > 0);
  CHECK(fsdp_skipped == 0);
  // Nothing else differs: the framework adds exactly the combinations the others skip.
  CHECK(ds_skipped == fsdp_pp);
  // megatron-core also tries Vocabulary Parallelism's three splits on each 1F1B plan with PP.
  const auto fsdp_pp_1f1b = std::count_if(fsdp.begin(), fsdp.end(), [&](const ParallelPlan& p) {
    return sharded_with_pp(p) && p.schedule == PipelineSchedule::one_f_one_b;
  });
  CHECK(fsdp_pp_1f1b > 0);
  CHECK(mcore_skipped == fsdp_pp + 3 * fsdp_pp_1f1b);
  CHECK(static_cast<long long>(ds.size()) + ds_skipped + fsdp_torch_only == static_cast<long long>(fsdp.size()));
  for (const auto& p : ds) CHECK(p.framework == Framework::deepspeed);
  // A kept optimizer the framework does not run with PP leaves only its PP-1 plans.
  KeptAxes keep;
  keep.optimizer = true;
  const Scenario zero3 = load("default.yaml", {{"plan.global_batch_size", "16"},
                                               {"plan.framework", "fsdp"},
                                               {"plan.pipeline_model_parallel_size", "1"},
                                               {"plan.use_distributed_optimizer", "false"},
                                               {"plan.zero_stage", "3"}});
  Scenario zero3_ds = zero3;
  zero3_ds.plan.framework = Framework::deepspeed;
  long long kept_skipped = 0;
  const auto kept = enumerate_plans(zero3_ds, 8, keep, &kept_skipped);
  CHECK(kept_skipped > 0);
  for (const auto& p : kept) CHECK(p.pipeline_model_parallel_size == 1);
  auto zero3_fsdp = enumerate_plans(zero3, 8, keep);
  zero3_fsdp.erase(std::remove_if(zero3_fsdp.begin(), zero3_fsdp.end(), per_op_selective), zero3_fsdp.end());
  CHECK(static_cast<long long>(kept.size()) + kept_skipped +
            std::count_if(zero3_fsdp.begin(), zero3_fsdp.end(), torch_only) ==
        static_cast<long long>(zero3_fsdp.size()));
}

TEST_CASE("search --framework deepspeed on GPT-3 175B / 1024 A100: no ZeRO-2/3 with PP, every plan runs in it",
          "[explore][framework]") {
  const Scenario s = load("gpt3-175b-a100-1024.yaml");
  SearchOptions o;
  o.framework = Framework::deepspeed;
  o.top = 20;
  o.replay_limit = 40;
  const SearchResult r = search_plans(s, o);
  CHECK(r.framework == Framework::deepspeed);
  CHECK(r.framework_skipped > 0);
  REQUIRE(!r.best.empty());
  for (const auto& c : r.best) {
    CHECK(c.plan.framework == Framework::deepspeed);
    CHECK_FALSE(sharded_with_pp(c.plan));
    CHECK(check_plan(s.model, s.hardware, 1024, c.plan).empty());
  }
  const std::string text = format_search(s, r);
  CHECK_THAT(text, Catch::Contains("framework deepspeed (DeepSpeed"));
  CHECK_THAT(text, Catch::Contains("with PP > 1 only ZeRO-0 to ZeRO-1; " + std::to_string(r.framework_skipped) +
                                   " plans with a higher stage not searched"));
  const auto j = nlohmann::json::parse(search_json(s, r));
  CHECK(j["framework"] == "deepspeed");
  CHECK(j["framework_skipped"] == r.framework_skipped);
  // Without the option the scenario's framework (megatron-core) is searched and said.
  SearchOptions d = o;
  d.framework.reset();
  d.top = 1;
  d.replay_limit = 1;
  const SearchResult def = search_plans(s, d);
  CHECK(def.framework == Framework::megatron_core);
  CHECK_THAT(format_search(s, def), Catch::Contains("framework megatron-core"));
}

TEST_CASE("search --framework fsdp may propose FSDP (ZeRO-3) with PP, as torchtitan runs it", "[explore][framework]") {
  // Only ZeRO-3 searched (the optimizer kept) on the small case: FSDP + PP plans are replayed.
  Scenario s = load("default.yaml", {{"plan.global_batch_size", "16"},
                                     {"plan.pipeline_model_parallel_size", "1"},
                                     {"plan.use_distributed_optimizer", "false"},
                                     {"plan.zero_stage", "3"}});
  SearchOptions o;
  o.framework = Framework::fsdp;
  o.keep.optimizer = true;
  o.keep.pp = false;
  o.top = 1000;
  o.replay_limit = 1000;
  const SearchResult r = search_plans(s, o);
  CHECK(r.framework_skipped == 0);
  const bool pp_proposed = std::any_of(r.best.begin(), r.best.end(), [](const SearchCandidate& c) {
    return c.plan.zero_stage == 3 && c.plan.pipeline_model_parallel_size > 1 && c.plan.framework == Framework::fsdp;
  });
  CHECK(pp_proposed);
  o.framework = Framework::deepspeed;
  const SearchResult ds = search_plans(s, o);
  for (const auto& c : ds.best) CHECK(c.plan.pipeline_model_parallel_size == 1);
  CHECK(ds.framework_skipped > 0);
}

TEST_CASE("choose --framework: every hardware's search is for that framework, and it is said", "[explore][framework]") {
  const Scenario s = small_case("megatron-core");
  HardwareChoiceOptions o;
  o.framework = Framework::deepspeed;
  o.replay_limit = 8;
  const auto r = choose_hardware(s, {s.hardware}, o);
  CHECK(r.framework == Framework::deepspeed);
  REQUIRE(r.rows.size() == 1);
  REQUIRE(r.rows[0].fits);
  CHECK(r.rows[0].best.plan.framework == Framework::deepspeed);
  CHECK_FALSE(sharded_with_pp(r.rows[0].best.plan));
  CHECK(r.rows[0].framework_skipped > 0);
  CHECK_THAT(format_hardware_choice(r), Catch::Contains("framework deepspeed"));
  CHECK(nlohmann::json::parse(hardware_choice_json(r))["framework"] == "deepspeed");
}

TEST_CASE("compare --frameworks: the scenario's plan under each framework, exactly as run would simulate it",
          "[explore][framework]") {
  // A plan all three run: 1F1B (DeepSpeed's pipeline engine has no interleaving), no optimizer
  // sharding (the distributed optimizer is Megatron's, FSDP has no ZeRO-1).
  const Scenario s = load("gpt3-175b-a100-1024.yaml", {{"plan.schedule", "1f1b"},
                                                         {"plan.virtual_pipeline_model_parallel_size", "1"},
                                                         {"plan.use_distributed_optimizer", "false"}});
  const auto frameworks = parse_framework_list("megatron-core,deepspeed,fsdp");
  const auto rows = compare_frameworks(s, frameworks);
  REQUIRE(rows.size() == 3);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].framework == frameworks[i]);
    CHECK_FALSE(rows[i].searched);
    REQUIRE(rows[i].outcome.status == PlanStatus::ok);
    Scenario t = s;
    t.plan.framework = frameworks[i];
    const SimResult sim = simulate(t);
    CHECK(rows[i].outcome.step_time_s == sim.metrics.step_time_s);
    CHECK(rows[i].outcome.peak_memory_bytes == sim.memory.peak_bytes);
    // Breakdown columns: each the largest over stages.
    double compute = 0, dp = 0, pp = 0;
    for (const auto& st : sim.metrics.stages) {
      compute = std::max(compute, st.forward_s + st.backward_s + st.recompute_s);
      dp = std::max(dp, st.dp_exposed_s);
      pp = std::max(pp, st.pp_exposed_s);
    }
    CHECK(rows[i].compute_s == compute);
    CHECK(rows[i].dp_exposed_s == dp);
    CHECK(rows[i].pp_exposed_s == pp);
    CHECK(rows[i].compute_s > 0);
  }
  const std::string text = format_framework_comparison(s, rows);
  CHECK_THAT(text, Catch::Contains("the scenario's plan: TP8 PP16 DP8"));
  CHECK_THAT(text, Catch::Contains("fastest: "));
}

TEST_CASE("compare --frameworks: a plan one framework does not run is a row with the reason, kept in JSON and CSV",
          "[explore][framework]") {
  const Scenario s = load("gpt3-175b-a100-1024.yaml", {{"plan.use_distributed_optimizer", "false"},
                                                         {"plan.framework", "fsdp"},
                                                         {"plan.zero_stage", "3"}});
  const auto rows = compare_frameworks(s, parse_framework_list("megatron-core,deepspeed,fsdp"));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].outcome.status == PlanStatus::invalid);
  CHECK_THAT(rows[0].outcome.reason, Catch::Contains("ZeRO-3 cannot be combined with pipeline parallelism in megatron-core"));
  CHECK(rows[1].outcome.status == PlanStatus::invalid);
  CHECK_THAT(rows[1].outcome.reason, Catch::Contains("ZeRO-3 cannot be combined with pipeline parallelism in deepspeed"));
  CHECK(rows[0].compute_s == 0);
  REQUIRE(rows[2].outcome.status == PlanStatus::ok);
  const std::string text = format_framework_comparison(s, rows);
  CHECK_THAT(text, Catch::Contains("deepspeed     scenario invalid: plan.zero_stage: ZeRO-3 cannot be combined"));
  const auto j = nlohmann::json::parse(framework_comparison_json(s, rows));
  CHECK(j["schema_version"] == kCompareSchemaVersion);
  REQUIRE(j["rows"].size() == 3);
  CHECK(j["rows"][1]["framework"] == "deepspeed");
  CHECK(j["rows"][1]["status"] == "invalid");
  CHECK(j["rows"][1]["plan_source"] == "scenario");
  CHECK(j["rows"][2]["status"] == "ok");
  CHECK(j["rows"][2]["zero_stage"] == 3);
  CHECK(j["rows"][2]["step_time_s"] == rows[2].outcome.step_time_s);
  const std::string csv = framework_comparison_csv(rows);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 4);
  CHECK(csv.rfind("framework,plan_source,status,step_time_s,", 0) == 0);
  // A row that did not run has empty metrics (the JSON's nulls), not zeros.
  CHECK_THAT(csv, Catch::Contains("\ndeepspeed,scenario,invalid,,,,,,,,,,,,,,,"));
}

TEST_CASE("compare --frameworks --search: each framework's best plan is the search's, and one it runs",
          "[explore][framework]") {
  const Scenario s = small_case("megatron-core");
  SearchOptions o;
  o.replay_limit = 8;
  const auto rows = compare_frameworks(s, parse_framework_list("deepspeed,fsdp"), &o);
  REQUIRE(rows.size() == 4);
  for (int i : {2, 3}) {
    CHECK(rows[i].searched);
    REQUIRE(rows[i].outcome.status == PlanStatus::ok);
    CHECK(check_plan(s.model, s.hardware, 8, rows[i].plan).empty());
    SearchOptions one = o;
    one.framework = rows[i].framework;
    one.top = 1;
    const SearchResult r = search_plans(s, one);
    REQUIRE(r.best.size() == 1);
    CHECK(rows[i].outcome.step_time_s == r.best[0].outcome.step_time_s);
    CHECK(describe_plan(rows[i].plan) == describe_plan(r.best[0].plan));
  }
  CHECK(rows[2].framework == Framework::deepspeed);
  CHECK_FALSE(sharded_with_pp(rows[2].plan));
  CHECK(nlohmann::json::parse(framework_comparison_json(s, rows))["rows"][3]["plan_source"] == "search");
}

TEST_CASE("the search estimate prices the framework's gradient dtype and ZeRO-3 gathers, as the replay does",
          "[explore][framework]") {
  Scenario base = load("gpt3-175b-a100-1024.yaml");
  auto estimate = [&](Framework framework, int tp, int pp, int v, int zero, bool distopt, int mbs) {
    Scenario s = base;
    ParallelPlan& p = s.plan;
    p.framework = framework;
    p.tensor_model_parallel_size = tp;
    p.pipeline_model_parallel_size = pp;
    p.virtual_pipeline_model_parallel_size = v;
    p.schedule = v > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
    p.zero_stage = zero;
    p.use_distributed_optimizer = distopt;
    p.micro_batch_size = mbs;
    p.recompute_granularity = RecomputeGranularity::none;
    derive_plan(p, s.num_devices);
    return estimate_step_time(s, p, build_workload(s.model, p));
  };
  // FSDP's pass over every micro-batch's unsharded gradients before their reduce-scatter (cast to
  // fp32, pre-division: sharded_grad_pass_bytes_per_param), a stage's share of the model's
  // parameters each micro-batch, stretched by the pipeline's idle share as the estimate's compute
  // is (Megatron-Core's entry has none).
  auto fsdp_grad_pass_s = [&](int tp, int pp, int v, int mbs) {
    ParallelPlan p = base.plan;
    p.framework = Framework::fsdp;
    p.tensor_model_parallel_size = tp;
    p.pipeline_model_parallel_size = pp;
    p.virtual_pipeline_model_parallel_size = v;
    p.schedule = v > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
    p.zero_stage = 3;
    p.use_distributed_optimizer = false;
    p.micro_batch_size = mbs;
    derive_plan(p, base.num_devices);
    const Workload w = build_workload(base.model, p);
    double stage = w.embedding.parameters + w.head.parameters;
    for (int type : w.layer_type_of) stage += w.layer_types[static_cast<std::size_t>(type)].parameters;
    stage /= pp;
    const int m = p.num_microbatches();
    const double idle = pp > 1 ? (pp - 1.0) / (m + pp - 1) * idle_relative_to_1f1b(p.schedule, v) : 0.0;
    const CostModel cost(base.hardware, p, base.num_devices);
    return m * cost.memory_bound_s(stage * framework_entry(Framework::fsdp).sharded_grad_pass_bytes_per_param.value) /
           (1 - idle);
  };
  // FSDP with PP keeps the gathered weights (torchtitan: reshard_after_forward = not
  // pp_enabled): one gather per micro-batch instead of two, the only difference from
  // Megatron-Core's entry here (both reduce in fp32).
  REQUIRE(framework_entry(Framework::fsdp).zero3_gathers_per_microbatch_with_pp.value == 1);
  REQUIRE(framework_entry(Framework::megatron_core).zero3_gathers_per_microbatch_with_pp.value == 2);
  const double pipelined_pass = fsdp_grad_pass_s(4, 4, 4, 2);
  CHECK(pipelined_pass > 0);
  CHECK(estimate(Framework::fsdp, 4, 4, 4, 3, false, 2) - pipelined_pass <
        estimate(Framework::megatron_core, 4, 4, 4, 3, false, 2));
  // Without PP both gather twice: the same estimate but for the loss, Megatron's eager passes
  // over the logits against the FSDP stacks' fused one (model/workload.cpp cross_entropy_op), a
  // few 1e-4 of this step; for MPT's LayerNorm, PyTorch's own kernel (FrameworkEntry::
  // eager_layer_norm), slower than Transformer Engine's where the device has a measured rate;
  // and for the step's own passes, priced as the replay prices them (optimizer_step_bytes):
  // Megatron-Core's over its whole local fp32 gradient buffer, torchtitan's over the shard.
  // Without sequence parallelism: with it, torchtitan's backward does not gather the Linears'
  // inputs again (FrameworkEntry::sp_input_regathered_for_weight_grad, tests/graph/tp_overlap_test.cpp).
  base.plan.sequence_parallel = false;
  const double fsdp_eager_norm = estimate(Framework::fsdp, 8, 1, 1, 3, false, 1);
  base.hardware.device.eager_layer_norm_forward_efficiency = 0;
  base.hardware.device.eager_layer_norm_backward_efficiency = 0;
  const double fsdp = estimate(Framework::fsdp, 8, 1, 1, 3, false, 1);
  const double mcore = estimate(Framework::megatron_core, 8, 1, 1, 3, false, 1);
  ParallelPlan tp8 = base.plan;
  tp8.tensor_model_parallel_size = 8;
  tp8.pipeline_model_parallel_size = 1;
  tp8.virtual_pipeline_model_parallel_size = 1;
  tp8.schedule = PipelineSchedule::one_f_one_b;
  tp8.zero_stage = 3;
  tp8.use_distributed_optimizer = false;
  tp8.micro_batch_size = 1;
  tp8.sequence_parallel = false;
  derive_plan(tp8, base.num_devices);
  const Workload w = build_workload(base.model, tp8);
  double local = w.embedding.parameters + w.head.parameters;
  for (int type : w.layer_type_of) local += w.layer_types[static_cast<std::size_t>(type)].parameters;
  const int dp = tp8.data_parallel_size;
  auto passes_s = [&](Framework f) {
    const FrameworkEntry& e = framework_entry(f);
    const OptimizerStepBytes b =
        optimizer_step_bytes(e, local / dp, local, grad_reduce_bytes_per_param(e, tp8), dp);
    const CostModel cost(base.hardware, tp8, base.num_devices);
    return cost.memory_bound_s(b.shard) + (b.buffer > 0 ? cost.memory_bound_s(b.buffer) : 0.0);
  };
  const double mcore_passes = passes_s(Framework::megatron_core) - passes_s(Framework::fsdp);
  CHECK(mcore_passes > 0.01 * mcore);  // 4 passes over 175B / 8 fp32 gradients
  // torchtitan's root unit (the embedding and the head): gathered with the first layer before the
  // first forward, reduce-scattered in fp32 after the last backward, nothing hiding either.
  const CostModel cost(base.hardware, tp8, base.num_devices);
  const double root = w.embedding.parameters + w.head.parameters;
  const double root_s =
      cost.collective_s(CollectiveKind::all_gather, CommGroup::dp, 2.0 * (root + w.layer_types[0].parameters)) +
      cost.collective_s(CollectiveKind::reduce_scatter, CommGroup::dp, 4.0 * root);
  CHECK(root_s > 0);
  // With the sequence-parallel flag off for both (above); FSDP's gradient pass as the replay prices it.
  const double grad_pass = fsdp_grad_pass_s(8, 1, 1, 1);
  CHECK(grad_pass > 0.05 * fsdp);  // 14 bytes x 175B / 8 a micro-batch
  CHECK(fsdp - root_s - grad_pass < mcore - mcore_passes);
  CHECK(fsdp - root_s - grad_pass == Approx(mcore - mcore_passes).epsilon(1e-3));
  CHECK(fsdp_eager_norm > mcore - mcore_passes);
  // DeepSpeed reduces bf16 gradients in bf16 (2 bytes, communication_data_type), Megatron in fp32;
  // DeepSpeed's ZeRO-1 also adds every micro-batch's gradient after the first into its 16-bit
  // .grad (6 bytes a parameter), which Megatron without gradient accumulation fusion adds into its
  // fp32 main_grad (10 bytes, every micro-batch).
  REQUIRE(framework_entry(Framework::deepspeed).grad_reduce_bytes.value == 2);
  const double deepspeed = estimate(Framework::deepspeed, 4, 8, 4, 0, true, 1);
  base.plan.gradient_accumulation_fusion = false;
  CHECK(deepspeed < estimate(Framework::megatron_core, 4, 8, 4, 0, true, 1));
}

TEST_CASE("search's banner names a framework's one ZeRO stage with PP alone (mindformers: only ZeRO-0), consecutive "
          "stages as a range",
          "[explore][framework]") {
  const Scenario s = load("llama2-7b-910b3-8-mindformers.yaml");
  SearchOptions o;
  o.top = 1;
  o.replay_limit = 1;
  const SearchResult r = search_plans(s, o);
  REQUIRE(r.framework == Framework::mindformers);
  const std::string text = format_search(s, r);
  CHECK_THAT(text, Catch::Contains("): with PP > 1 only ZeRO-0" +
                                   (r.framework_skipped > 0 ? "; " + std::to_string(r.framework_skipped) : "\n")));
  CHECK_THAT(text, !Catch::Contains("ZeRO-0 to ZeRO-0"));
  CHECK_THAT(framework_rule(Framework::deepspeed_2021, 0), Catch::EndsWith("with PP > 1 only ZeRO-0 to ZeRO-2"));
  CHECK_THAT(framework_rule(Framework::fsdp, 0), Catch::EndsWith("runs every ZeRO stage with pipeline parallelism"));
}

TEST_CASE("The estimate of interleaved pipelined FSDP exposes the first chunk's reduction, as the replay does",
          "[explore][framework][zero3][pipeline][interleaved]") {
  // Llama 3.1 405B as torchtitan ran it on 512 H100 (trends.yaml, TP8 PP8 DP8, 8 micro-batches
  // of 4): PyTorch reduces chunk 1 under chunk 0's cool-down backwards, and chunk 0 after them.
  Scenario s = load("llama3-405b-h100-16384.yaml", {{"num_devices", "512"},
                                                     {"plan.framework", "fsdp"},
                                                     {"plan.zero_stage", "3"},
                                                     {"plan.use_distributed_optimizer", "false"},
                                                     {"plan.pipeline_model_parallel_size", "8"},
                                                     {"plan.account_for_embedding_in_pipeline_split", "false"},
                                                     {"plan.account_for_loss_in_pipeline_split", "false"},
                                                     {"plan.micro_batch_size", "4"},
                                                     {"plan.global_batch_size", "256"},
                                                     {"plan.recompute_method", "uniform"},
                                                     {"plan.recompute_num_layers", "1"},
                                                     {"plan.schedule", "interleaved"},
                                                     {"plan.virtual_pipeline_model_parallel_size", "2"}});
  // On a NIC of a fortieth of its 400 Gb/s the reductions are a quarter of the step: the
  // replay takes 59.6 s, the estimate that exposed both chunks' reductions said 71.4 s.
  s.hardware.cluster.nic_bandwidth /= 40;
  const double replay = simulate(s).metrics.step_time_s;
  const double estimate = estimate_step_time(s, s.plan, build_workload(s.model, s.plan));
  CHECK(estimate == Approx(replay).epsilon(0.05));
}
