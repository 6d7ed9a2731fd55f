#include "trainsim/schedule/schedule.hpp"
#include "order_text.hpp"

#include <algorithm>
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

namespace {
// Steady-state steps of a stage: none where it warms up with every pass.
long steady(const StageOrder& o) {
  return std::count_if(o.begin(), o.end(), [](const WorkItem& w) { return w.steady_forward; });
}
}  // namespace

TEST_CASE("Interleaved 1F1B with m == p warms up with every forward (Megatron 2021) or per stage (Megatron-Core)", "[schedule]") {
  const MicrobatchGroups megatron_2021{MicrobatchGrouping::megatron_2021, 0};
  const auto orders = build_schedule(PipelineSchedule::interleaved, 2, 2, 2, megatron_2021);
  CHECK(text(orders[1]) == "F0.0 F1.0 F0.1 F1.1 B0.1 B1.1 B0.0 B1.0");
  for (const StageOrder& o : orders) CHECK(steady(o) == 0);
  // Megatron-Core (since 4295be1a6c) and PyTorch keep the warm-up rule there, each stage capping
  // its own at m v (are_all_microbatches_in_warmup, _get_warmup_ops): only the first stage
  // (2 (p - 1) + (v - 1) N = 4 = m v) runs every forward first.
  for (const MicrobatchGroups& g : {MicrobatchGroups{}, MicrobatchGroups{MicrobatchGrouping::torch_rounds, 0}}) {
    const auto core = build_schedule(PipelineSchedule::interleaved, 2, 2, 2, g);
    CHECK(core[0] == orders[0]);
    CHECK(text(core[1]) == "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 B0.0 B1.0");
    CHECK(steady(core[1]) == 2);
  }
  // PyTorch's one round of m < p: warm-ups 9, 7, 5, 3 capped at 6. Stage 2's leaves one pass:
  // the same order as warming up with every pass, but its last forward opens a steady step.
  const auto round = build_schedule(PipelineSchedule::interleaved, 4, 3, 2, {MicrobatchGrouping::torch_rounds, 0});
  CHECK(text(round[2]) == text(round[1]));
  CHECK(text(round[3]) == "F0.0 F1.0 F2.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 B0.0 B1.0 B2.0");
  CHECK(steady(round[1]) == 0);
  CHECK(steady(round[2]) == 1);
  CHECK(round[2][5].steady_forward);
  CHECK(steady(round[3]) == 3);
  CHECK(steady(build_schedule(PipelineSchedule::interleaved, 4, 8, 2)[3]) > 0);
}

TEST_CASE("Megatron-Core's tunable interleaving: groups of N micro-batches run chunk after chunk", "[schedule]") {
  // model_parallel_config.py's own example: PP 2, VP 2, N 3, M 5 gives the table
  // micro-batch 0 1 2 0 1 2 3 4 3 4, chunk 0 0 0 1 1 1 0 0 1 1 (schedules.py get_schedule_table).
  const MicrobatchGroups n3{MicrobatchGrouping::megatron_core, 3};
  const auto orders = build_schedule(PipelineSchedule::interleaved, 2, 5, 2, n3);
  std::string forwards;
  for (const WorkItem& w : orders[0])
    if (w.kind == WorkKind::forward) forwards += std::to_string(w.microbatch) + "." + std::to_string(w.chunk) + " ";
  CHECK(forwards == "0.0 1.0 2.0 0.1 1.1 2.1 3.0 4.0 3.1 4.1 ");
  // Warm-up 2 (p - s - 1) + (v - 1) N: 5 on stage 0, 3 on stage 1; backwards mirror the chunks.
  CHECK(text(orders[1]) == "F0.0 F1.0 F2.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.0 B0.0 F4.0 B1.0 F3.1 B2.0 F4.1 B3.1 B4.1 B3.0 B4.0");
  // overlap_moe_expert_parallel_comm: one more warm-up forward on every stage (get_pp_rank_microbatches).
  const auto combined = build_schedule(PipelineSchedule::interleaved, 2, 5, 2, {MicrobatchGrouping::megatron_core, 3, 1});
  CHECK(text(combined[1]) ==
        "F0.0 F1.0 F2.0 F0.1 F1.1 B0.1 F2.1 B1.1 F3.0 B2.1 F4.0 B0.0 F3.1 B1.0 F4.1 B2.0 B3.1 B4.1 B3.0 B4.0");
  // N = p with m a multiple of p is the 2021 schedule, item for item.
  for (int m : {8, 12, 16}) {
    CHECK(build_schedule(PipelineSchedule::interleaved, 4, m, 3, {}) ==
          build_schedule(PipelineSchedule::interleaved, 4, m, 3, {MicrobatchGrouping::megatron_2021, 0}));
    CHECK(build_schedule(PipelineSchedule::interleaved, 4, m, 3, {MicrobatchGrouping::torch_rounds, 0}) ==
          build_schedule(PipelineSchedule::interleaved, 4, m, 3, {}));
  }
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

TEST_CASE("Interleaving takes the counts of micro-batches its framework takes", "[schedule]") {
  const MicrobatchGroups megatron_2021{MicrobatchGrouping::megatron_2021, 0};
  CHECK_THROWS_AS(build_schedule(PipelineSchedule::interleaved, 4, 6, 2, megatron_2021), ConfigError);
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::interleaved, 4, 6, 2, megatron_2021),
                    Catch::Contains("multiple of the pipeline size (4)"));
  // Megatron-Core: N in [p, m], the last group 0 or >= p (forward_backward_pipelining_with_interleaving).
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::interleaved, 4, 6, 2),
                    Catch::Contains("last group of micro-batches (6 % 4 = 2)"));
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::interleaved, 4, 3, 2), Catch::Contains("at least as many"));
  CHECK_NOTHROW(build_schedule(PipelineSchedule::interleaved, 4, 6, 2, {MicrobatchGrouping::megatron_core, 6}));
  CHECK_NOTHROW(build_schedule(PipelineSchedule::interleaved, 4, 10, 2, {MicrobatchGrouping::megatron_core, 6}));
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::interleaved, 4, 10, 2, {MicrobatchGrouping::megatron_core, 3}),
                    Catch::Contains("outside [pipeline size 4, micro-batches 10]"));
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::interleaved, 4, 10, 2, {MicrobatchGrouping::megatron_core, 8}),
                    Catch::Contains("(10 % 8 = 2)"));
  // PyTorch: rounds max(1, m / p) must divide m: 10 on 4 stages is 2 rounds of 5, 3 one of 3; 9 is not.
  const MicrobatchGroups torch{MicrobatchGrouping::torch_rounds, 0};
  CHECK_NOTHROW(build_schedule(PipelineSchedule::interleaved, 4, 10, 2, torch));
  CHECK_NOTHROW(build_schedule(PipelineSchedule::interleaved, 4, 3, 2, torch));
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::interleaved, 4, 9, 2, torch),
                    Catch::Contains("multiple of its rounds, max(1, m / p) = 2"));
  CHECK_THROWS_AS(build_schedule(PipelineSchedule::one_f_one_b, 4, 8, 2), ConfigError);
}

