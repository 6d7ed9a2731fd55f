// Work split over processes (issue 19): the round-robin share, the outcome bytes, and sweep,
// search and the Monte Carlo run as three processes in turn (a gather that hands rank 0 what
// ranks 1 and 2 sent) against one process. The MPI transport itself: tests/cli/mpi_cli.cmake.
#include "trainsim/explore/distributed.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/explore/sweep.hpp"

using namespace trainsim;

namespace {

const std::string kDefault = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml";

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A job of `ranks` processes run one after the other in this process: ranks ranks-1 .. 1
// record their bytes (their gather returns nothing, as MPI's does off rank 0), then rank 0's
// gather returns its own bytes and theirs in rank order. `run(distribution)` is one process.
template <class Run>
auto as_processes(int ranks, const Run& run) {
  std::vector<std::string> sent(static_cast<std::size_t>(ranks));
  for (int rank = ranks - 1; rank >= 1; --rank) {
    Distribution d{rank, ranks, [&sent, rank](const std::string& mine) {
                     sent[static_cast<std::size_t>(rank)] = mine;
                     return std::vector<std::string>{};
                   }};
    (void)run(d);
  }
  Distribution root{0, ranks, [&sent](const std::string& mine) {
                      sent[0] = mine;
                      return sent;
                    }};
  return run(root);
}

}  // namespace

TEST_CASE("share_of deals indices 0..n-1 round-robin: every index to exactly one process", "[explore][distributed]") {
  CHECK(share_of(7, 0, 3) == std::vector<std::size_t>{0, 3, 6});
  CHECK(share_of(7, 1, 3) == std::vector<std::size_t>{1, 4});
  CHECK(share_of(7, 2, 3) == std::vector<std::size_t>{2, 5});
  CHECK(share_of(2, 3, 4).empty());  // more processes than items: some have none
  CHECK(share_of(5, 0, 1) == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK_THROWS_AS(share_of(5, 3, 3), SimError);
  CHECK_THROWS_AS(share_of(5, 0, 0), SimError);
}

TEST_CASE("an outcome survives its bytes field for field, doubles bit for bit", "[explore][distributed]") {
  PlanOutcome o;
  o.status = PlanStatus::out_of_memory;
  o.reason = "stage 1 needs 81.2 GiB, \"quoted\", with a comma";
  o.step_time_s = 0.1 + 0.2;  // not a short decimal
  o.tokens_per_s = std::numeric_limits<double>::denorm_min();
  o.tokens_per_s_per_device = -0.0;
  o.mfu = std::nextafter(0.5, 1.0);
  o.bubble_fraction = std::numeric_limits<double>::quiet_NaN();
  o.critical_stage_bubble_fraction = 1.0 / 7;
  o.peak_memory_bytes = 8.5e10;
  o.hbm_bytes = 8.0e10;
  o.stage_peak_memory_bytes = {1.5e10, 2.25e10};
  StageBreakdown b;
  b.stage = 3;
  b.forward_s = 1.0 / 3;
  b.peak_activation_bytes_replay = 7e9;
  o.stages = {StageBreakdown{}, b};
  const PlanOutcome back = decode_outcome(encode_outcome(o));
  CHECK(back.status == o.status);
  CHECK(back.reason == o.reason);
  CHECK(same_bits(back.step_time_s, o.step_time_s));
  CHECK(same_bits(back.tokens_per_s, o.tokens_per_s));
  CHECK(same_bits(back.tokens_per_s_per_device, o.tokens_per_s_per_device));
  CHECK(same_bits(back.mfu, o.mfu));
  CHECK(std::isnan(back.bubble_fraction));
  CHECK(same_bits(back.critical_stage_bubble_fraction, 1.0 / 7));
  CHECK(back.peak_memory_bytes == o.peak_memory_bytes);
  CHECK(back.hbm_bytes == o.hbm_bytes);
  CHECK(back.stage_peak_memory_bytes == o.stage_peak_memory_bytes);
  REQUIRE(back.stages.size() == 2);
  CHECK(back.stages[1].stage == 3);
  CHECK(same_bits(back.stages[1].forward_s, 1.0 / 3));
  CHECK(back.stages[1].peak_activation_bytes_replay == 7e9);
}

TEST_CASE("bytes that are not one outcome are an internal error, not a silent row", "[explore][distributed]") {
  PlanOutcome o;
  o.reason = "a reason";
  o.stages.resize(2);
  const std::string bytes = encode_outcome(o);
  CHECK_THROWS_AS(decode_outcome(bytes.substr(0, bytes.size() - 1)), SimError);
  CHECK_THROWS_AS(decode_outcome(bytes + "x"), SimError);
  CHECK_THROWS_AS(decode_outcome(""), SimError);
}

TEST_CASE("a sweep as three processes gives rank 0 the one-process table, CSV and JSON", "[explore][distributed]") {
  const std::vector<GridAxis> grid = {parse_grid_axis("plan.micro_batch_size=1,2,4,32"),
                                      parse_grid_axis("plan.tensor_model_parallel_size=1,2,3")};
  SweepOptions one;
  one.max_threads = 1;
  const SweepResult single = sweep(kDefault, grid, one);
  const SweepResult split = as_processes(3, [&](const Distribution& d) {
    SweepOptions o;
    o.distribution = d;
    return sweep(kDefault, grid, o);
  });
  // The grid has simulated, out-of-memory (mbs 32) and invalid (TP 3) rows.
  CHECK(format_sweep_table(split) == format_sweep_table(single));
  CHECK(sweep_csv(split) == sweep_csv(single));
  CHECK(sweep_json(split) == sweep_json(single));
  CHECK(format_sweep_table(single).find("invalid") != std::string::npos);
  CHECK(format_sweep_table(single).find("out of memory") != std::string::npos);
}

TEST_CASE("a search as two processes gives rank 0 the one-process top plans", "[explore][distributed]") {
  const Scenario scenario = load_scenario(kDefault);
  SearchOptions base;
  base.replay_limit = 7;
  base.top = 5;
  base.max_threads = 1;
  const SearchResult single = search_plans(scenario, base);
  const SearchResult split = as_processes(2, [&](const Distribution& d) {
    SearchOptions o = base;
    o.max_threads = 0;
    o.distribution = d;
    return search_plans(scenario, o);
  });
  REQUIRE(single.best.size() == 5);
  CHECK(format_search(scenario, split) == format_search(scenario, single));
  CHECK(search_json(scenario, split) == search_json(scenario, single));
}

TEST_CASE("a Monte Carlo as three processes gives rank 0 every sample of one process", "[explore][distributed]") {
  const Scenario scenario = load_scenario(kDefault, {{"variability.step_jitter_cv", "0.05"}});
  MonteCarloOptions base;
  base.samples = 11;
  base.seed = 3;
  base.max_threads = 1;
  const MonteCarloResult single = monte_carlo(scenario, base);
  const MonteCarloResult split = as_processes(3, [&](const Distribution& d) {
    MonteCarloOptions o = base;
    o.distribution = d;
    return monte_carlo(scenario, o);
  });
  CHECK(split.step_s == single.step_s);
  CHECK(split.slowest_device == single.slowest_device);
  CHECK(split.slowest_speed == single.slowest_speed);
  CHECK(format_monte_carlo(scenario, split) == format_monte_carlo(scenario, single));
  CHECK(monte_carlo_json(split).dump() == monte_carlo_json(single).dump());
  // The samples differ (jitter), so a lost or misplaced sample would show.
  CHECK(single.p99_s > single.p50_s);
}
