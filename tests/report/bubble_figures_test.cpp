// The two bubble figures (README "Bubble: two figures"): the mean over stages (`bubble_fraction`,
// run's step line) and the critical stage's (`critical_stage_bubble_fraction`, explain's share
// and its no-bubble counterfactual). On a uniform 1F1B pipeline with free communication both are
// the closed form (p-1)/(m+p-1); with one slow stage they part (to closed forms when it is the
// last), and every output names each one.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <string>
#include <nlohmann/json.hpp>

#include "trainsim/engine/engine.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/explore/explain.hpp"
#include "trainsim/explore/sweep.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/metrics/step_metrics.hpp"
#include "trainsim/report/command_json.hpp"
#include "trainsim/report/summary.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

constexpr double kTf = 1e-3;  // forward of one micro-batch on a stage
constexpr double kTb = 2e-3;  // backward (input + weight gradient)

ChunkCosts chunk(double scale) {
  ChunkCosts c;
  c.forward_s = kTf * scale;
  c.backward_input_s = kTb * scale / 2;
  c.backward_weight_s = kTb * scale / 2;
  c.activation_bytes = 1e9;
  return c;
}

// 1F1B over p stages and m micro-batches, free communication; stage `slow` (-1: none) runs
// `scale` times slower than the others.
SimResult one_f_one_b(int p, int m, int slow = -1, double scale = 1) {
  auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, chunk(1));
  if (slow >= 0) costs.stages[static_cast<std::size_t>(slow)].chunks.assign(1, chunk(scale));
  MetricInputs in;
  in.num_devices = p;
  in.tokens_per_step = m;
  SimResult r;
  r.metrics = compute_step_metrics(replay(build_task_graph(costs, build_schedule(costs.schedule, p, m, 1))), in);
  return r;
}

Scenario named(const std::string& name, int p, int m) {
  Scenario s;
  s.name = name;
  s.num_devices = p;
  s.plan.pipeline_model_parallel_size = p;
  s.plan.data_parallel_size = 1;
  s.plan.global_batch_size = m;
  return s;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * fraction);
  return buf;
}

}  // namespace

TEST_CASE("bubble figures: on a uniform 1F1B pipeline both equal (p-1)/(m+p-1), in the metrics, run's JSON and text",
          "[metrics][report][bubble]") {
  for (int p : {2, 4, 8}) {
    for (int m : {p, 2 * p + 1, 4 * p}) {
      INFO("p " << p << ", m " << m);
      const SimResult r = one_f_one_b(p, m);
      const double closed = static_cast<double>(p - 1) / (m + p - 1);
      CHECK(r.metrics.bubble_fraction == Approx(closed).epsilon(1e-9));
      CHECK(r.metrics.critical_stage_bubble_fraction == Approx(closed).epsilon(1e-9));
      CHECK(r.metrics.critical_stage == 0);  // equal bubbles everywhere: the first of equals
      const Scenario sc = named("uniform", p, m);
      const auto j = nlohmann::json::parse(json_summary(sc, r));
      CHECK(j["bubble_fraction"].get<double>() == Approx(closed).epsilon(1e-9));
      CHECK(j["critical_stage_bubble_fraction"].get<double>() == Approx(closed).epsilon(1e-9));
      CHECK(j["critical_stage"].get<int>() == 0);
      CHECK_THAT(format_summary(sc, r), Catch::Contains("bubble " + percent(closed) + " mean over stages, " +
                                                        percent(closed) + " on critical stage 0"));
    }
  }
}

