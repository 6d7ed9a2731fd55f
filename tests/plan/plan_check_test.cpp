#include "trainsim/plan/plan_check.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace trainsim;

namespace {

ModelSpec llama70b() {
  ModelSpec m;
  m.name = "llama2-70b";
  m.hidden_size = 8192;
  m.num_layers = 80;
  m.num_attention_heads = 64;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 28672;
  m.vocab_size = 32000;
  m.max_position_embeddings = 4096;
  return m;
}

HardwareSpec a100() {
  HardwareSpec h;
  h.device.name = "A100";
  h.device.peak_flops_bf16 = 312e12;
  return h;
}

ParallelPlan plan(int tp, int pp, int devices, int gbs = 64) {
  ParallelPlan p;
  p.tensor_model_parallel_size = tp;
  p.pipeline_model_parallel_size = pp;
  p.global_batch_size = gbs;
  p.seq_length = 4096;
  derive_plan(p, devices);
  return p;
}

// All diagnostics as "key: problem; valid: ..." lines (no file position: the loader adds it).
std::string check(const ModelSpec& m, const HardwareSpec& h, int devices, const ParallelPlan& p) {
  std::string out;
  for (const auto& d : check_plan(m, h, devices, p)) out += d.str() + "\n";
  return out;
}

}  // namespace

TEST_CASE("derive_plan sets DP = devices / (TP * PP * CP)", "[plan]") {
  ParallelPlan p = plan(8, 4, 256);
  CHECK(p.data_parallel_size == 8);
  p.context_parallel_size = 2;
  derive_plan(p, 256);
  CHECK(p.data_parallel_size == 4);
}

TEST_CASE("a consistent plan has no problems", "[plan]") { CHECK(check(llama70b(), a100(), 64, plan(8, 4, 64)) == ""); }

TEST_CASE("TP must divide attention and KV heads, valid TPs are listed", "[plan]") {
  CHECK(check(llama70b(), a100(), 16, plan(16, 1, 16)) ==
        "plan.tensor_model_parallel_size: 16 does not divide num_attention_heads (64) and num_key_value_heads (8); "
        "valid: 1, 2, 4, 8\n");
}

TEST_CASE("PP must divide layers unless layers_per_stage is given, which must sum to the layers", "[plan]") {
  CHECK(check(llama70b(), a100(), 24, plan(8, 3, 24, 63)) ==
        "plan.pipeline_model_parallel_size: 3 does not divide num_hidden_layers (80); valid: PP (x VPP) in 1, 2, 4, 5, "
        "8, "
        "10, 16, 20, 40, 80, or give plan.layers_per_stage, decoder_first/last_pipeline_num_layers or "
        "account_for_embedding/loss_in_pipeline_split\n");
  ParallelPlan p = plan(8, 3, 24, 63);
  p.layers_per_stage = {27, 27, 26};
  CHECK(check(llama70b(), a100(), 24, p) == "");
  p.layers_per_stage = {27, 27};
  CHECK(check(llama70b(), a100(), 24, p) ==
        "plan.layers_per_stage: has 2 entries but pipeline_model_parallel_size is 3; valid: one entry per pipeline "
        "stage\n"
        "plan.layers_per_stage: sums to 54, not num_hidden_layers (80); valid: one positive count per stage, summing "
        "to 80\n");
}

TEST_CASE("devices must equal TP*PP*CP*DP, the message lists device counts that work", "[plan]") {
  CHECK(check(llama70b(), a100(), 100, plan(8, 4, 100)) ==
        "num_devices: 100 is not a multiple of TP*PP*CP = 8*4*1 = 32; valid: num_devices in 32, 64, 96, 128, ...\n");
}

TEST_CASE("global batch must be a multiple of micro batch * DP", "[plan]") {
  ParallelPlan p = plan(8, 1, 64, 100);
  p.micro_batch_size = 2;
  CHECK(check(llama70b(), a100(), 64, p) ==
        "plan.global_batch_size: 100 is not a multiple of micro_batch_size * DP = 2 * 8 = 16; valid: multiples of 16: "
        "16, 32, 48, 64, ...\n");
}

