// DeepSpeed's pipeline engine as its code runs a batch (microsoft/DeepSpeed @ 38327e07f, 0.16.5,
// deepspeed/runtime/pipe/schedule.py TrainSchedule, pipe/engine.py, pipe/module.py; the same
// schedule since 0.3), checked against what the replay does, and the BigScience rows it ran.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {

// One instruction of TrainSchedule.steps(), as the engine executes it (_INSTRUCTION_MAP).
enum class Cmd { send_grad, recv_activation, recv_grad, send_activation, forward, backward, reduce_tied, reduce, step };
struct Instruction {
  Cmd cmd;
  int microbatch = -1;  // -1: none (the model-step commands)
};

// A transcription of TrainSchedule (schedule.py), kept line by line: _step_to_micro_batch and
// its four id helpers, _valid_micro_batch, _valid_stage, and steps() with the buffer ids
// replaced by the micro-batch they hold.
struct TrainSchedule {
  int micro_batches, stages, stage_id;

  static bool even(int x) { return x % 2 == 0; }
  bool valid_micro_batch(int id) const { return 0 <= id && id < micro_batches; }
  bool valid_stage(int id) const { return 0 <= id && id < stages; }

  std::pair<int, bool> step_to_micro_batch(int step_id) const {
    if (even(step_id) && even(stage_id)) return {step_id / 2 - stage_id / 2, true};
    if (!even(step_id) && !even(stage_id)) return {(step_id - 1) / 2 - stage_id / 2, true};
    if (even(step_id) && !even(stage_id)) return {step_id / 2 - stages + (stage_id + 1) / 2, false};
    return {((step_id - 1) / 2) - stages + 1 + stage_id / 2, false};
  }

  std::vector<std::vector<Instruction>> steps() const {
    std::vector<std::vector<Instruction>> out;
    int prev = -1;
    const int total_steps = 2 * (micro_batches + stages - 1);
    for (int step_id = 0; step_id < total_steps; ++step_id) {
      const auto [mb, is_forward] = step_to_micro_batch(step_id);
      std::vector<Instruction> cmds;
      if (is_forward) {
        if (valid_micro_batch(prev) && valid_stage(stage_id - 1)) cmds.push_back({Cmd::send_grad, prev});
        if (valid_micro_batch(mb) && valid_stage(stage_id - 1)) cmds.push_back({Cmd::recv_activation, mb});
      } else {
        if (valid_micro_batch(mb) && valid_stage(stage_id + 1)) cmds.push_back({Cmd::recv_grad, mb});
        if (valid_micro_batch(prev) && valid_stage(stage_id + 1)) cmds.push_back({Cmd::send_activation, prev});
      }
      if (valid_micro_batch(mb)) cmds.push_back({is_forward ? Cmd::forward : Cmd::backward, mb});
      if (step_id == total_steps - 1) {
        cmds.push_back({Cmd::reduce_tied});
        cmds.push_back({Cmd::reduce});
        cmds.push_back({Cmd::step});
      }
      prev = mb;
      out.push_back(cmds);
    }
    return out;
  }

  // num_pipe_buffers: 'max(2, min(self.stages - self.stage_id, self.micro_batches))'.
  int pipe_buffers() const { return std::max(2, std::min(stages - stage_id, micro_batches)); }
};

StageOrder compute_order(const std::vector<std::vector<Instruction>>& steps) {
  StageOrder order;
  for (const auto& cmds : steps)
    for (const Instruction& i : cmds)
      if (i.cmd == Cmd::forward || i.cmd == Cmd::backward)
        order.push_back({i.cmd == Cmd::forward ? WorkKind::forward : WorkKind::backward, i.microbatch, 0, false});
  return order;
}

bool has(const std::vector<Instruction>& cmds, Cmd cmd, int microbatch) {
  for (const Instruction& i : cmds)
    if (i.cmd == cmd && i.microbatch == microbatch) return true;
  return false;
}

}  // namespace

TEST_CASE("DeepSpeed's TrainSchedule runs each stage's passes in the replay's 1F1B order", "[framework][schedule]") {
  CHECK(framework_entry(Framework::deepspeed).schedules_with_pp.value ==
        std::vector<PipelineSchedule>{PipelineSchedule::one_f_one_b});
  for (int p : {2, 3, 4, 5, 6, 8, 12}) {
    for (int m : {1, 2, p - 1, p, p + 1, 2 * p, 3 * p + 1, 64}) {
      if (m < 1) continue;
      const std::vector<StageOrder> replay = build_schedule(PipelineSchedule::one_f_one_b, p, m, 1);
      for (int s = 0; s < p; ++s) {
        INFO("p " << p << " m " << m << " stage " << s);
        const TrainSchedule ds{m, p, s};
        const StageOrder order = compute_order(ds.steps());
        REQUIRE(order.size() == static_cast<std::size_t>(2 * m));
        CHECK(order == replay[static_cast<std::size_t>(s)]);
        // The engine allocates a buffer per micro-batch in flight (at least two): never fewer
        // than the replay keeps alive, and as many once the stage holds two or more.
        const int in_flight = activations_in_flight(order, 1).per_chunk[0];
        CHECK(in_flight == std::min(p - s, m));
        CHECK(ds.pipe_buffers() == std::max(2, in_flight));
      }
    }
  }
}

