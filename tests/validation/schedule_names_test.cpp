// How validate reads a row's `schedule` field: the names sources write (case, spaces and
// underscores free) map to the schedule trainsim replays; a name it does not replay is reported,
// never replayed as 1F1B.
#include <catch2/catch.hpp>
#include <string>

#include "shipped_rows.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
// A calibration row with a pipeline (GPT-3 175B: 96 layers, PP 8), its schedule relabelled.
MeasuredRun pipelined_row(const std::string& schedule, std::optional<int> vpp) {
  MeasuredRun run = testing::shipped_row("calibration.yaml", "korthikanti22-t5-175B-full");
  run.group.clear();
  run.schedule = schedule;
  run.vpp = vpp;
  return run;
}

PipelineSchedule replayed(const std::string& schedule, std::optional<int> vpp = std::nullopt) {
  return scenario_for_run(pipelined_row(schedule, vpp), testing::shipped_hardware_options()).plan.schedule;
}
}  // namespace

TEST_CASE("validate reads a row's schedule as sources name it", "[validation][schedule]") {
  for (const char* name : {"1F1B", "1f1b", "PipeDream-Flush", "1F1B (non-interleaved)", ""}) {
    INFO(name);
    CHECK(replayed(name) == PipelineSchedule::one_f_one_b);
  }
  for (const char* name : {"Interleaved 1F1B", "interleaved", "VPP", "1f1b_interleaved"}) {
    INFO(name);
    CHECK(replayed(name, 2) == PipelineSchedule::interleaved);
  }
  CHECK(replayed("", 2) == PipelineSchedule::interleaved);  // no name, a chunk count
  CHECK(replayed("GPipe") == PipelineSchedule::gpipe);
  CHECK(replayed("ZB-H1") == PipelineSchedule::zero_bubble_h1);
  CHECK(replayed("zb_1p") == PipelineSchedule::zero_bubble_h1);
  CHECK(replayed("ZB-2p*") == PipelineSchedule::zero_bubble_2p);
  CHECK(replayed("zb-h2") == PipelineSchedule::zero_bubble_h2);
  CHECK(replayed("ZB V", 2) == PipelineSchedule::zero_bubble_v);
  CHECK(replayed("DualPipeV") == PipelineSchedule::dualpipev);
  CHECK(replayed("DualPipe") == PipelineSchedule::dualpipe);
}

TEST_CASE("validate reports a schedule it does not replay, and reads 1F1B with chunks as interleaved",
          "[validation][schedule]") {
  const ValidationRow chimera = validate_run(pipelined_row("Chimera", std::nullopt), testing::shipped_hardware_options());
  CHECK_THAT(chimera.failure, Catch::Matchers::Contains("schedule 'Chimera'"));
  // Megatron's interleaving is its 1F1B over virtual stages; tables name it by the plain word.
  CHECK(replayed("1F1B", 3) == PipelineSchedule::interleaved);
  CHECK(replayed("1F1B", 1) == PipelineSchedule::one_f_one_b);
}
