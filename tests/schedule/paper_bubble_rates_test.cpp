// The zero-bubble paper's own model of its Table 4 runs, reproduced: Qi et al., "Zero Bubble
// Pipeline Parallelism" (ICLR 2024), Table 5 gives each setting's bubble rate as the authors
// computed it from their profile of that setting (Table 9: T_F, T_B, T_W and one P2P transfer
// T_comm, in ms), not as measured: (cost - m (T_F + T_B + T_W)) / cost. Fed the same profile,
// trainsim's orders and replay must give the same rates. The measured steps of those rows are
// 5-17% longer than this model on both sides (tests/validation/trends.yaml); that gap is outside
// the schedule and is not what this checks.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "pipeline_fixtures.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/step_chain.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;

namespace {

// One setting: its schedule, p stages, v chunks a stage, m micro-batches, the profile (ms) and
// Table 5's rate.
struct PaperSetting {
  PipelineSchedule schedule;
  int p, v, m;
  double t_f, t_b, t_w, t_comm;
  double table5_rate;
};

// Table 9's profile of each setting (the ZB-2p run's), per model size and micro-batch count.
constexpr double kF15[] = {18.522, 18.51, 18.55}, kB15[] = {18.086, 18.09, 18.10}, kW15[] = {9.337, 9.33, 9.32},
                 kC15[] = {0.601, 0.626, 0.762};
constexpr double kF146[] = {11.347, 11.31, 11.32}, kB146[] = {11.248, 11.25, 11.31}, kW146[] = {8.132, 8.10, 8.11},
                 kC146[] = {0.377, 0.378, 0.379};

std::vector<PaperSetting> settings(PipelineSchedule schedule, int v, const double (&rates_15)[3],
                                   const double (&rates_146)[3]) {
  std::vector<PaperSetting> out;
  const int m15[] = {24, 32, 64}, m146[] = {48, 64, 128};
  for (int i = 0; i < 3; ++i) {
    out.push_back({schedule, 8, v, m15[i], kF15[i], kB15[i], kW15[i], kC15[i], rates_15[i]});
    out.push_back({schedule, 16, v, m146[i], kF146[i], kB146[i], kW146[i], kC146[i], rates_146[i]});
  }
  return out;
}

// The rate trainsim's order and replay give at the profile: every stage alike (the profile is
// the median over stages), transfers on their own streams as the paper's model takes them.
// ZB-2p's steps are chained by the optimizer's post-validation, as the paper ran them: its
// cost is the period of the chained steps.
double replayed_rate(const PaperSetting& s) {
  const bool split = splits_backward(s.schedule);
  ChunkCosts chunk = testing::passes(s.t_f / 1e3 / s.v, (split ? s.t_b : s.t_b + s.t_w) / 1e3 / s.v,
                                     split ? s.t_w / 1e3 / s.v : 0.0);
  PipelineCosts costs = uniform_pipeline_costs(s.schedule, s.p, s.v, s.m, chunk);
  costs.p2p_s = s.t_comm / 1e3;
  costs.p2p_bytes = 1;
  MicrobatchGroups groups;
  if (s.schedule == PipelineSchedule::zero_bubble_2p) {
    groups.pass_times.forward.assign(static_cast<std::size_t>(s.p), s.t_f / 1e3);
    groups.pass_times.backward_input.assign(static_cast<std::size_t>(s.p), s.t_b / 1e3);
    groups.pass_times.backward_weight.assign(static_cast<std::size_t>(s.p), s.t_w / 1e3);
    groups.pass_times.transfer = s.t_comm / 1e3;
  }
  const auto orders = build_schedule(s.schedule, s.p, s.m, s.v, groups);
  const TaskGraph graph = build_task_graph(costs, orders);
  const SimTime cost = s.schedule == PipelineSchedule::zero_bubble_2p ? post_validation_period(graph, {})
                                                                        : replay(graph, {}).end;
  const double cost_ms = static_cast<double>(cost) * 1e-9;
  return 1.0 - s.m * (s.t_f + s.t_b + s.t_w) / cost_ms;
}

// One pass of the setting as a share of the paper's step: its longest pass (a chunk's, under
// interleaving; B and W as one where the schedule does not split them) over m (T_F + T_B + T_W)
// / (1 - rate). Where the two models may place a pass differently (a heuristic's discrete
// choice, a chunk at the end of the cool-down), their rates may differ by that much.
double one_pass_share(const PaperSetting& s) {
  const double longest = (splits_backward(s.schedule) ? std::max({s.t_f, s.t_b, s.t_w}) : std::max(s.t_f, s.t_b + s.t_w)) / s.v;
  return longest * (1.0 - s.table5_rate) / (s.m * (s.t_f + s.t_b + s.t_w));
}

}  // namespace

TEST_CASE("the zero-bubble paper's Table 5 bubble rates from its Table 9 profile: 1F1B and ZB-1p exactly",
          "[schedule][zb][paper]") {
  // 1F1B; ZB-1p is the searched schedule under 1F1B's memory, which for these shapes is ZB-H1.
  // Exact up to the tables' rounding (rates to 4 decimals, times to 3).
  std::vector<PaperSetting> all = settings(PipelineSchedule::one_f_one_b, 1, {0.2431, 0.1985, 0.1240},
                                           {0.2552, 0.2082, 0.1251});
  for (const PaperSetting& s : settings(PipelineSchedule::zero_bubble_h1, 1, {0.1585, 0.1242, 0.0674},
                                        {0.1397, 0.1088, 0.0576}))
    all.push_back(s);
  for (const PaperSetting& s : all) {
    CAPTURE(to_string(s.schedule), s.p, s.m);
    CHECK(replayed_rate(s) == Approx(s.table5_rate).margin(1e-4));
  }
}

TEST_CASE("the zero-bubble paper's Table 5 bubble rates from its Table 9 profile: ZB-2p and 1F1B-I",
          "[schedule][zb][paper]") {
  // Within one pass of the setting (one_pass_share), never below the paper's.
  // ZB-2p: the reference heuristic's order at the profile (schedule/zb_auto.hpp), steps chained.
  // Five of the six within 0.001; the 1.5B at m = 32 is 0.0108 against 0.0039 (9.6 ms in 1486,
  // half a forward): the heuristic is the reference code's at 39f2c186, a year after the paper's runs.
  for (const PaperSetting& s : settings(PipelineSchedule::zero_bubble_2p, 1, {0.0433, 0.0039, 0.0026},
                                        {0.0066, 0.0054, 0.0028})) {
    CAPTURE(s.p, s.m);
    const double rate = replayed_rate(s);
    CHECK(rate >= s.table5_rate - 1e-4);
    CHECK(rate == Approx(s.table5_rate).margin(one_pass_share(s)));
  }
  // 1F1B-I: the paper's interleaved baseline, one layer a chunk (3 a stage on both models).
  // trainsim's is 0.0014-0.0035 above the paper's (4-6 ms of a 1.2-4.1 s step: a dozen
  // transfers).
  for (const PaperSetting& s : settings(PipelineSchedule::interleaved, 3, {0.1055, 0.0818, 0.0443},
                                        {0.1104, 0.0852, 0.0445})) {
    CAPTURE(s.p, s.m);
    const double rate = replayed_rate(s);
    CHECK(rate >= s.table5_rate);
    CHECK(rate == Approx(s.table5_rate).margin(one_pass_share(s)));
  }
}