TEST_CASE("DeepSpeed's TrainSchedule: every send meets its receive in the same step, the reductions follow the "
          "last backward",
          "[framework][schedule]") {
  // Blocking p2p (p2p.py: dist.send / dist.recv, async_op False) holds both ranks until the
  // pair meets, so the engine only works because each step's sends and receives pair up
  // across neighbours: a stage in a backward step trades with the next stage in a forward step.
  for (int p : {2, 4, 7}) {
    for (int m : {1, 3, 8, 17}) {
      std::vector<std::vector<std::vector<Instruction>>> all;
      for (int s = 0; s < p; ++s) all.push_back(TrainSchedule{m, p, s}.steps());
      const std::size_t total = all[0].size();
      REQUIRE(total == static_cast<std::size_t>(2 * (m + p - 1)));
      int sends = 0;
      for (std::size_t t = 0; t < total; ++t) {
        for (int s = 0; s < p; ++s) {
          INFO("p " << p << " m " << m << " step " << t << " stage " << s);
          for (const Instruction& i : all[static_cast<std::size_t>(s)][t]) {
            if (i.cmd == Cmd::send_activation) {
              CHECK(has(all[static_cast<std::size_t>(s + 1)][t], Cmd::recv_activation, i.microbatch));
              ++sends;
            }
            if (i.cmd == Cmd::send_grad) {
              CHECK(has(all[static_cast<std::size_t>(s - 1)][t], Cmd::recv_grad, i.microbatch));
              ++sends;
            }
            if (i.cmd == Cmd::reduce_tied || i.cmd == Cmd::reduce || i.cmd == Cmd::step) CHECK(t == total - 1);
          }
        }
      }
      // One activation and one gradient per micro-batch and stage boundary.
      CHECK(sends == 2 * m * (p - 1));
      // The last step of every stage: its last backward (if any) before ReduceTiedGrads,
      // ReduceGrads, OptimizerStep, so no DP bucket runs under a backward
      // (FrameworkEntry::grad_reduce_after_pipeline).
      for (int s = 0; s < p; ++s) {
        const auto& last = all[static_cast<std::size_t>(s)].back();
        REQUIRE(last.size() >= 3);
        CHECK(last[last.size() - 3].cmd == Cmd::reduce_tied);
        CHECK(last[last.size() - 2].cmd == Cmd::reduce);
        CHECK(last.back().cmd == Cmd::step);
      }
      CHECK(has(all[0].back(), Cmd::backward, m - 1));  // stage 0's last backward is in the last step
    }
  }
  CHECK(framework_entry(Framework::deepspeed).grad_reduce_after_pipeline.value);
  CHECK(framework_entry(Framework::deepspeed).blocking_p2p.value);
}

TEST_CASE("DeepSpeed's pipeline engine all-reduces the tied embedding's 16-bit gradient between the first and "
          "the last stage",
          "[framework][graph]") {
  // pipe/engine.py _exec_reduce_tied_grads: 'dist.all_reduce(grad, group=group)' on weight.grad
  // (fp16 here) over the tied group, pipe/module.py _index_tied_modules: the stages that own the
  // tied module ('embed': EmbeddingPipe first and last, as GPTModelPipe ties it), at one (dp, mp)
  // coordinate: V/TP x h elements of grad_reduce_bytes (2) each.
  Scenario s;
  s.plan.pipeline_model_parallel_size = 4;
  s.plan.tensor_model_parallel_size = 2;
  s.plan.data_parallel_size = 2;
  s.plan.micro_batch_size = 1;
  s.plan.global_batch_size = 8;
  s.plan.seq_length = 1024;
  s.plan.precision = Precision::fp16;
  s.plan.zero_stage = 1;
  s.model.hidden_size = 1024;
  s.model.tie_word_embeddings = true;
  s.num_devices = 16;
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
  w.padded_vocab_size = 51200;
  CostFunctions f;
  f.forward_s = [](const Op& o) { return o.forward_flops * 1e-12; };
  f.backward_s = [](const Op& o) { return o.backward_flops * 1e-12; };
  f.backward_weight_s = [](const Op& o) { return o.backward_weight_flops * 1e-12; };
  f.collective_s = [](const CommOp&) { return 0.0; };
  f.group_collective = [](CollectiveKind, CommGroup, double bytes) { return GroupCollective{0.0, bytes}; };
  f.p2p_s = [](double bytes) { return bytes * 1e-11; };
  f.memory_bound_s = [](double bytes) { return bytes * 1e-12; };
  s.plan.framework = Framework::deepspeed;
  const PipelineCosts ds = build_pipeline_costs(s, w, f, MemoryReport{});
  CHECK(ds.tied_embedding_allreduce_bytes == 51200.0 / 2 * 1024 * 2);
  CHECK(ds.tied_embedding_allreduce_s == Approx(51200.0 / 2 * 1024 * 2 * 1e-11).epsilon(1e-12));
  CHECK(ds.tied_embedding_stages[0] == 0);
  CHECK(ds.tied_embedding_stages[1] == 3);
  // bf16: Megatron reduces in fp32 (4 bytes), DeepSpeed's ZeRO-1 in the 16-bit dtype.
  s.plan.precision = Precision::bf16;
  CHECK(build_pipeline_costs(s, w, f, MemoryReport{}).tied_embedding_allreduce_bytes == 51200.0 / 2 * 1024 * 2);
  s.plan.framework = Framework::megatron_core;
  CHECK(build_pipeline_costs(s, w, f, MemoryReport{}).tied_embedding_allreduce_bytes == 51200.0 / 2 * 1024 * 4);
}

