// The schedule table (issue 16): every schedule is one entry, and each entry's parts agree
// with each other: the closed form of activations in flight with the count on its own orders,
// the depths the search offers with the shapes its orders accept, the chunk count with the
// orders' chunks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/schedule/schedule_entry.hpp"

using namespace trainsim;

TEST_CASE("Every schedule has a whole entry", "[schedule][table]") {
  REQUIRE(schedule_table().size() == all_schedules().size());
  for (PipelineSchedule s : all_schedules()) {
    const ScheduleEntry& e = schedule_entry(s);
    INFO(to_string(s));
    CHECK(e.schedule == s);
    CHECK(std::string(e.source).size() > 10);
    CHECK(e.idle_relative != nullptr);
    CHECK(e.in_flight != nullptr);
    CHECK(e.shape_problem != nullptr);
    CHECK(e.search_depths != nullptr);
    CHECK(e.orders != nullptr);
    CHECK(schedule_from_name(to_string(s)) == s);
  }
}

TEST_CASE("A schedule's name is its entry's: to_string, schedule_from_name and plan.schedule's choices read it",
          "[schedule][table]") {
  std::string joined;
  std::vector<std::string> seen;
  for (const ScheduleEntry& e : schedule_table()) {
    INFO(e.name);
    CHECK(std::string(e.name).size() > 0);
    CHECK(std::string(to_string(e.schedule)) == e.name);
    CHECK(schedule_from_name(e.name) == e.schedule);
    CHECK(std::find(seen.begin(), seen.end(), e.name) == seen.end());  // one name per schedule
    seen.push_back(e.name);
    joined += (joined.empty() ? "" : "|") + std::string(e.name);
  }
  CHECK(std::string(schedule_names()) == joined);
  CHECK(joined == "gpipe|1f1b|interleaved|zb-h1|zb-h2|zb-2p|zb-v|dualpipe|dualpipev");  // the names scenarios use
  CHECK_FALSE(schedule_from_name("").has_value());
  CHECK_FALSE(schedule_from_name("1F1B").has_value());
}

// The interleaving rules of the frameworks (MicrobatchGrouping), Megatron-Core's with its
// default and with a group of p + 1.
std::vector<MicrobatchGroups> groupings(int p) {
  return {{MicrobatchGrouping::megatron_2021, 0},
          {MicrobatchGrouping::megatron_core, 0},
          {MicrobatchGrouping::megatron_core, p + 1},
          {MicrobatchGrouping::megatron_core, 0, 1},  // the combined 1F1B's extra warm-up forward
          {MicrobatchGrouping::megatron_core, 0, 0, 1},  // Vocabulary Parallelism's vocab-2 warm-up
          {MicrobatchGrouping::megatron_core, 0, 0, 2},  // and vocab-1's
          {MicrobatchGrouping::torch_rounds, 0}};
}

TEST_CASE("Each entry's closed form of activations in flight against the count on its orders", "[schedule][table][memory]") {
  int compared = 0;
  for (const ScheduleEntry& e : schedule_table()) {
    for (int p = 1; p <= 6; ++p) {
      for (int m = 1; m <= 4 * p + 3; ++m) {
        for (const MicrobatchGroups& g : groupings(p)) {
          const int chunks = e.chunks > 0 ? e.chunks : 2;  // interleaved at v = 2
          if (e.shape_problem(p, m, chunks, g)) continue;
          const std::vector<StageOrder> orders = build_schedule(e.schedule, p, m, chunks, g);
          for (int s = 0; s < p; ++s) {
            INFO(to_string(e.schedule) << " p=" << p << " m=" << m << " stage " << s << " group " << g.size << " rule "
                                       << static_cast<int>(g.rule));
            const double counted = activations_in_flight(orders[static_cast<std::size_t>(s)], chunks).units;
            const double closed = e.in_flight(p, m, chunks, s, g);
            // Exact where the memory model takes the closed form instead of counting; a bound
            // (the paper's or reference's limit) where it counts.
            if (!e.count_in_flight_on_orders)
              CHECK(closed == Approx(counted));
            else
              CHECK(closed >= counted - 1e-9);
            ++compared;
          }
        }
      }
    }
  }
  CHECK(compared > 500);
}

TEST_CASE("Every depth the search offers is a shape the orders accept", "[schedule][table][search]") {
  for (const ScheduleEntry& e : schedule_table()) {
    for (int p : {2, 4, 6, 8}) {
      for (int m : {p, 2 * p, 2 * p + 1, 3 * p}) {
        for (int layers : {24, 30, 32, 36, 48}) {
          for (const MicrobatchGroups& g : groupings(p)) {
            for (int v : e.search_depths(p, m, layers, g)) {
              INFO(to_string(e.schedule) << " p=" << p << " m=" << m << " layers=" << layers << " v=" << v);
              const int chunks = e.chunks > 0 ? e.chunks : v;
              CHECK_FALSE(e.shape_problem(p, m, chunks, g).has_value());
              CHECK_NOTHROW(build_schedule(e.schedule, p, m, chunks, g));
              if (chunks > 1) CHECK(layers % (p * chunks / (e.layout == ChunkLayout::mirror ? 2 : 1)) == 0);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("An entry's orders hold its chunks, and the shape conditions refuse what the reference asserts",
          "[schedule][table]") {
  for (const ScheduleEntry& e : schedule_table()) {
    const int chunks = e.chunks > 0 ? e.chunks : 3;
    const int p = 4, m = 12;
    REQUIRE_FALSE(e.shape_problem(p, m, chunks, {}).has_value());
    int most = 0;
    for (const StageOrder& order : build_schedule(e.schedule, p, m, chunks))
      for (const WorkItem& w : order) most = std::max(most, w.chunk + 1);
    INFO(to_string(e.schedule));
    CHECK(most == chunks);
  }
  // dualpipe.py asserts an even rank count and an even number of chunks >= 2 ranks; dualpipev.py
  // chunks >= 2 ranks; Megatron's interleaving m a multiple of p.
  CHECK(schedule_entry(PipelineSchedule::dualpipe).shape_problem(3, 12, 2, {})->key_path == "plan.pipeline_model_parallel_size");
  CHECK(schedule_entry(PipelineSchedule::dualpipe).shape_problem(4, 9, 2, {})->key_path == "plan.global_batch_size");
  CHECK(schedule_entry(PipelineSchedule::dualpipev).shape_problem(4, 7, 2, {}).has_value());
  CHECK_FALSE(schedule_entry(PipelineSchedule::dualpipev).shape_problem(4, 8, 2, {}).has_value());
  CHECK(schedule_entry(PipelineSchedule::interleaved).shape_problem(4, 6, 2, {}).has_value());
  CHECK_THROWS_AS(build_schedule(PipelineSchedule::dualpipe, 4, 9, 2), ConfigError);
}