TEST_CASE("EP must divide the experts and DP*CP, and needs an MoE model", "[plan]") {
  ModelSpec moe = llama70b();
  moe.moe = MoeSpec{};
  moe.moe->num_experts = 8;
  moe.moe->experts_per_token = 2;
  ParallelPlan p = plan(8, 1, 32);  // DP 4
  p.expert_model_parallel_size = 8;
  CHECK(check(moe, a100(), 32, p) ==
        "plan.expert_model_parallel_size: 8 does not divide DP*CP = 4 (Megatron); valid: 1, 2, 4\n");
  p.expert_model_parallel_size = 3;
  CHECK(check(moe, a100(), 32, p) ==
        "plan.expert_model_parallel_size: 3 does not divide the number of experts (8); valid: 1, 2, 4, 8\n"
        "plan.expert_model_parallel_size: 3 does not divide DP*CP = 4 (Megatron); valid: 1, 2, 4\n");
  p.expert_model_parallel_size = 2;
  CHECK(check(llama70b(), a100(), 32, p) ==
        "plan.expert_model_parallel_size: 2 > 1 but the model has no experts; valid: 1\n");
}

TEST_CASE("virtual stages need the interleaved schedule and micro-batches a multiple of PP", "[plan]") {
  ParallelPlan p = plan(8, 4, 64, 24);  // DP 2, 12 micro-batches
  p.virtual_pipeline_model_parallel_size = 4;
  CHECK(check(llama70b(), a100(), 64, p) ==
        "plan.virtual_pipeline_model_parallel_size: 4 > 1 needs schedule: interleaved; valid: 1, or set plan.schedule: "
        "interleaved\n");
  p.schedule = PipelineSchedule::interleaved;
  p.global_batch_size = 20;  // 10 micro-batches, not a multiple of PP 4
  // Megatron-Core (the default framework) groups N = p micro-batches unless told otherwise.
  CHECK(check(llama70b(), a100(), 64, p) ==
        "plan.global_batch_size: interleaved 1F1B's last group of micro-batches (10 % 4 = 2) is shorter than the "
        "pipeline (4): Megatron-Core refuses it; valid: micro-batches a multiple of 4, or "
        "plan.microbatch_group_size_per_vp_stage 5, 6 or 10\n");
  p.microbatch_group_size_per_vp_stage = 5;  // Megatron-Core takes it: two groups of 5
  CHECK(check(llama70b(), a100(), 64, p).empty());
  p.microbatch_group_size_per_vp_stage = 6;  // 6 and a last group of 4
  CHECK(check(llama70b(), a100(), 64, p).empty());
  // Groups are the interleaved schedule's: on another schedule the key would be ignored.
  ParallelPlan flat = p;
  flat.schedule = PipelineSchedule::one_f_one_b;
  flat.virtual_pipeline_model_parallel_size = 1;
  flat.global_batch_size = 24;
  CHECK(check(llama70b(), a100(), 64, flat) ==
        "plan.microbatch_group_size_per_vp_stage: 6 with schedule 1f1b: micro-batch groups are the interleaved "
        "schedule's; valid: leave it out, or schedule: interleaved\n");
  p.microbatch_group_size_per_vp_stage = 0;
  p.framework = Framework::megatron_lm;  // the 2021 schedule asserts m % p == 0
  CHECK(check(llama70b(), a100(), 64, p) ==
        "plan.global_batch_size: interleaved schedule: number of micro-batches (10) must be a multiple of "
        "pipeline_model_parallel_size (4); valid: global_batch_size multiple of micro_batch_size * DP * PP = 8\n");
  p.microbatch_group_size_per_vp_stage = 5;  // Megatron-Core's option only
  CHECK_THAT(check(llama70b(), a100(), 64, p),
             Catch::Contains("plan.microbatch_group_size_per_vp_stage: 5, but megatron-lm has no such option"));
  p.microbatch_group_size_per_vp_stage = 0;
  // PyTorch's rounds (fsdp: torchtitan's PipelineScheduleMulti): 10 micro-batches on 4 stages run
  // as two rounds of 5; trainsim's send and receive streams replay one round of any size (up to
  // 2p - 1 = 7) or rounds of p.
  p.virtual_pipeline_model_parallel_size = 4;
  p.framework = Framework::fsdp;
  CHECK(check(llama70b(), a100(), 64, p) ==
        "plan.global_batch_size: 10 micro-batches run in groups of 5 on 4 stages (fsdp's interleaving): "
        "trainsim does not replay groups other than the pipeline size on its send and receive streams yet; valid: "
        "a global batch giving a multiple of 4 micro-batches, or at most 7 (one group)\n");
  p.global_batch_size = 14;  // 7 micro-batches: one round
  CHECK(check(llama70b(), a100(), 64, p).empty());
  p.framework = Framework::megatron_core;
  p.virtual_pipeline_model_parallel_size = 3;  // 4 * 3 = 12 does not divide 80
  p.global_batch_size = 24;
  CHECK_THAT(check(llama70b(), a100(), 64, p),
             Catch::StartsWith("plan.virtual_pipeline_model_parallel_size: pipeline_model_parallel_size * "
                               "virtual_pipeline_model_parallel_size (4 * 3) does not divide num_hidden_layers (80)"));
}

