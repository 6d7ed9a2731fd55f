// Transformer Engine's cached dummy weight gradients in the stage's buffers (issue 18, B200 memory).
#include <catch2/catch.hpp>

#include "../model/reference_models.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

MemoryReport memory_on(const ModelSpec& m, ParallelPlan p, Framework framework, int devices) {
  p.framework = framework;
  p.use_distributed_optimizer = true;
  return memory_of(m, p, devices, 180e9);
}

}  // namespace

TEST_CASE("TE dummy wgrads: one 16-bit tensor per distinct linear weight shape of the stage", "[memory][te]") {
  ModelSpec m = llama3_70b();
  m.num_layers = 12;
  // TP 1: QKV 10240 x 8192, out 8192 x 8192, fc1 (gate+up) 57344 x 8192, fc2 8192 x 28672; the
  // twelve layers share the four shapes; the untied LM head is Megatron's own linear (not cached).
  const double tp1 = 2.0 * 8192.0 * (10240.0 + 8192.0 + 57344.0 + 28672.0);
  const ParallelPlan p1 = plan(1, 1, 8, 1, 8, 4096);
  const MemoryReport te = memory_on(m, p1, Framework::megatron_core, 8);
  const MemoryReport legacy = memory_on(m, p1, Framework::megatron_lm, 8);
  CHECK(te.stages[0].communication_buffers - legacy.stages[0].communication_buffers == Approx(tp1));
  CHECK(tp1 == 1711276032.0);  // 1.59 GiB: the SimuMax B200 Llama3-70B TP1 rows' missing memory
  // TP 4 shards every shape 4 ways.
  const ParallelPlan p4 = plan(4, 1, 2, 1, 8, 4096);
  CHECK(memory_on(m, p4, Framework::megatron_core, 8).stages[0].communication_buffers -
            memory_on(m, p4, Framework::megatron_lm, 8).stages[0].communication_buffers ==
        Approx(tp1 / 4));
}

TEST_CASE("TE dummy wgrads: a grouped GEMM counts one expert's weight, the router none", "[memory][te][moe]") {
  const ModelSpec m = deepseek_v2(4);
  ParallelPlan p = plan(1, 1, 8, 1, 32, 4096);
  p.expert_model_parallel_size = 8;
  // MLA: q_down 1536 x 5120, q_up 24576 x 1536, kv_down 576 x 5120, kv_up 32768 x 512, out 5120 x 16384;
  // dense MLP 24576 x 5120 and 5120 x 12288; shared experts (2 x 1536 wide) 6144 x 5120 and 5120 x 3072;
  // one expert 3072 x 5120 and 5120 x 1536.
  const double shapes = 1536.0 * 5120 + 24576.0 * 1536 + 576.0 * 5120 + 32768.0 * 512 + 5120.0 * 16384 +
                        24576.0 * 5120 + 5120.0 * 12288 + 6144.0 * 5120 + 5120.0 * 3072 + 3072.0 * 5120 +
                        5120.0 * 1536;
  const MemoryReport te = memory_on(m, p, Framework::megatron_core, 8);
  const MemoryReport legacy = memory_on(m, p, Framework::megatron_lm, 8);
  CHECK(te.stages[0].communication_buffers - legacy.stages[0].communication_buffers == Approx(2.0 * shapes));
  // NeMo runs the same TE modules; DeepSpeed does not.
  CHECK(memory_on(m, p, Framework::nemo, 8).stages[0].communication_buffers ==
        Approx(te.stages[0].communication_buffers));
}

TEST_CASE("TE dummy wgrads follow the framework entry's transformer_engine_linears", "[memory][te][framework]") {
  // Megatron-Core's TE layer spec and NeMo on it: TE Linears; Megatron-LM 2021-22, MindSpeed
  // (Megatron's local spec on torch_npu) and the others: none.
  for (const FrameworkEntry& e : framework_table()) {
    INFO(e.name);
    CHECK(e.transformer_engine_linears.value == (e.id == Framework::megatron_core || e.id == Framework::nemo));
    CHECK(e.transformer_engine_linears.source.size() > 30);
  }
  ModelSpec m = llama3_70b();
  m.num_layers = 12;
  const ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  CHECK(memory_on(m, p, Framework::nemo, 8).stages[0].communication_buffers >
        memory_on(m, p, Framework::megatron_lm, 8).stages[0].communication_buffers);
}
