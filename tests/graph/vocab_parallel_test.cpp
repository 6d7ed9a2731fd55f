// Vocabulary Parallelism (plan.vocab_parallel; Yeung et al., MLSys 2025, sail-sg/
// VocabularyParallelism): the embedding and the output layer split over the pipeline stages by
// vocabulary on 1F1B, with one (vocab-2) or two (vocab-1) more warm-up forwards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

const std::string kDir = TRAINSIM_SOURCE_DIR;

// LLaMA-2 7B (untied, 32000 words) on one 910B3 server, TP1 PP4 DP2, 16 micro-batches.
Scenario pipeline(VocabParallel vocab) {
  Scenario s = load_scenario(kDir + "/scenarios/default.yaml");
  s.plan.framework = Framework::megatron_core;  // the fork is Megatron-Core's; MindSpeed has no split
  s.plan.pipeline_model_parallel_size = 4;
  s.plan.data_parallel_size = 2;
  s.plan.global_batch_size = 32;
  s.plan.vocab_parallel = vocab;
  return s;
}

int forwards_before_first_backward(const StageOrder& order) {
  int n = 0;
  for (const WorkItem& item : order) {
    if (item.kind != WorkKind::forward) break;
    ++n;
  }
  return n;
}

bool mentions(const std::vector<Diagnostic>& ds, const std::string& key, const std::string& words) {
  return std::any_of(ds.begin(), ds.end(), [&](const Diagnostic& d) {
    return d.key_path == key && d.problem.find(words) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("Vocabulary Parallelism's 1F1B warms stage s up with p - s + 1 (vocab-2), p - s + 2 (vocab-1) and 3p/2 - s "
          "(interlaced) forwards",
          "[schedule][vocab]") {
  // vocab_parallel_schedule.py: p - s warm-up forwards and one more before the first backward,
  // one more again under --disable-backward-fusion; the README's p + 1 and p + 2 in flight.
  const int p = 4, m = 16;
  // The interlaced pipeline (interlaced_schedule.py): floor(3p/2) - s, 1.5p in flight.
  for (const auto& [vocab, extra] : {std::pair{VocabParallel::none, 0}, std::pair{VocabParallel::vocab_2, 1},
                                     std::pair{VocabParallel::vocab_1, 2}, std::pair{VocabParallel::interlaced, 2}}) {
    ParallelPlan plan;
    plan.pipeline_model_parallel_size = p;
    plan.vocab_parallel = vocab;
    const auto orders = build_schedule(PipelineSchedule::one_f_one_b, p, m, 1, microbatch_groups(plan));
    for (int s = 0; s < p; ++s) {
      INFO("extra " << extra << " stage " << s);
      const StageOrder& order = orders[static_cast<std::size_t>(s)];
      CHECK(forwards_before_first_backward(order) == p - s + extra);
      CHECK(activations_in_flight(order, 1).units == Approx(p - s + extra));
      CHECK(order.size() == 2u * m);
    }
  }
  // Capped at the micro-batches there are: m = 2 on 4 stages runs both forwards first.
  ParallelPlan plan;
  plan.vocab_parallel = VocabParallel::vocab_1;
  const auto few = build_schedule(PipelineSchedule::one_f_one_b, p, 2, 1, microbatch_groups(plan));
  CHECK(forwards_before_first_backward(few[3]) == 2);
}

TEST_CASE("Vocabulary Parallelism spreads the output layer's work and weights evenly over the stages",
          "[graph][vocab]") {
  const Scenario base_scenario = pipeline(VocabParallel::none);
  const SimResult base = simulate(base_scenario);
  const SimResult vocab = simulate(pipeline(VocabParallel::vocab_2));
  const int p = 4;
  const double h = base_scenario.model.hidden_size;
  const double padded = static_cast<double>(base.workload.padded_vocab_size);

  // Each stage's output-layer GEMM is a 1/p column shard of the whole one.
  auto lm_head_flops = [](const Workload& w) {
    for (const Op& op : w.head.ops)
      if (op.name == "lm_head") return op.forward_flops;
    return 0.0;
  };
  CHECK(lm_head_flops(vocab.workload) * p == Approx(lm_head_flops(base.workload)));

  // The weights: the same model over the stages, but for the final norm every shard keeps
  // (h weights on p - 1 stages too many).
  double base_params = 0, vocab_params = 0;
  for (const auto& st : base.memory.stages) base_params += st.parameters;
  for (const auto& st : vocab.memory.stages) vocab_params += st.parameters;
  CHECK(vocab_params == Approx(base_params + (p - 1) * h).epsilon(1e-12));
  // Each stage holds 1/p of the embedding table and of the output layer.
  CHECK(vocab.memory.stages[1].parameters - base.memory.stages[1].parameters ==
        Approx(2.0 * padded / p * h + h).epsilon(1e-12));

  // Balanced: every stage runs the same compute; without it the last stage carries the head.
  const auto& vs = vocab.metrics.stages;
  for (int s = 1; s < p; ++s) {
    CHECK(vs[static_cast<std::size_t>(s)].forward_s == Approx(vs[0].forward_s).epsilon(1e-9));
    CHECK(vs[static_cast<std::size_t>(s)].backward_s == Approx(vs[0].backward_s).epsilon(1e-9));
  }
  const auto& bs = base.metrics.stages;
  CHECK(bs[3].forward_s + bs[3].backward_s > vs[3].forward_s + vs[3].backward_s);
  CHECK(vocab.metrics.step_time_s < base.metrics.step_time_s);

  // One more micro-batch in flight on the first stage (p + 1), two more under vocab-1 (p + 2).
  CHECK(base.memory.stages[0].microbatches_in_flight == p);
  CHECK(vocab.memory.stages[0].microbatches_in_flight == p + 1);
  CHECK(simulate(pipeline(VocabParallel::vocab_1)).memory.stages[0].microbatches_in_flight == p + 2);

  // The interlaced pipeline runs the same shards with its collectives on the stage's own time:
  // slower than vocab-2's hidden ones by at least their time, 3p/2 in flight.
  const Scenario interlaced_scenario = pipeline(VocabParallel::interlaced);
  const SimResult interlaced = simulate(interlaced_scenario);
  CHECK(interlaced.memory.stages[0].microbatches_in_flight == 3 * p / 2);
  // Its collectives are pipeline communication in the breakdown, every micro-batch's on every
  // stage; its compute is vocab-2's without the fork's rescale and cast passes.
  ParallelPlan plan = interlaced_scenario.plan;
  derive_plan(plan, interlaced_scenario.num_devices);
  const CostModel cost(interlaced_scenario.hardware, plan, interlaced_scenario.num_devices);
  const double tokens = boundary_tokens(plan);
  const VocabParallelComm comm = vocab_parallel_comm(
      plan, framework_entry(plan.framework), tokens, h,
      [&cost](CollectiveKind k, CommGroup g, double bytes) { return cost.group_collective(k, g, bytes); });
  REQUIRE_FALSE(comm.hidden);
  const double m = plan.num_microbatches();
  const auto& is = interlaced.metrics.stages;
  for (int s = 0; s < p; ++s) {
    CAPTURE(s);
    const auto& i = is[static_cast<std::size_t>(s)];
    const auto& v2 = vs[static_cast<std::size_t>(s)];
    CHECK(i.forward_s + i.backward_s < v2.forward_s + v2.backward_s);
    CHECK(i.pp_exposed_s - v2.pp_exposed_s == Approx(m * (comm.forward_s + comm.backward_s)).epsilon(0.05));
  }
}

TEST_CASE("Vocabulary Parallelism refuses what the fork asserts, naming plan.vocab_parallel", "[plan][vocab]") {
  const Scenario ok = pipeline(VocabParallel::vocab_1);
  CHECK(check_plan(ok.model, ok.hardware, ok.num_devices, ok.plan).empty());

  auto problems = [&](auto change) {
    Scenario s = ok;
    change(s);
    return check_plan(s.model, s.hardware, s.num_devices, s.plan);
  };
  const std::string key = "plan.vocab_parallel";
  CHECK(mentions(problems([](Scenario& s) { s.plan.framework = Framework::deepspeed; }), key,
                 "no vocabulary parallelism across pipeline stages"));
  CHECK(mentions(problems([](Scenario& s) {
                   s.plan.schedule = PipelineSchedule::interleaved;
                   s.plan.virtual_pipeline_model_parallel_size = 2;
                 }),
                 key, "1F1B only"));
  CHECK(mentions(problems([](Scenario& s) {
                   s.plan.pipeline_model_parallel_size = 1;
                   s.plan.data_parallel_size = 8;
                 }),
                 key, "pipeline_model_parallel_size 1"));
  CHECK(mentions(problems([](Scenario& s) { s.model.tie_word_embeddings = true; }), key, "untied embeddings"));
  CHECK(mentions(problems([](Scenario& s) { s.model.mtp_layers = 1; }), key, "multi-token-prediction"));
  {
    Scenario s = ok;
    s.model.num_layers = 30;
    s.plan.pipeline_model_parallel_size = 3;
    s.plan.data_parallel_size = 2;
    s.num_devices = 6;
    CHECK(mentions(check_plan(s.model, s.hardware, s.num_devices, s.plan), key, "TP x PP (3)"));
  }
}

TEST_CASE("Vocabulary Parallelism: full mode equals representative mode on a uniform cluster", "[graph][vocab]") {
  for (VocabParallel vocab : {VocabParallel::vocab_1, VocabParallel::vocab_2, VocabParallel::interlaced}) {
    CAPTURE(to_string(vocab));
    const Scenario s = pipeline(vocab);
    SimOptions full;
    full.mode = ReplayMode::full;
    const SimResult r = simulate(s), f = simulate(s, full);
    CHECK(f.metrics.step_time_s == Approx(r.metrics.step_time_s).epsilon(1e-9));
    for (std::size_t st = 0; st < r.metrics.stages.size(); ++st) {
      CHECK(f.metrics.stages[st].pp_exposed_s == Approx(r.metrics.stages[st].pp_exposed_s).epsilon(1e-9));
      CHECK(f.metrics.stages[st].forward_s == Approx(r.metrics.stages[st].forward_s).epsilon(1e-9));
    }
  }
}