TEST_CASE("sequence parallel needs TP > 1 (an error, not Megatron's silent disable)", "[plan]") {
  ParallelPlan p = plan(1, 1, 8);
  p.sequence_parallel = true;
  CHECK(check(llama70b(), a100(), 8, p) ==
        "plan.sequence_parallel: true needs tensor_model_parallel_size > 1; valid: false, or TP > 1\n");
}

TEST_CASE("CP splits the sequence into 2*CP chunks, learned positions cap seq_length", "[plan]") {
  ParallelPlan p = plan(8, 1, 24);
  p.context_parallel_size = 3;
  derive_plan(p, 24);
  CHECK(check(llama70b(), a100(), 24, p) ==
        "plan.context_parallel_size: 2*CP = 6 does not divide seq_length (4096); valid: CP with 2*CP dividing "
        "seq_length\n");
  ModelSpec gpt = llama70b();
  gpt.position_embedding = PositionEmbedding::learned;
  gpt.max_position_embeddings = 2048;
  CHECK(check(gpt, a100(), 8, plan(8, 1, 8)) ==
        "plan.seq_length: 4096 exceeds max_position_embeddings (2048) of a model with learned positions; valid: <= "
        "2048\n");
  CHECK(check(llama70b(), a100(), 8, [] {
          auto q = plan(8, 1, 8);
          q.seq_length = 32768;
          return q;
        }()) == "");
}

TEST_CASE("fp8 needs FP8 units on the device", "[plan]") {
  ParallelPlan p = plan(8, 1, 8);
  p.precision = Precision::fp8;
  CHECK(check(llama70b(), a100(), 8, p) ==
        "plan.precision: fp8 but A100 has no FP8 units (peak_flops_fp8 = 0); valid: bf16, fp16\n");
  HardwareSpec h100 = a100();
  h100.device.peak_flops_fp8 = 1979e12;
  CHECK(check(llama70b(), h100, 8, p) == "");
}

TEST_CASE("ZeRO-2 and ZeRO-3 exclude PP > 1, and ZeRO excludes the distributed optimizer", "[plan]") {
  ParallelPlan p = plan(8, 2, 16);
  p.zero_stage = 3;
  p.use_distributed_optimizer = true;
  CHECK(check(llama70b(), a100(), 16, p) ==
        "plan.zero_stage: ZeRO-3 cannot be combined with pipeline parallelism in megatron-core (it allows stage 0 or 1 "
        "with PP > 1); valid: zero_stage 0 or 1 with PP > 1, or PP 1, or framework fsdp\n"
        "plan.use_distributed_optimizer: true together with zero_stage 3: pick one; valid: use_distributed_optimizer: "
        "false, or zero_stage: 0\n");
  p.use_distributed_optimizer = false;
  p.zero_stage = 2;
  CHECK(check(llama70b(), a100(), 16, p) ==
        "plan.zero_stage: ZeRO-2 cannot be combined with pipeline parallelism in megatron-core (it allows stage 0 or 1 "
        "with PP > 1); valid: zero_stage 0 or 1 with PP > 1, or PP 1, or framework fsdp or deepspeed-2021\n");
  p.zero_stage = 1;
  CHECK(check(llama70b(), a100(), 16, p) == "");
  ParallelPlan flat = plan(8, 1, 16);
  flat.zero_stage = 2;
  CHECK(check(llama70b(), a100(), 16, flat) == "");
}

