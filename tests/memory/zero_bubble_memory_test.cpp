// Peak memory of the zero-bubble schedules against the measured runs of Qi et al.
// ("Zero Bubble Pipeline Parallelism", Table 4; the ZB-V version, Table 6), set up as the
// ZB-1p / 1F1B rows of memory_model_test.cpp are (fp16, no flash attention, the paper's
// uneven first and last stage), and ZB-V's layout in the memory model.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "../model/reference_models.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

struct Row {
  const char* id;
  std::int64_t h;
  int layers, heads, pp, micro_batch, microbatches;
  PipelineSchedule schedule;
  double measured_gb;
};

Scenario scenario_of(const Row& row) {
  Scenario sc;
  sc.name = row.id;
  sc.model = plain_gpt(row.h, row.layers, row.heads, 51200, 1024);
  ParallelPlan p = plan(1, row.pp, 1, row.micro_batch, row.micro_batch * row.microbatches, 1024);
  p.use_flash_attn = false;
  p.schedule = row.schedule;
  p.precision = Precision::fp16;
  // layers = k p - 2: the first and last stage one layer short (the paper's setup).
  p.layers_per_stage.assign(static_cast<std::size_t>(row.pp), (row.layers + 2) / row.pp);
  p.layers_per_stage.front() -= 1;
  p.layers_per_stage.back() -= 1;
  sc.plan = p;
  sc.hardware.device.hbm_bytes = 80e9;
  sc.num_devices = row.pp;
  return sc;
}

double peak_gb(const Row& row) {
  const Scenario sc = scenario_of(row);
  return estimate_memory(sc, build_workload(sc.model, sc.plan)).peak_allocated_bytes / 1e9;
}

}  // namespace

TEST_CASE("ZB-2p (replayed as ZB-H2) and ZB-V peak memory against the paper's runs", "[memory][zb][validation]") {
  // Each pair: a zero-bubble run and the 1F1B run of the same setting. The ratio of their
  // peaks is what the schedule changes; the measured ratios are 59/30, 51/32 and 64/61.
  const Row rows[][2] = {
      {{"qi24-zb-t4-1.5B-m24-ZB-2p", 2304, 22, 24, 8, 6, 24, PipelineSchedule::zero_bubble_h2, 59},
       {"qi24-zb-t4-1.5B-m24-1F1B", 2304, 22, 24, 8, 6, 24, PipelineSchedule::one_f_one_b, 30}},
      {{"qi24-zb-t4-14.6B-m48-ZB-2p", 5120, 46, 40, 16, 1, 48, PipelineSchedule::zero_bubble_h2, 51},
       {"qi24-zb-t4-14.6B-m48-1F1B", 5120, 46, 40, 16, 1, 48, PipelineSchedule::one_f_one_b, 32}},
      {{"qi24-zbv-t6-6.2B-16gpu-m48-ZB-V", 4096, 30, 32, 16, 6, 48, PipelineSchedule::zero_bubble_v, 64},
       {"qi24-zbv-t6-6.2B-16gpu-m48-1F1B", 4096, 30, 32, 16, 6, 48, PipelineSchedule::one_f_one_b, 61}},
  };
  for (const auto& pair : rows) {
    const double zb = peak_gb(pair[0]), base = peak_gb(pair[1]);
    const double measured_ratio = pair[0].measured_gb / pair[1].measured_gb;
    CAPTURE(pair[0].id, zb, pair[0].measured_gb, base, pair[1].measured_gb, zb / base, measured_ratio);
    CHECK(rel(zb, pair[0].measured_gb) < 0.10);
    CHECK(rel(zb / base, measured_ratio) < 0.10);
  }
}

TEST_CASE("ZB-V: the first device holds the embedding and the head, two chunks of activations", "[memory][zb]") {
  Row row{"zbv", 4096, 32, 32, 4, 1, 8, PipelineSchedule::zero_bubble_v, 0};
  Scenario sc = scenario_of(row);
  sc.plan.layers_per_stage.clear();  // 8 layers a stage, 4 a chunk
  const Workload w = build_workload(sc.model, sc.plan);
  const MemoryReport r = estimate_memory(sc, w);
  REQUIRE(r.stages.size() == 4u);
  // Stage 0 holds the embedding and the head (vocabulary 51200 x h each, untied by PP).
  CHECK(r.stages[0].parameters - r.stages[1].parameters == Approx(w.embedding.parameters + w.head.parameters));
  CHECK(r.stages[3].parameters == Approx(r.stages[1].parameters));
  // Activations: the order's own count of chunk units (half a stage's layers each).
  const auto orders = build_schedule(PipelineSchedule::zero_bubble_v, 4, 8, 2);
  for (int s = 1; s < 4; ++s) {
    CAPTURE(s);
    const double units = activations_in_flight(orders[static_cast<std::size_t>(s)], 2).units;
    CHECK(r.stages[static_cast<std::size_t>(s)].activations == Approx(units * r.stages[1].activations_per_microbatch / 2));
  }
}
