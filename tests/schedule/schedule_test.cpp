#include "trainsim/schedule/schedule.hpp"
#include "order_text.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "trainsim/common/error.hpp"

using namespace trainsim;

namespace {
std::string text(const StageOrder& order) { return testing::order_text(order); }
}  // namespace

TEST_CASE("GPipe runs every forward, then every backward", "[schedule]") {
  const auto orders = build_schedule(PipelineSchedule::gpipe, 2, 3, 1);
  REQUIRE(orders.size() == 2);
  for (const auto& o : orders) CHECK(text(o) == "F0.0 F1.0 F2.0 B0.0 B1.0 B2.0");
}

TEST_CASE("1F1B follows Megatron: p-s-1 warmup forwards, 1F1B pairs, cooldown backwards", "[schedule]") {
  const auto orders = build_schedule(PipelineSchedule::one_f_one_b, 3, 4, 1);
  CHECK(text(orders[0]) == "F0.0 F1.0 F2.0 B0.0 F3.0 B1.0 B2.0 B3.0");
  CHECK(text(orders[1]) == "F0.0 F1.0 B0.0 F2.0 B1.0 F3.0 B2.0 B3.0");
  CHECK(text(orders[2]) == "F0.0 B0.0 F1.0 B1.0 F2.0 B2.0 F3.0 B3.0");
}

TEST_CASE("1F1B with fewer micro-batches than stages caps the warmup at m", "[schedule]") {
  const auto orders = build_schedule(PipelineSchedule::one_f_one_b, 4, 2, 1);
  CHECK(text(orders[0]) == "F0.0 F1.0 B0.0 B1.0");
  CHECK(text(orders[3]) == "F0.0 B0.0 F1.0 B1.0");
}

TEST_CASE("Interleaved 1F1B matches Megatron's forward_backward_pipelining_with_interleaving", "[schedule]") {
  // p=2, v=2, m=4: warmup (p-s-1)*2 + (v-1)*p; k-th forward runs chunk (k/p)%v on
  // micro-batch (k/(p*v))*p + k%p; backwards take the chunks in reverse.
  const auto orders = build_schedule(PipelineSchedule::interleaved, 2, 4, 2);
  CHECK(text(orders[0]) == "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0");
  CHECK(text(orders[1]) == "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0");
}

TEST_CASE("Interleaved 1F1B with m == p warms up with every forward (Megatron's all_warmup)", "[schedule]") {
  const auto orders = build_schedule(PipelineSchedule::interleaved, 2, 2, 2);
  CHECK(text(orders[1]) == "F0.0 F1.0 F0.1 F1.1 B0.1 B1.1 B0.0 B1.0");
}

TEST_CASE("Every schedule runs each micro-batch and chunk exactly once per kind", "[schedule]") {
  for (auto sched : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved,
                     PipelineSchedule::zero_bubble_h1}) {
    const int p = 4, m = 8, v = sched == PipelineSchedule::interleaved ? 3 : 1;
    const auto orders = build_schedule(sched, p, m, v);
    for (const auto& order : orders) {
      std::vector<int> seen(static_cast<std::size_t>(m * v * 4), 0);
      for (const auto& w : order)
        ++seen[static_cast<std::size_t>((w.microbatch * v + w.chunk) * 4 + static_cast<int>(w.kind))];
      int items = 0;
      for (int x : seen) {
        CHECK(x <= 1);
        items += x;
      }
      CHECK(items == (sched == PipelineSchedule::zero_bubble_h1 ? 3 : 2) * m * v);
    }
  }
}

TEST_CASE("ZB-H1 splits backward into B and W and defers W only after its B", "[schedule]") {
  const auto orders = build_schedule(PipelineSchedule::zero_bubble_h1, 3, 4, 1);
  CHECK(text(orders[2]) == "F0.0 Bi0.0 F1.0 Bi1.0 F2.0 Bi2.0 W0.0 F3.0 Bi3.0 W1.0 W2.0 W3.0");
  CHECK(text(orders[0]) == "F0.0 F1.0 F2.0 Bi0.0 W0.0 F3.0 Bi1.0 W1.0 Bi2.0 W2.0 Bi3.0 W3.0");
  for (std::size_t stage = 0; stage < orders.size(); ++stage) {
    // Micro-batches alive (forward done, W not yet): p on every stage, 1F1B's peak on stage 0
    // (ZB-H1's memory limit); the later stages hold W longer, up to that same limit.
    int alive = 0, peak = 0;
    for (const auto& w : orders[stage]) {
      if (w.kind == WorkKind::forward) ++alive;
      if (w.kind == WorkKind::backward_weight) --alive;
      peak = std::max(peak, alive);
    }
    CAPTURE(stage);
    CHECK(peak == 3);
    CHECK(alive == 0);
  }
}

TEST_CASE("Interleaving needs micro-batches in multiples of the pipeline size", "[schedule]") {
  CHECK_THROWS_AS(build_schedule(PipelineSchedule::interleaved, 4, 6, 2), ConfigError);
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::interleaved, 4, 6, 2),
                    Catch::Contains("multiple of the pipeline size (4)"));
  CHECK_THROWS_AS(build_schedule(PipelineSchedule::one_f_one_b, 4, 8, 2), ConfigError);
}