TEST_CASE("rank order must be a permutation of tp, cp, ep, dp, pp", "[plan]") {
  ParallelPlan p = plan(8, 1, 8);
  p.rank_order = "tp-dp-pp";
  CHECK(check(llama70b(), a100(), 8, p) ==
        "plan.rank_order: 'tp-dp-pp' is not an order of tp, cp, ep, dp, pp; valid: e.g. tp-cp-ep-dp-pp\n");
  p.rank_order = "tp-cp-ep-pp-dp";
  CHECK(check(llama70b(), a100(), 8, p) == "");
}

TEST_CASE("full recompute cannot cover more layers than a stage holds, other granularities take no count", "[plan]") {
  ParallelPlan p = plan(8, 4, 32);  // 20 layers per stage
  p.recompute_granularity = RecomputeGranularity::full;
  p.recompute_num_layers = 21;
  CHECK(check(llama70b(), a100(), 32, p) ==
        "plan.recompute_num_layers: 21 exceeds the layers per pipeline stage (20); valid: 0..20\n");
  p.recompute_granularity = RecomputeGranularity::selective;
  p.recompute_num_layers = 1;
  CHECK(check(llama70b(), a100(), 32, p) ==
        "plan.recompute_num_layers: set but recompute_granularity is not full; valid: 0, or recompute_granularity: full\n");
}

TEST_CASE("optimizer offload needs a sharded optimizer", "[plan]") {
  ParallelPlan p = plan(8, 1, 16);
  p.offload_optimizer = true;
  CHECK(check(llama70b(), a100(), 16, p) ==
        "plan.offload_optimizer: needs a sharded optimizer (ZeRO-Offload runs on ZeRO stage >= 1); valid: zero_stage 1, "
        "2 or 3\n");
  p.zero_stage = 2;
  CHECK(check(llama70b(), a100(), 16, p) == "");
}

TEST_CASE("a step with more schedule items than the replay takes is refused, naming the largest global batch",
          "[plan]") {
  // TP8 PP4 on 64 devices: DP 2, 4 stages, 2 x 4 = 8 items per micro-batch.
  const long long fits = kMaxScheduleItems / 8 * 2;  // micro-batches x DP
  CHECK(check(llama70b(), a100(), 64, plan(8, 4, 64, static_cast<int>(fits))) == "");
  const std::string text = check(llama70b(), a100(), 64, plan(8, 4, 64, static_cast<int>(fits + 2)));
  CHECK(text.find("plan.global_batch_size") != std::string::npos);
  CHECK(text.find("more than the replay takes") != std::string::npos);
  CHECK(text.find("global_batch_size <= " + std::to_string(fits)) != std::string::npos);
}

TEST_CASE("The framework decides which ZeRO stages run with PP: torchtitan's FSDP does, DeepSpeed's engine not",
          "[plan][framework]") {
  ParallelPlan p = plan(8, 2, 16);
  p.zero_stage = 3;
  p.framework = Framework::fsdp;
  CHECK(check(llama70b(), a100(), 16, p) == "");
  p.framework = Framework::deepspeed;
  p.zero_stage = 2;
  CHECK(check(llama70b(), a100(), 16, p) ==
        "plan.zero_stage: ZeRO-2 cannot be combined with pipeline parallelism in deepspeed (it allows stage 0 or 1 "
        "with PP > 1); valid: zero_stage 0 or 1 with PP > 1, or PP 1, or framework fsdp or deepspeed-2021\n");
}