TEST_CASE("bubble figures: one slow stage parts the mean over stages from the critical stage's, and both are "
          "printed by name",
          "[metrics][report][bubble]") {
  // The last stage runs 2x slower (T' = 2T, T = t_f + t_b). The slowest stage last never starves
  // in 1F1B: it idles only the others' fill, (p-1) t_f, and drain, (p-1) t_b, and the step is
  // m T' + (p-1) T; every other stage idles step - m T.
  const int p = 4, m = 8;
  const double t = kTf + kTb, t_slow = 2 * t;
  const double step = m * t_slow + (p - 1) * t;
  const double critical = (p - 1) * t / step;
  const double mean = ((p - 1) * (step - m * t) + (p - 1) * t) / p / step;
  for (int slow : {0, 2, p - 1}) {
    INFO("slow stage " << slow);
    const SimResult r = one_f_one_b(p, m, slow, 2);
    const StepMetrics& got = r.metrics;
    CHECK(got.critical_stage == slow);
    double idle = 0;
    for (const auto& b : got.stages) idle += b.bubble_s;
    CHECK(got.bubble_fraction == Approx(idle / p / got.step_time_s).epsilon(1e-12));
    CHECK(got.critical_stage_bubble_fraction ==
          Approx(got.stages[static_cast<std::size_t>(slow)].bubble_s / got.step_time_s).epsilon(1e-12));
    // The case is one where reading one figure as the other misleads.
    CHECK(got.bubble_fraction > 2 * got.critical_stage_bubble_fraction);
    if (slow == p - 1) {
      CHECK(got.step_time_s == Approx(step).epsilon(1e-9));
      CHECK(got.critical_stage_bubble_fraction == Approx(critical).epsilon(1e-9));
      CHECK(got.bubble_fraction == Approx(mean).epsilon(1e-9));
    }
    const Scenario sc = named("slow stage", p, m);
    const auto j = nlohmann::json::parse(json_summary(sc, r));
    CHECK(j["bubble_fraction"].get<double>() == Approx(got.bubble_fraction).epsilon(1e-12));
    CHECK(j["critical_stage_bubble_fraction"].get<double>() == Approx(got.critical_stage_bubble_fraction).epsilon(1e-12));
    CHECK(j["critical_stage"].get<int>() == slow);
    const std::string text = format_summary(sc, r);
    CHECK_THAT(text, Catch::Contains("bubble " + percent(got.bubble_fraction) + " mean over stages, " +
                                     percent(got.critical_stage_bubble_fraction) + " on critical stage " +
                                     std::to_string(slow)));
    CHECK_THAT(text, Catch::Contains("* critical stage (least bubble: the others wait for it)"));
  }
}

TEST_CASE("critical stage: the stage the replay's others wait for (least bubble), not the most compute",
          "[metrics][bubble]") {
  // 1F1B, p = 4, m = 8, T = t_f + t_b. Stage 1 computes T a micro-batch but waits 0.5 T more for
  // exposed TP collectives; the last stage computes 1.2 T. The most compute is the last stage's,
  // but stage 1 sets the pace: in the steady state it never waits, so it is busy m x 1.5 T and
  // every other stage idles for it.
  const int p = 4, m = 8;
  const double t = kTf + kTb;
  auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, chunk(1));
  ChunkCosts talky = chunk(1);
  talky.tp_forward_s = 0.5 * kTf;
  talky.tp_backward_s = 0.5 * kTb;
  costs.stages[1].chunks.assign(1, talky);
  costs.stages[p - 1].chunks.assign(1, chunk(1.2));
  MetricInputs in;
  in.num_devices = p;
  in.tokens_per_step = m;
  const StepMetrics got =
      compute_step_metrics(replay(build_task_graph(costs, build_schedule(costs.schedule, p, m, 1))), in);
  REQUIRE(got.stages.size() == static_cast<std::size_t>(p));
  // The old rule, the most forward + backward + recompute, picks the last stage.
  int most_compute = 0;
  for (int s = 1; s < p; ++s) {
    const auto& b = got.stages[static_cast<std::size_t>(s)];
    const auto& c = got.stages[static_cast<std::size_t>(most_compute)];
    if (b.forward_s + b.backward_s + b.recompute_s > c.forward_s + c.backward_s + c.recompute_s) most_compute = s;
  }
  CHECK(most_compute == p - 1);
  CHECK(got.critical_stage == 1);
  CHECK(critical_stage_of(got.stages) == 1);
  // The critical stage's work as replayed (step - its bubble) is m x 1.5 T: a floor for the step,
  // which the no-bubble counterfactual reads. The last stage's (m x 1.2 T) is under it: taking its
  // bubble off the step would promise a step below stage 1's own work.
  const auto work = [&](int s) { return got.step_time_s - got.stages[static_cast<std::size_t>(s)].bubble_s; };
  CHECK(work(1) == Approx(m * 1.5 * t).epsilon(1e-9));
  CHECK(work(p - 1) == Approx(m * 1.2 * t).epsilon(1e-9));
  for (int s = 0; s < p; ++s) CHECK(work(s) <= work(1) + 1e-12);
  CHECK(got.critical_stage_bubble_fraction == Approx(got.stages[1].bubble_s / got.step_time_s).epsilon(1e-12));
}