namespace {

// On a DGX A100's network (hardware/a100-80gb.yaml), not the rows' own (jean-zay-a100.yaml): the
// comparisons below are of the frameworks' mechanisms, written where the network between servers is
// no bottleneck. On Jean Zay's 4 x Omni-Path the network's price outweighs these differences (there
// the mask send costs 0.05% instead of under 0.01%, and Megatron-LM's step is 28% slower than
// DeepSpeed's on a64's plan); tests/hardware/jean_zay_test.cpp covers that file.
double step_time_as(const MeasuredRun& run, Framework framework) {
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  const HardwareSpec dgx = load_hardware(options.hardware_dir + "/a100-80gb.yaml");
  options.hardware_for = [dgx](AcceleratorFamily) { return dgx; };
  std::vector<std::string> defaults;
  Scenario s = scenario_for_run(run, options, &defaults);
  s.plan.framework = framework;
  SimOptions o;
  o.record_timeline = false;
  return simulate(s, o).metrics.step_time_s;
}

const MeasuredRun& run_named(const std::vector<MeasuredRun>& runs, const std::string& id) {
  for (const MeasuredRun& r : runs)
    if (r.id == id) return r;
  FAIL("no row " << id);
  return runs.front();
}

}  // namespace

TEST_CASE("BigScience's 112 heads run slower than 64 only on the fork that ran them, DeepSpeed's engine slower "
          "than Megatron's on the same plan",
          "[framework][validation][ordering]") {
  // Measured (trends.yaml, bigscience-tr11-nheads-h14336-l72): 112 heads 138.7 s, 64 heads
  // 120.2 s (+15%) on the same 384 A100, TP8 PP6 DP8 mbs 4. 112 / TP8 = 14 heads a rank: the
  // fork's is_kernel_available takes the kernel's key length from the heads (14 -> 16 lanes:
  // 16 batches a block) and 4 x 14 = 56 is no multiple of 16, so the softmax runs in fp32
  // torch ops; with 64 heads (8 a rank: 32 a block, 32 batches) the fused kernel runs.
  const auto runs = load_measured_runs(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/trends.yaml");
  const MeasuredRun& a64 = run_named(runs, "bigsci-tr11-nheads-h14336-l72-a64");
  const MeasuredRun& a112 = run_named(runs, "bigsci-tr11-nheads-h14336-l72-a112");
  REQUIRE(*a112.step_time_s / *a64.step_time_s > 1.10);

  const double fork64 = step_time_as(a64, Framework::bigscience_megatron_deepspeed);
  const double fork112 = step_time_as(a112, Framework::bigscience_megatron_deepspeed);
  const double ds64 = step_time_as(a64, Framework::deepspeed);
  const double ds112 = step_time_as(a112, Framework::deepspeed);
  const double lm64 = step_time_as(a64, Framework::megatron_lm);
  CHECK(fork112 / fork64 > 1.10);  // the measured order and most of its gap
  CHECK(ds112 / ds64 < 1.05);      // Megatron's rule (key length 2048): fused for both
  // 64 heads: the fork's bug does not bite; what is left is its attention-mask send (an 8 MiB
  // fp16 send and its casts a micro-batch: under 0.01%).
  CHECK(fork64 > ds64);
  CHECK(fork64 / ds64 < 1.0001);
  // The pipeline engine (blocking partitioned sends, DP reduction after the schedule) costs
  // more than Megatron-LM's 1F1B on the same plan, by its exposed reduction (under 2% here).
  CHECK(ds64 > lm64);
  CHECK(ds64 / lm64 < 1.02);
}
