#pragma once
// Steps back to back without the end-of-step synchronisation: Qi et al. 2024 ("Zero Bubble
// Pipeline Parallelism", Section 4, optimizer post-validation; the reference code's
// --enable-optimizer-post-validation, sail-sg/zero-bubble-pipeline-parallelism @ 39f2c186)
// step each stage's optimizer as soon as that stage's gradients are ready and check the
// global gradient norm and NaN/Inf a step later, so a stage starts its next step when its own
// step is done, not when every stage is. In steady state a step then costs the period between
// consecutive ends, not the one step's span: ZB-H2's parallelogram tiles with no bubble.
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/sim_types.hpp"

namespace trainsim {

struct ReplayOptions;  // trainsim/engine/engine.hpp: the graph's headers do not include the engine's

// Two copies of `step`, the second's tasks on each stage waiting (through one zero-length
// join task per stage) for every task of the first copy on that stage, and for nothing on
// the other stages: stage s's step 2 starts when its own step 1 ends.
TaskGraph chain_two_steps(const TaskGraph& step);

// The period of steps without the barrier: the end of the chained pair minus the end of one
// step (`one_step_end`, replay(step).end), picoseconds.
SimTime post_validation_period(const TaskGraph& step, SimTime one_step_end, const ReplayOptions& options);

}  // namespace trainsim