TEST_CASE("critical stage: representative and full replays of a uniform cluster name the same stage",
          "[metrics][bubble]") {
  // PP 2 x DP 4 with the embedding on stage 0 and the head on stage 1 (stages differ, ranks do not).
  const Scenario sc = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml");
  SimOptions options;
  options.record_timeline = false;
  const StepMetrics one = simulate(sc, options).metrics;
  options.mode = ReplayMode::full;
  const StepMetrics all = simulate(sc, options).metrics;
  CHECK(all.step_time_s == Approx(one.step_time_s).epsilon(1e-12));
  CHECK(all.critical_stage == one.critical_stage);
  CHECK(all.critical_stage_bubble_fraction == Approx(one.critical_stage_bubble_fraction).epsilon(1e-9));
}

TEST_CASE("bubble figures: explain's bubble share and no-bubble counterfactual are the critical stage's figure, and "
          "its text and JSON also give the mean over stages under run's name",
          "[explore][bubble]") {
  // PP 2 with the embedding on stage 0 and the head on stage 1: the stages' compute differs.
  const Scenario sc = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml");
  const Explanation e = explain(sc);
  const StepMetrics& m = e.baseline;
  CHECK(m.critical_stage == critical_stage_of(m.stages));
  REQUIRE(m.stages.size() == 2);
  CHECK(m.critical_stage_bubble_fraction ==
        Approx(m.stages[static_cast<std::size_t>(m.critical_stage)].bubble_s / m.step_time_s));
  CHECK(m.bubble_fraction == Approx((m.stages[0].bubble_s + m.stages[1].bubble_s) / 2 / m.step_time_s));
  REQUIRE(std::abs(m.bubble_fraction - m.critical_stage_bubble_fraction) > 0.001);  // they differ here
  double share = -1;
  for (const auto& [what, fraction] : e.shares)
    if (what == "pipeline bubble") share = fraction;
  CHECK(share == Approx(m.critical_stage_bubble_fraction));
  bool counterfactual = false;
  for (const auto& c : e.counterfactuals) {
    if (c.what.rfind("no bubble on the critical stage", 0) != 0) continue;
    counterfactual = true;
    CHECK(c.saving == Approx(m.critical_stage_bubble_fraction));
  }
  CHECK(counterfactual);
  const auto j = explanation_json(sc, e);
  CHECK(j["bubble_fraction"].get<double>() == Approx(m.bubble_fraction));
  CHECK(j["critical_stage_bubble_fraction"].get<double>() == Approx(m.critical_stage_bubble_fraction));
  char line[160];
  std::snprintf(line, sizeof line, "(bubble: %.1f%% on critical stage %d; %.1f%% mean over stages",
                100 * m.critical_stage_bubble_fraction, m.critical_stage, 100 * m.bubble_fraction);
  CHECK_THAT(format_explanation(sc, e), Catch::Contains(line));
  // run on the same scenario prints the same two values under the same names.
  SimOptions options;
  options.record_timeline = false;
  const SimResult r = simulate(sc, options);
  CHECK(r.metrics.bubble_fraction == m.bubble_fraction);
  CHECK(r.metrics.critical_stage_bubble_fraction == m.critical_stage_bubble_fraction);
}

TEST_CASE("bubble figures: sweep's CSV and JSON carry both under run's names, the new column last",
          "[explore][bubble]") {
  const std::string path = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml";
  const auto r = sweep(path, {parse_grid_axis("plan.micro_batch_size=1")});
  REQUIRE(r.rows.size() == 1);
  REQUIRE(r.rows[0].outcome.status == PlanStatus::ok);
  SimOptions options;
  options.record_timeline = false;
  const StepMetrics m = simulate(load_scenario(path, {{"plan.micro_batch_size", "1"}}), options).metrics;
  const auto j = nlohmann::json::parse(sweep_json(r));
  CHECK(j["rows"][0]["bubble_fraction"].get<double>() == Approx(m.bubble_fraction));
  CHECK(j["rows"][0]["critical_stage_bubble_fraction"].get<double>() == Approx(m.critical_stage_bubble_fraction));
  const std::string csv = sweep_csv(r);
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK_THAT(header, Catch::EndsWith(",bubble_fraction,critical_stage_bubble_fraction"));
  const std::string row = csv.substr(header.size() + 1, csv.find('\n', header.size() + 1) - header.size() - 1);
  const double last = std::stod(row.substr(row.rfind(',') + 1));
  CHECK(last == Approx(m.critical_stage_bubble_fraction).epsilon(1e-5));
}
