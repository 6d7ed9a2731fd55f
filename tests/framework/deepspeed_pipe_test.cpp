// DeepSpeed pipeline-engine mechanisms in the step's costs, each from DeepSpeed's code.
#include <catch2/catch.hpp>

#include "../graph/test_prices.hpp"
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// Two stages (pp) of 4 layers of 1e8 parameters; the embedding (5e7) on stage 0, the head (3e7)
// on stage 1; DP 2, 4 micro-batches.
PipelineCosts costs_of(Framework framework, Precision precision, int zero_stage, int pp = 2, int tp = 1,
                       CostFunctions prices = compute_only_prices()) {
  Scenario s;
  s.plan.pipeline_model_parallel_size = pp;
  s.plan.tensor_model_parallel_size = tp;
  s.plan.data_parallel_size = 2;
  s.plan.micro_batch_size = 1;
  s.plan.global_batch_size = 8;
  s.plan.seq_length = 1024;
  s.plan.framework = framework;
  s.plan.precision = precision;
  s.plan.zero_stage = zero_stage;
  s.model.hidden_size = 1024;
  s.num_devices = 4;
  Workload w;
  LayerWorkload dense;
  dense.kind = "dense";
  Op op;
  op.op_class = OpClass::gemm;
  op.forward_flops = 1e9, op.backward_flops = 2e9, op.backward_weight_flops = 1e9;
  dense.ops = {op};
  dense.parameters = 1e8;
  w.layer_types = {dense};
  w.layer_type_of.assign(8, 0);
  w.embedding.parameters = 5e7;
  w.head.parameters = 3e7;
  return build_pipeline_costs(s, w, prices, MemoryReport{});
}

}  // namespace

TEST_CASE("DeepSpeed's BF16_Optimizer folds each micro-batch's gradients into fp32: 18 bytes a parameter",
          "[framework][graph]") {
  const FrameworkEntry& ds = framework_entry(Framework::deepspeed);
  CHECK(ds.bf16_grad_fold_bytes_per_param.value == 18);
  CHECK(ds.bf16_grad_fold_bytes_per_param.source.find("update_hp_grads") != std::string::npos);
  for (const FrameworkEntry& e : framework_table()) {
    INFO(e.name);
    CHECK(e.bf16_grad_fold_bytes_per_param.source.size() > 20);
    CHECK(e.bf16_grad_fold_bytes_per_param.source.find("fit") == std::string::npos);
    // DeepSpeed since 0.6.0 (and the BigScience fork on it); 2021's DeepSpeed had no bf16.
    const bool bf16_optimizer = e.id == Framework::deepspeed || e.id == Framework::bigscience_megatron_deepspeed;
    CHECK(e.bf16_grad_fold_bytes_per_param.value == (bf16_optimizer ? 18 : 0));
  }

  // bf16 without ZeRO: every micro-batch's backward pays 18 B x the stage's parameters.
  const PipelineCosts fp16 = costs_of(Framework::deepspeed, Precision::fp16, 0);
  const PipelineCosts bf16 = costs_of(Framework::deepspeed, Precision::bf16, 0);
  const double stage0 = 4e8 + 5e7, stage1 = 4e8 + 3e7;
  CHECK(bf16.stages[0].chunks[0].backward_input_s - fp16.stages[0].chunks[0].backward_input_s ==
        Approx(18 * stage0 * 1e-12).epsilon(1e-9));
  CHECK(bf16.stages[1].chunks[0].backward_input_s - fp16.stages[1].chunks[0].backward_input_s ==
        Approx(18 * stage1 * 1e-12).epsilon(1e-9));
  CHECK(bf16.stages[0].chunks[0].forward_s == fp16.stages[0].chunks[0].forward_s);

  // With ZeRO (DeepSpeedZeroOptimizer accumulates in the model dtype) and on Megatron: no pass.
  const PipelineCosts zero1 = costs_of(Framework::deepspeed, Precision::bf16, 1);
  CHECK(zero1.stages[0].chunks[0].backward_input_s == fp16.stages[0].chunks[0].backward_input_s);
  const PipelineCosts mcore_bf16 = costs_of(Framework::megatron_core, Precision::bf16, 0);
  const PipelineCosts mcore_fp16 = costs_of(Framework::megatron_core, Precision::fp16, 0);
  CHECK(mcore_bf16.stages[0].chunks[0].backward_input_s == mcore_fp16.stages[0].chunks[0].backward_input_s);
}

TEST_CASE("DeepSpeed's pipeline engine reduces gradients after the schedule, not under the last backward",
          "[framework][graph]") {
  const FrameworkEntry& ds = framework_entry(Framework::deepspeed);
  CHECK(ds.grad_reduce_after_pipeline.value);
  CHECK(ds.grad_reduce_after_pipeline.source.find("ReduceGrads()") != std::string::npos);
  for (const FrameworkEntry& e : framework_table()) {
    INFO(e.name);
    CHECK(e.grad_reduce_after_pipeline.source.size() > 20);
    CHECK(e.grad_reduce_after_pipeline.source.find("fit") == std::string::npos);
    // MindFormers too: MindSpore's gradient reduction does not overlap the backward under
    // LazyInline (its pipeline models), from its own source (mindformers_test.cpp).
    CHECK(e.grad_reduce_after_pipeline.value == (runs_on_deepspeed(e.id) || e.id == Framework::mindformers));
  }
  CHECK_FALSE(costs_of(Framework::deepspeed, Precision::fp16, 1).overlap_grad_reduce);
  CHECK(costs_of(Framework::megatron_core, Precision::fp16, 1).overlap_grad_reduce);
  // Without PP DeepSpeedEngine runs, not the pipeline engine: the plan's setting stands.
  CHECK(costs_of(Framework::deepspeed, Precision::fp16, 1, 1).overlap_grad_reduce);
}