TEST_CASE("A chunk holds its weight gradients from its first backward to the end of its last", "[schedule][memory]") {
  auto item = [](WorkKind kind, int microbatch, int chunk) {
    WorkItem w;
    w.kind = kind, w.microbatch = microbatch, w.chunk = chunk;
    return w;
  };
  const WorkKind F = WorkKind::forward, B = WorkKind::backward;
  SECTION("every forward first: the later chunk's gradients are freed before the earlier chunk's exist") {
    const StageOrder order = {item(F, 0, 0), item(F, 1, 0), item(F, 0, 1), item(F, 1, 1),
                              item(B, 0, 1), item(B, 1, 1), item(B, 0, 0), item(B, 1, 0)};
    const InFlight f = activations_in_flight(order, 2, kWeightGradActivationShare, true);
    CHECK(f.units == 4);
    REQUIRE(f.units_with_held_gradients.size() == 3u);
    CHECK(f.units_with_held_gradients[0] == 4);  // the warm-up
    CHECK(f.units_with_held_gradients[1] == 4);  // chunk 1's first backward allocates beside them
    CHECK(f.units_with_held_gradients[2] == InFlight::kNever);
  }
  SECTION("a forward between the chunks' backwards: both hold gradients at once") {
    const StageOrder order = {item(F, 0, 0), item(F, 0, 1), item(B, 0, 1), item(F, 1, 0),
                              item(B, 0, 0), item(F, 1, 1), item(B, 1, 1), item(B, 1, 0)};
    const InFlight f = activations_in_flight(order, 2, kWeightGradActivationShare, true);
    CHECK(f.units_with_held_gradients[0] == 2);
    CHECK(f.units_with_held_gradients[1] == 2);  // chunk 1's B, then the forward after it
    CHECK(f.units_with_held_gradients[2] == 2);  // chunk 0's first B, then the forward of 1.1
  }
  SECTION("split backwards: W makes the weight gradient, B does not") {
    const StageOrder order = {item(F, 0, 0), item(WorkKind::backward_input, 0, 0), item(F, 1, 0),
                              item(WorkKind::backward_weight, 0, 0), item(WorkKind::backward_input, 1, 0),
                              item(WorkKind::backward_weight, 1, 0)};
    const InFlight f = activations_in_flight(order, 1, 0.5, true);
    CHECK(f.units_with_held_gradients[0] == Approx(1.5));  // F1 beside B0's kept half
    CHECK(f.units_with_held_gradients[1] == Approx(1.5));  // W0 starts with the same
  }
  SECTION("one chunk: the gradients meet the activations' peak, as the memory model counted them") {
    for (int s = 0; s < 4; ++s) {
      const InFlight f = activations_in_flight(build_schedule(PipelineSchedule::one_f_one_b, 4, 8, 1)[s], 1, kWeightGradActivationShare, true);
      CHECK(f.units_with_held_gradients[1] == f.units);
    }
  }
}
