#pragma once
// Steps back to back without the end-of-step synchronisation: Qi et al. 2024 ("Zero Bubble
// Pipeline Parallelism", Section 4, optimizer post-validation; the reference code's
// --enable-optimizer-post-validation, sail-sg/zero-bubble-pipeline-parallelism @ 39f2c186)
// step each stage's optimizer as soon as that stage's gradients are ready and check the
// global gradient norm and NaN/Inf a step later, so a stage starts its next step when its own
// step is done, not when every stage is. In steady state a step then costs the period between
// consecutive ends, not the one step's span: ZB-H2's parallelogram tiles with no bubble.
#include <vector>

#include "trainsim/graph/task_graph.hpp"
#include "trainsim/sim_types.hpp"

namespace trainsim {

struct ReplayOptions;  // trainsim/engine/engine.hpp: the graph's headers do not include the engine's

// Forwards each stage runs in a step before its post-validation point (the reference's
// auto_schedule.py ilp_results at f68d3879): stage j's own point is the start of its last
// forward before its first B (f_j forwards before that B, the last starting at j + f_j - 1 in
// forward times); the reference puts stage s's at the latest of those over j >= s, so stage s
// runs min(f_s, max_{j>=s}(j + f_j - 1) - s) forwards before it.
std::vector<int> post_validation_points(const TaskGraph& step);

// Two copies of `step`, the second's tasks on each stage waiting (through one zero-length
// join task per stage) for every task of the first copy on that stage, and for nothing on
// the other stages: stage s's step 2 starts when its own step 1 ends, except for what
// post-validation still synchronises: stage s's optimizer waits for stage s-1's last pass (the
// pre-step chain of grad norm and inf flag, in both steps), and in step 2 stage s runs its
// post_validation_points forwards, then waits for stage s+1 to reach its own point.
TaskGraph chain_two_steps(const TaskGraph& step);

// One step with the pre-step chain alone: how the first step of the pair ends.
TaskGraph with_pre_step_chain(const TaskGraph& step);

// The period of steps without the barrier: the end of the chained pair minus the end of its
// first step (with_pre_step_chain), picoseconds.
SimTime post_validation_period(const TaskGraph& step, const ReplayOptions& options);

}  // namespace trainsim
