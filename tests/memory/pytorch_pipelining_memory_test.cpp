// PyTorch's pipelining as torchtitan runs it (framework fsdp): what its stage objects hold.
#include <catch2/catch.hpp>

#include "../model/reference_models.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

// PyTorch's pipelining (FrameworkEntry::pipeline_keeps_microbatch_tensors): a stage object keeps a
// receive buffer per micro-batch for its input (not the first stage) and its output gradient (not
// the last), every output until the next step (the last stage's: the vocabulary-sharded logits),
// and its input's gradients.
TEST_CASE("PyTorch's pipeline stages keep per-micro-batch buffers and outputs, the last stage its logits",
          "[memory][pp][torchtitan]") {
  REQUIRE(framework_entry(Framework::fsdp).pipeline_keeps_microbatch_tensors.value);
  REQUIRE_FALSE(framework_entry(Framework::megatron_core).pipeline_keeps_microbatch_tensors.value);
  ModelSpec m = llama(4096, 8, 32, 8, 14336, 128256);
  ParallelPlan p = plan(2, 2, 2, 1, 8, 4096);  // TP 2, PP 2, DP 2: 4 micro-batches of one sequence
  p.framework = Framework::fsdp;
  p.zero_stage = 3;
  p.sequence_parallel = true;
  p.recompute_granularity = RecomputeGranularity::full;
  const int mbs = p.num_microbatches();
  REQUIRE(mbs == 4);
  const MemoryReport fsdp = memory_of(m, p, 8, 80e9);
  const double boundary = 2.0 * 4096 * 4096 / 2;  // s x h 16-bit, sequence-parallel over TP 2
  const double logits = 2.0 * 4096 * build_workload(m, p).padded_vocab_size / 2;
  // The first stage: gradient receive buffers and kept outputs; the last: input buffers, their
  // gradients and the logits of every micro-batch.
  CHECK(fsdp.stages[1].communication_buffers - fsdp.stages[0].communication_buffers ==
        Approx(mbs * logits).epsilon(1e-9));
  CHECK(fsdp.stages[0].communication_buffers >= 2 * mbs * boundary);
  // Megatron-Core's exchange holds one boundary gradient on every stage.
  p.framework = Framework::megatron_core;
  p.zero_stage = 0;
  p.use_distributed_optimizer = true;
  const MemoryReport mcore = memory_of(m, p, 8, 80e9);
  CHECK(mcore.stages[1].communication_buffers - mcore.stages[0].communication_buffers == Approx(0).margin(1));
}