TEST_CASE("DeepSpeed's pipeline engine sends 1/TP of each activation and the receiver all-gathers it over TP",
          "[framework][graph]") {
  CHECK(framework_entry(Framework::deepspeed).p2p_partitioned_over_tp.value);
  CHECK(framework_entry(Framework::deepspeed).p2p_partitioned_over_tp.source.find("PartitionedTensor") !=
        std::string::npos);
  for (const FrameworkEntry& e : framework_table()) {
    INFO(e.name);
    CHECK(e.p2p_partitioned_over_tp.source.size() > 20);
    CHECK(e.p2p_partitioned_over_tp.source.find("fit") == std::string::npos);
    // DeepSpeed's PartitionedTensor, and Megatron-LM 2021-22's scatter/gather optimization
    // (Narayanan et al. 2021, 4.1), which Megatron-Core dropped.
    CHECK(e.p2p_partitioned_over_tp.value == (runs_on_deepspeed(e.id) || e.id == Framework::megatron_lm));
  }
  // p2p 1 ps a byte (non-blocking here: the sends stay in p2p_s), all-gathers 10 ps a byte,
  // memory passes 1 ps a byte. Activation: 1024 tokens x 1024 hidden x 2 bytes.
  CostFunctions prices = compute_only_prices();
  prices.p2p_s = [](double bytes) { return bytes * 1e-12; };
  prices.group_collective = [](CollectiveKind kind, CommGroup group, double bytes) {
    return GroupCollective{kind == CollectiveKind::all_gather && group == CommGroup::tp ? bytes * 1e-11 : 0.0, bytes};
  };
  const double act = 1024.0 * 1024 * 2;
  const PipelineCosts mcore = costs_of(Framework::megatron_core, Precision::fp16, 1, 2, 4, prices);
  const PipelineCosts ds = costs_of(Framework::deepspeed, Precision::fp16, 1, 2, 4, prices);
  CHECK(mcore.p2p_bytes == act);
  // DeepSpeed's sends block (make_p2p_blocking folds them into the sender's compute).
  CHECK(ds.p2p_bytes == 0);
  // Each send goes after the partition's meta tensor (to_meta: 6 + TP + 1 int64 values), its
  // own blocking send.
  const double meta = (6 + 4 + 1) * 8.0;
  const double send = (act / 4 + meta) * 1e-12, gather = act * 1e-11 + 3 * act * 1e-12;
  // Stage 0 sends activations (forward) and rebuilds the gradients it receives (backward);
  // stage 1 rebuilds the activations it receives and sends gradients back.
  CHECK(ds.stages[0].chunks[0].forward_s - mcore.stages[0].chunks[0].forward_s == Approx(send).epsilon(1e-9));
  CHECK(ds.stages[0].chunks[0].backward_input_s - mcore.stages[0].chunks[0].backward_input_s ==
        Approx(gather).epsilon(1e-9));
  CHECK(ds.stages[1].chunks[0].forward_s - mcore.stages[1].chunks[0].forward_s == Approx(gather).epsilon(1e-9));
  CHECK(ds.stages[1].chunks[0].backward_input_s - mcore.stages[1].chunks[0].backward_input_s ==
        Approx(send).epsilon(1e-9));
}

TEST_CASE("BigScience's pipeline stages send the attention mask on, whole and in fp16, after each activation",
          "[framework][graph]") {
  CHECK(framework_entry(Framework::bigscience_megatron_deepspeed).p2p_sends_attention_mask.value);
  CHECK_FALSE(framework_entry(Framework::deepspeed).p2p_sends_attention_mask.value);
  CHECK(framework_entry(Framework::bigscience_megatron_deepspeed).p2p_sends_attention_mask.source.find(
            "cast the mask to half()") != std::string::npos);
  // p2p 10 ps a byte, memory passes 1 ps a byte, all-gathers free. The mask: 1 x 1 x 1024 x 1024,
  // sent as fp16 (2 bytes) from every TP rank, not partitioned; cast bool -> half -> bool on the
  // sender (3 + 3 bytes an element), half -> bool on the receiver (3). No gradient goes back.
  CostFunctions prices = compute_only_prices();
  prices.p2p_s = [](double bytes) { return bytes * 1e-11; };
  const double mask = 1024.0 * 1024;
  const PipelineCosts ds = costs_of(Framework::deepspeed, Precision::fp16, 1, 2, 4, prices);
  const PipelineCosts fork = costs_of(Framework::bigscience_megatron_deepspeed, Precision::fp16, 1, 2, 4, prices);
  CHECK(fork.stages[0].chunks[0].forward_s - ds.stages[0].chunks[0].forward_s ==
        Approx(2 * mask * 1e-11 + 6 * mask * 1e-12).epsilon(1e-9));
  CHECK(fork.stages[1].chunks[0].forward_s - ds.stages[1].chunks[0].forward_s == Approx(3 * mask * 1e-12).epsilon(1e-9));
  CHECK(fork.stages[0].chunks[0].backward_input_s == ds.stages[0].chunks[0].backward_input_s);
  CHECK(fork.stages[1].chunks[0].backward_input_s == ds.stages[1].chunks[0].backward_input_s);
}
