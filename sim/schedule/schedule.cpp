// STUB: replaced by the schedule module.
#include "trainsim/common/error.hpp"
#include "trainsim/schedule/schedule.hpp"
namespace trainsim {
std::vector<StageOrder> build_schedule(PipelineSchedule, int, int, int) { throw SimError("build_schedule: not implemented"); }
}  // namespace trainsim
