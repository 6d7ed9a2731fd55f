// Feasibility of a plan against a model and a cluster: every problem at once, each with
// the key path and what would be valid. Rules follow Megatron-LM's argument checks and
// DeepSpeed's ZeRO constraints. Our calls where the sources leave a choice:
// - sequence_parallel with TP 1 is an error (Megatron silently turns it off; we change nothing
//   behind the user's back, so scenarios copied from launch scripts must say false);
// - seq_length > max_position_embeddings is an error only for learned absolute positions;
//   rotary / ALiBi models are routinely trained past it (e.g. with CP at 128k), so it passes;
// - CP needs 2*CP to divide seq_length (Megatron's load-balanced causal split);
// - what the plan's framework does not run is an error, read from its table entry
//   (trainsim/framework): ZeRO stages above its max_zero_stage_with_pp with PP > 1 (DeepSpeed's
//   PipelineEngine asserts zero_optimization_stage() < 2), schedules with PP it does not have
//   (DeepSpeed: its TrainSchedule, 1F1B, only), the distributed optimizer outside Megatron,
//   ZeRO stages it does not have (FSDP: 0, 2, 3), context parallelism, another vendor's
//   hardware for an Ascend-only framework (MindSpeed needs torch_npu). ZeRO with
//   use_distributed_optimizer is an error: pick one way of sharding the optimizer;
// - offload_optimizer needs a sharded optimizer (ZeRO-Offload runs on ZeRO stage >= 1).
#include "trainsim/plan/plan_check.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "trainsim/framework/communicator.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/schedule/layer_split.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/schedule/schedule_entry.hpp"

namespace trainsim {

namespace {

// The most micro-batches a grouping runs as one group on p stages (PyTorch's rounds: 2p - 1;
// Megatron-Core: its group size; Megatron-LM 2021: p). One group never holds more than
// max(2p - 1, the set size), which bounds the search.
int largest_single_group(const MicrobatchGroups& groups, int stages) {
  int largest = 1;
  const int bound = 2 * stages + std::max(0, groups.size);
  for (int m = 1; m <= bound; ++m)
    if (microbatch_group_size(groups, stages, m) >= m) largest = m;
  return largest;
}

// The product of the hierarchical CP sizes, capped so that no list overflows (each size <= 1e6).
long long level_product(const std::vector<int>& levels) {
  long long product = 1;
  for (int n : levels) product = std::min<long long>(product * n, 1LL << 40);
  return product;
}

std::string divisors_text(long long n, int limit = 24) {
  std::string out;
  int count = 0;
  for (long long d = 1; d <= n; ++d) {
    if (n % d != 0) continue;
    if (count++ == limit) return out + ", ...";
    out += (out.empty() ? "" : ", ") + std::to_string(d);
  }
  return out;
}

std::string multiples_text(long long step, int count = 4) {
  std::string out;
  for (int i = 1; i <= count; ++i) out += (out.empty() ? "" : ", ") + std::to_string(step * i);
  return out + ", ...";
}

std::string str(long long x) { return std::to_string(x); }

template <typename T>
bool contains(const std::vector<T>& values, const T& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// "a, b or c".
std::string or_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return out;
}

std::string stages_text(const std::vector<int>& stages) {
  std::vector<std::string> items;
  for (int stage : stages) items.push_back(str(stage));
  return or_list(items);
}

std::string schedules_text(const std::vector<PipelineSchedule>& schedules) {
  std::vector<std::string> items;
  for (PipelineSchedule schedule : schedules) items.push_back(to_string(schedule));
  return or_list(items);
}

// The schedules with one model chunk per stage (what an interleaved plan without v can use),
// from the schedule module's list: "gpipe, 1f1b, zb-h1, zb-h2".
std::string one_chunk_schedules() {
  std::string out;
  for (PipelineSchedule s : all_schedules())
    if (s != PipelineSchedule::interleaved && chunks_per_stage(s, 1) == 1)
      out += (out.empty() ? "" : ", ") + std::string(to_string(s));
  return out;
}

// Whether the framework runs the schedule with PP > 1. Its table lists zb-h1 as trainsim's
// zero-bubble replay (B and W split, the sail-sg Megatron fork's schedules); zb-h2 and zb-v
// come from the same fork and split the backward the same way, so they go where zb-h1 goes;
// so do dualpipe and dualpipev (DeepSeek's reference code, whose W passes are the same
// WeightGradStore split), which no framework table lists yet.
bool runs_schedule(const FrameworkEntry& framework, PipelineSchedule schedule) {
  const auto& listed = framework.schedules_with_pp.value;
  return contains(listed, schedule) ||
         (has_weight_passes(schedule) && contains(listed, PipelineSchedule::zero_bubble_h1));
}

// ", or framework a, b or c": the table's frameworks that take what the plan asks ("" if none).
template <typename Pred>
std::string or_frameworks(Pred takes) {
  std::vector<std::string> names;
  for (const FrameworkEntry& e : framework_table())
    if (takes(e)) names.push_back(e.name);
  return names.empty() ? std::string() : ", or framework " + or_list(names);
}

// DualPipe and DualPipeV as deepseek-ai/DualPipe's step() asserts them: an even number of
// ranks and of micro-batches, at least two per rank (dualpipe.py); at least two micro-batches
// per rank (dualpipev.py). DualPipeV's 2p chunks need whole layers, as ZB-V's.
std::vector<Diagnostic> dual_pipe_diagnostics(const ParallelPlan& plan, int layers, bool devices_ok) {
  std::vector<Diagnostic> out;
  auto add = [&](const std::string& key, const std::string& problem, const std::string& valid) {
    out.push_back(Diagnostic{SourceLocation{}, key, problem, valid});
  };
  const bool dual = plan.schedule == PipelineSchedule::dualpipe;
  if (!dual && plan.schedule != PipelineSchedule::dualpipev) return out;
  const std::string name = to_string(plan.schedule);
  const int pp = plan.pipeline_model_parallel_size;
  if (dual && pp % 2 != 0)
    add("plan.pipeline_model_parallel_size",
        "dualpipe runs its two directions on an even number of stages, not " + str(pp),
        "an even pipeline_model_parallel_size, or schedule dualpipev");
  const int m = plan.num_microbatches();
  if (devices_ok && m > 0 && (m < 2 * pp || (dual && m % 2 != 0)))
    add("plan.global_batch_size",
        name + " needs " + (dual ? "an even number of micro-batches, " : "") + "at least 2 x pipeline_model_parallel_size (" +
            str(2 * pp) + ") micro-batches; the plan has " + str(m),
        "global_batch_size a multiple of micro_batch_size * DP * " + (dual ? str(2) : str(1)) + " giving >= " +
            str(2 * pp) + " micro-batches, at least " +
            str(static_cast<long long>(plan.micro_batch_size) * plan.data_parallel_size * 2 * pp));
  if (!dual && plan.layers_per_stage.empty() && pp > 0 && layers % (2 * pp) != 0)
    add("plan.pipeline_model_parallel_size",
        name + ": 2 * pipeline_model_parallel_size (" + str(2 * pp) + " chunks) does not divide num_hidden_layers (" +
            str(layers) + ")",
        "2 x PP in " + divisors_text(layers) + ", or give plan.layers_per_stage");
  return out;
}

}  // namespace

void derive_virtual_stages(ParallelPlan& plan, int num_layers) {
  if (plan.virtual_pipeline_model_parallel_size > 0) return;
  plan.virtual_pipeline_model_parallel_size =
      plan.schedule == PipelineSchedule::interleaved ? default_virtual_stages(plan, num_layers) : 1;
}

void derive_plan(ParallelPlan& plan, int num_devices) {
  const long long mp = plan.model_parallel_size();
  plan.data_parallel_size = mp > 0 ? static_cast<int>(std::max(num_devices / mp, 0LL)) : 0;
  // FP8 Linears that keep their inputs in FP8 (Transformer Engine's: framework.hpp
  // fp8_linear_inputs_kept_in_fp8) do so whatever the plan says: 16-bit inputs (none) are not a
  // setting they have, so an FP8 plan on such a framework keeps them as linear_inputs prices them.
  if (plan.precision == Precision::fp8 && plan.fp8_activation_cache == Fp8ActivationCache::none &&
      framework_entry(plan.framework).fp8_linear_inputs_kept_in_fp8.value)
    plan.fp8_activation_cache = Fp8ActivationCache::linear_inputs;
}

bool can_overlap_tp_comm(const ParallelPlan& plan) {
  const FrameworkEntry& framework = framework_entry(plan.framework);
  return plan.tensor_model_parallel_size > 1 && framework.tp_comm_overlap.value &&
         (plan.sequence_parallel || !framework.tp_comm_overlap_needs_sequence_parallel.value);
}

long long schedule_items_per_microbatch(const ParallelPlan& plan) {
  return 2LL * std::max(1, plan.pipeline_model_parallel_size) * std::max(1, plan.virtual_pipeline_model_parallel_size);
}

std::vector<Diagnostic> check_plan(const ModelSpec& model, const HardwareSpec& hardware, int num_devices,
                                   const ParallelPlan& plan) {
  std::vector<Diagnostic> out;
  auto add = [&](const std::string& key, const std::string& problem, const std::string& valid) {
    out.push_back(Diagnostic{SourceLocation{}, key, problem, valid});
  };
  const int tp = plan.tensor_model_parallel_size, pp = plan.pipeline_model_parallel_size;
  const int vpp = plan.virtual_pipeline_model_parallel_size, cp = plan.context_parallel_size;
  const int ep = plan.expert_model_parallel_size, dp = plan.data_parallel_size;
  const int layers = model.num_layers;

  // Tensor parallel splits attention heads and KV heads.
  const int heads = model.num_attention_heads, kv = model.num_key_value_heads;
  if (heads % tp != 0 || kv % tp != 0)
    add("plan.tensor_model_parallel_size",
        str(tp) + " does not divide num_attention_heads (" + str(heads) + ") and num_key_value_heads (" + str(kv) + ")",
        divisors_text(std::gcd(heads, kv)));

  // Pipeline stages: an even split, or one of the uneven ones (trainsim/schedule/layer_split.hpp,
  // Megatron's rules), each with virtual stages too.
  const bool uneven_keys = plan.decoder_first_pipeline_num_layers > 0 || plan.decoder_last_pipeline_num_layers > 0 ||
                           plan.account_for_embedding_in_pipeline_split || plan.account_for_loss_in_pipeline_split;
  // A framework with its own automatic split (torchtitan's) takes any count (layer_split_problems
  // says when it leaves a chunk no layer).
  const bool framework_split = framework_entry(plan.framework).pipeline_split_edge_layers.value > 0;
  if (plan.layers_per_stage.empty() && !uneven_keys && !framework_split) {
    if (layers % (pp * vpp) != 0) {
      const std::string what = vpp > 1 ? "pipeline_model_parallel_size * virtual_pipeline_model_parallel_size (" +
                                             str(pp) + " * " + str(vpp) + ")"
                                       : str(pp);
      add(vpp > 1 ? "plan.virtual_pipeline_model_parallel_size" : "plan.pipeline_model_parallel_size",
          what + " does not divide num_hidden_layers (" + str(layers) + ")",
          "PP (x VPP) in " + divisors_text(layers) +
              ", or give plan.layers_per_stage, decoder_first/last_pipeline_num_layers or "
              "account_for_embedding/loss_in_pipeline_split");
    }
  } else if (!plan.layers_per_stage.empty()) {
    const auto& split = plan.layers_per_stage;
    const int sum = std::accumulate(split.begin(), split.end(), 0);
    if (static_cast<int>(split.size()) != pp)
      add("plan.layers_per_stage",
          "has " + str(split.size()) + " entries but pipeline_model_parallel_size is " + str(pp),
          "one entry per pipeline stage");
    if (sum != layers)
      add("plan.layers_per_stage", "sums to " + str(sum) + ", not num_hidden_layers (" + str(layers) + ")",
          "one positive count per stage, summing to " + str(layers));
  }
  if (pp >= 1 && vpp >= 1)
    for (const SplitProblem& problem : layer_split_problems(plan, layers)) add(problem.key, problem.problem, problem.valid);

  // Devices = TP * PP * CP * DP.
  const long long mp = static_cast<long long>(tp) * pp * cp;
  const bool devices_ok = num_devices % mp == 0 && dp >= 1;
  if (!devices_ok)
    add("num_devices",
        str(num_devices) + " is not a multiple of TP*PP*CP = " + str(tp) + "*" + str(pp) + "*" + str(cp) + " = " +
            str(mp),
        "num_devices in " + multiples_text(mp));

  // Batch: global batch = micro batch * DP * number of micro-batches.
  if (devices_ok) {
    const long long step = static_cast<long long>(plan.micro_batch_size) * dp;
    if (plan.global_batch_size % step != 0)
      add("plan.global_batch_size",
          str(plan.global_batch_size) + " is not a multiple of micro_batch_size * DP = " + str(plan.micro_batch_size) +
              " * " + str(dp) + " = " + str(step),
          "multiples of " + str(step) + ": " + multiples_text(step));
  }

  // The replay builds every schedule item of the step (micro-batch x virtual stage x forward
  // and backward): past a few million of them the task graph no longer fits in memory.
  if (devices_ok && plan.micro_batch_size > 0) {
    const long long per_microbatch = schedule_items_per_microbatch(plan);
    const long long m = plan.global_batch_size / (static_cast<long long>(plan.micro_batch_size) * dp);
    if (m * per_microbatch > kMaxScheduleItems) {
      const long long max_m = kMaxScheduleItems / per_microbatch;
      add("plan.global_batch_size",
          str(plan.global_batch_size) + " gives " + str(m) + " micro-batches a step, " + str(m * per_microbatch) +
              " schedule items (micro-batches x PP x VPP x 2), more than the replay takes (" +
              str(kMaxScheduleItems) + "); raise micro_batch_size or DP",
          "global_batch_size <= " + str(max_m * plan.micro_batch_size * dp));
    }
  }

  // Experts.
  if (model.moe) {
    const int experts = model.moe->num_experts;
    if (experts % ep != 0)
      add("plan.expert_model_parallel_size", str(ep) + " does not divide the number of experts (" + str(experts) + ")",
          divisors_text(experts));
    if (devices_ok && (static_cast<long long>(dp) * cp) % ep != 0)
      add("plan.expert_model_parallel_size",
          str(ep) + " does not divide DP*CP = " + str(static_cast<long long>(dp) * cp) + " (Megatron)",
          divisors_text(static_cast<long long>(dp) * cp));
  } else if (ep > 1) {
    add("plan.expert_model_parallel_size", str(ep) + " > 1 but the model has no experts", "1");
  }

  // Virtual pipeline and the interleaved schedule (Megatron's rules).
  const bool interleaved = plan.schedule == PipelineSchedule::interleaved;
  if (vpp > 1 && !interleaved)
    add("plan.virtual_pipeline_model_parallel_size", str(vpp) + " > 1 needs schedule: interleaved",
        "1, or set plan.schedule: interleaved");
  if (interleaved) {
    if (vpp < 2)
      add("plan.schedule", "interleaved needs virtual_pipeline_model_parallel_size >= 2", one_chunk_schedules());
    if (pp < 2) add("plan.schedule", "interleaved needs pipeline_model_parallel_size >= 2", one_chunk_schedules());
    const int m = plan.num_microbatches();
    const MicrobatchGroups groups = microbatch_groups(plan);
    if (groups.rule == MicrobatchGrouping::megatron_2021) {
      if (devices_ok && m > 0 && m % pp != 0)
        add("plan.global_batch_size",
            "interleaved schedule: number of micro-batches (" + str(m) +
                ") must be a multiple of pipeline_model_parallel_size (" + str(pp) + ")",
            "global_batch_size multiple of micro_batch_size * DP * PP = " +
                str(static_cast<long long>(plan.micro_batch_size) * dp * pp));
    } else if (devices_ok && m > 0 && pp > 1) {
      const int v = std::max(2, vpp);
      const int n = microbatch_group_size(groups, pp, m);
      // More than one group of N != p on a framework whose sends and receives run on their own streams
      // (PyTorch's runtime): trainsim's two in-order pipeline streams per device deadlock or
      // stall on the order such a pipeline sends to its two neighbours (tests/graph/
      // interleaved_exchange_test.cpp keeps the shapes that replay). Megatron-Core's exchanges
      // (blocking or overlapped) replay them.
      const FrameworkEntry& fw = framework_entry(plan.framework);
      const bool on_streams = fw.blocking_p2p.value || !fw.p2p_exchange_blocking.value;
      // The framework's own rule (its entry's interleaved_microbatch_groups).
      if (const std::optional<Diagnostic> d = schedule_entry(PipelineSchedule::interleaved).shape_problem(pp, m, v, groups))
        add(d->key_path, d->problem, d->valid);
      else if (on_streams && n != pp && n < m)
        add("plan.global_batch_size",
            str(m) + " micro-batches run in groups of " + str(n) + " on " + str(pp) + " stages (" +
                std::string(to_string(plan.framework)) +
                "'s interleaving): trainsim does not replay groups other than the pipeline size on its send and "
                "receive streams yet",
            "a global batch giving a multiple of " + str(pp) + " micro-batches, or at most " +
                str(largest_single_group(groups, pp)) + " (one group)");
    }
  }
  // Read by the interleaved schedule only (Megatron-Core's schedules.py): elsewhere it would be ignored.
  if (plan.microbatch_group_size_per_vp_stage > 0 && plan.schedule != PipelineSchedule::interleaved)
    add("plan.microbatch_group_size_per_vp_stage",
        str(plan.microbatch_group_size_per_vp_stage) + " with schedule " + std::string(to_string(plan.schedule)) +
            ": micro-batch groups are the interleaved schedule's",
        "leave it out, or schedule: interleaved");
  // Megatron-Core's option only: another framework's interleaving has no group size to set.
  else if (plan.microbatch_group_size_per_vp_stage > 0 &&
      framework_entry(plan.framework).interleaved_microbatch_groups.value != MicrobatchGrouping::megatron_core)
    add("plan.microbatch_group_size_per_vp_stage",
        str(plan.microbatch_group_size_per_vp_stage) + ", but " + std::string(to_string(plan.framework)) +
            " has no such option (Megatron-Core's --microbatch-group-size-per-virtual-pipeline-stage)",
        "leave it out, or plan.framework: megatron-core / mindspeed");

  // ZB-V runs two chunks per stage, stage s holding virtual stages s and 2p-1-s (Qi et al.
  // 2024): every one of the 2p chunks needs whole layers, as Megatron's virtual stages do.
  if (plan.schedule == PipelineSchedule::zero_bubble_v && plan.layers_per_stage.empty() && !uneven_keys &&
      !framework_split && layers % (2 * pp) != 0)
    add("plan.pipeline_model_parallel_size",
        "zb-v: 2 * pipeline_model_parallel_size (" + str(2 * pp) + " chunks) does not divide num_hidden_layers (" +
            str(layers) + ")",
        "2 x PP in " + divisors_text(layers) + ", or give plan.layers_per_stage");

  for (Diagnostic& d : dual_pipe_diagnostics(plan, layers, devices_ok)) out.push_back(std::move(d));

  // Post-validation chains each step's stages onto the last one's (simulation.cpp): one stage
  // has nothing to chain, so the key would be ignored.
  if (plan.optimizer_post_validation && pp == 1)
    add("plan.optimizer_post_validation",
        "true with pipeline_model_parallel_size 1: it lets a pipeline's stages start the next step early, and one stage "
        "has no other to overlap",
        "false, or pipeline_model_parallel_size > 1");
  // Sequence parallel shards along TP: meaningless without TP (Megatron disables it silently).
  if (plan.sequence_parallel && tp == 1)
    add("plan.sequence_parallel", "true needs tensor_model_parallel_size > 1", "false, or TP > 1");

  // Context parallel splits the sequence into 2*CP chunks (Megatron's causal load balancing).
  if (cp > 1 && plan.seq_length % (2 * cp) != 0)
    add("plan.context_parallel_size",
        "2*CP = " + str(2 * cp) + " does not divide seq_length (" + str(plan.seq_length) + ")",
        "CP with 2*CP dividing seq_length");
  // The context-parallel variant (issue 17), as Transformer Engine's attention with CP asserts:
  // Ulysses scatters the heads over CP (AttnFuncWithCPAndQKVOA2A: "The number of attention
  // heads needs to be divisible by CP size!", for Q and for K heads per TP rank); a sliding
  // window runs only with all_gather or a2a (attn_forward_func_with_cp); the all-gather
  // variant has no packed (THD) layout (AttnFuncWithCPAndKVAllGather: qkv_format != "thd").
  if (cp > 1 && heads % tp == 0 && kv % tp == 0) {
    const std::string cp_kind = std::string("cp_comm_type ") + to_string(plan.cp_comm_type) + " with CP " + str(cp);
    // PyTorch's context_parallel rotates K and V round a ring (rotate methods allgather and
    // alltoall): no head-splitting all-to-all (framework.hpp CpImplementation).
    const FrameworkEntry& cp_framework = framework_entry(plan.framework);
    const bool torch_cp = runs_torch_context_parallel(plan.framework);
    if (torch_cp && (plan.cp_comm_type == CpCommType::a2a || plan.cp_comm_type == CpCommType::a2a_p2p))
      add("plan.cp_comm_type",
          cp_kind + ", but " + cp_framework.name +
              " runs PyTorch's context_parallel, whose ring rotates K and V (no all-to-all of heads)",
          "all_gather (rotate method allgather, torchtitan's default) or p2p (alltoall)");
    // Its ring calls SDPA's flash or efficient kernel per step; any other attention raises "CP
    // only supports flash attention and memory efficient attention now" (_attention.py).
    if (torch_cp && !plan.use_flash_attn)
      add("plan.use_flash_attn",
          "false with CP " + str(cp) + ", but " + cp_framework.name +
              "'s context_parallel runs only SDPA's flash and memory-efficient attention kernels",
          "true (attention_kernel auto, flash2 or another fused kernel), or context_parallel_size 1");
    if (plan.cp_comm_type == CpCommType::a2a && ((heads / tp) % cp != 0 || (kv / tp) % cp != 0))
      add("plan.cp_comm_type",
          cp_kind + ": all-to-all CP splits heads, but CP does not divide the heads per TP rank (" + str(heads / tp) +
              " query, " + str(kv / tp) + " key/value)",
          "p2p or all_gather, or CP in " + divisors_text(std::gcd(heads / tp, kv / tp)));
    // Hierarchical CP: Megatron asserts np.prod(hierarchical_context_parallel_sizes) ==
    // context_parallel_size whenever the sizes are given; a2a+p2p takes exactly two, [a2a, p2p]
    // (TE: "requires cp_group = [a2a_cp_group, p2p_cp_group]"), and its all-to-all splits the
    // heads per TP rank over the a2a size.
    const std::vector<int>& levels = plan.hierarchical_context_parallel_sizes;
    const long long product = level_product(levels);
    const int a2a_fit = std::gcd(cp, std::gcd(heads / tp, kv / tp));
    const std::string example = "[" + str(a2a_fit) + ", " + str(cp / a2a_fit) + "]";
    if (plan.cp_comm_type == CpCommType::a2a_p2p && (levels.size() != 2 || product != cp))
      add("plan.hierarchical_context_parallel_sizes",
          cp_kind + " needs [a2a size, p2p size] with product CP (" + str(cp) + ")", "two sizes such as " + example);
    else if (!levels.empty() && product != cp)
      add("plan.hierarchical_context_parallel_sizes",
          "the sizes multiply to " + str(product) + ", not context_parallel_size (" + str(cp) + ")",
          "sizes with product " + str(cp) + ", such as " + example);
    if (plan.cp_comm_type == CpCommType::a2a_p2p && levels.size() == 2 && product == cp) {
      if ((heads / tp) % levels[0] != 0 || (kv / tp) % levels[0] != 0)
        add("plan.hierarchical_context_parallel_sizes",
            cp_kind + ": the a2a size " + str(levels[0]) + " does not divide the heads per TP rank (" +
                str(heads / tp) + " query, " + str(kv / tp) + " key/value)",
            "an a2a size in " + divisors_text(std::gcd(heads / tp, kv / tp)) + " dividing CP");
    }
    bool window = false;
    for (int l = 0; l < layers; ++l)
      window = window || (model.layer_has_window(l) && model.sliding_window < plan.seq_length);
    if (window && (plan.cp_comm_type == CpCommType::p2p || plan.cp_comm_type == CpCommType::a2a_p2p))
      add("plan.cp_comm_type",
          cp_kind + ": the ring does not run sliding-window attention (sliding_window " + str(model.sliding_window) +
              " < seq_length)",
          "all_gather or a2a");
    // MindSpeed's --cp-attention-mask-type (mindspeed/arguments.py) shapes its ring attention
    // (ring_context_parallel.py); no other framework here has the option.
    if (plan.cp_attention_mask_type == CpAttentionMask::general) {
      if (plan.framework != Framework::mindspeed)
        add("plan.cp_attention_mask_type",
            std::string("general is MindSpeed's --cp-attention-mask-type; framework ") + to_string(plan.framework) +
                " runs CP attention causal",
            "causal, or framework mindspeed");
      else if (plan.cp_comm_type != CpCommType::p2p)
        add("plan.cp_attention_mask_type", "general applies to the ring (megatron_cp_algo), not " + cp_kind, "causal, or cp_comm_type p2p");
      else if (window || !plan.document_lengths.empty())
        add("plan.cp_attention_mask_type", "general runs the full mask: no sliding window or packed documents with it",
            "causal");
    }
    if (!plan.document_lengths.empty() && plan.cp_comm_type == CpCommType::all_gather)
      add("plan.cp_comm_type", cp_kind + ": the all-gather variant has no packed-sequence (THD) layout",
          "p2p or a2a, or no data.document_lengths");
  }
  if (const long long product = level_product(plan.hierarchical_context_parallel_sizes); cp <= 1 && product != 1)
    add("plan.hierarchical_context_parallel_sizes",
        "the sizes multiply to " + str(product) + ", but context_parallel_size is 1 (no context-parallel group to split)",
        "leave it out, or context_parallel_size " + str(product) + " with cp_comm_type a2a+p2p");
  if (cp <= 1 && plan.cp_attention_mask_type == CpAttentionMask::general)
    add("plan.cp_attention_mask_type", "general shapes the context-parallel ring's attention, but context_parallel_size is 1",
        "causal, or context_parallel_size > 1");
  // Learned absolute positions cannot go past their table; rotary models may be extended.
  if (model.learned_position_embeddings() && plan.seq_length > model.max_position_embeddings)
    add("plan.seq_length",
        str(plan.seq_length) + " exceeds max_position_embeddings (" + str(model.max_position_embeddings) +
            ") of a model with learned positions",
        "<= " + str(model.max_position_embeddings));

  if (plan.micro_batch_size > plan.global_batch_size)
    add("plan.micro_batch_size", "exceeds global_batch_size (" + str(plan.global_batch_size) + ")",
        "<= " + str(plan.global_batch_size));

  // Precision needs hardware support.
  if (plan.precision == Precision::fp8 && hardware.device.peak_flops_fp8 <= 0)
    add("plan.precision", "fp8 but " + hardware.device.name + " has no FP8 units (peak_flops_fp8 = 0)", "bf16, fp16");
  // MXFP8 (one E8M0 scale per 32 elements) runs on Blackwell's tensor cores only (TE recipe
  // MXFP8BlockScaling; Megatron-Core: "'mxfp8' for Blackwell architecture only").
  if (plan.precision == Precision::fp8 && plan.fp8_recipe == Fp8Recipe::mxfp8 && !hardware.device.mxfp8)
    add("plan.fp8_recipe", "mxfp8 but " + hardware.device.name + " has no MXFP8 tensor cores (device.mxfp8 false)",
        "delayed, tensorwise, blockwise (mxfp8 on a device with device.mxfp8 true, e.g. B200)");
  // Megatron-Core's checks of --first-last-layers-bf16 (transformer_config.py __post_init__).
  if (plan.first_last_layers_bf16) {
    if (plan.precision != Precision::fp8)
      add("plan.first_last_layers_bf16",
          std::string("true on a ") + to_string(plan.precision) + " plan (no FP8 layers)", "false, or plan.precision fp8");
    else if (plan.fp8_recipe == Fp8Recipe::delayed)
      add("plan.first_last_layers_bf16", "true with fp8_recipe delayed (Megatron-Core: \"Delayed scaling does not "
          "support first / last layer in BF16\")", "false, or plan.fp8_recipe tensorwise, blockwise or mxfp8");
    const int per_stage = model.num_layers / std::max(1, plan.pipeline_model_parallel_size);
    for (const auto& [key, n] : {std::pair{"plan.num_layers_at_start_in_bf16", plan.num_layers_at_start_in_bf16},
                                 std::pair{"plan.num_layers_at_end_in_bf16", plan.num_layers_at_end_in_bf16}})
      if (n > per_stage)
        add(key, str(n) + " exceeds the layers per pipeline stage (" + str(per_stage) + ")",
            "0 to " + str(per_stage));
  }

  // What the plan's framework runs (trainsim/framework, each value with its source): its
  // pipeline schedules, its way of sharding the optimizer, its ZeRO stages (and which of them
  // with PP), context parallelism. Each refusal names the framework and what it allows, and
  // the frameworks that would run the plan as it is.
  const FrameworkEntry& framework = framework_entry(plan.framework);
  const std::string in = " in " + framework.name;
  if (framework.ascend_only.value && !is_ascend(hardware))
    add("plan.framework",
        framework.name + " runs on Ascend NPUs only (it needs torch_npu), but hardware " + hardware.name + " (" +
            hardware.device.name + ") is not one (its device.name does not start with 'Ascend')",
        std::string("framework ") + to_string(framework.cuda_base.value) + " (what " + framework.name +
            " patches) on this hardware, or an Ascend hardware file such as hardware/ascend-910b3.yaml");
  if (plan.use_distributed_optimizer && !framework.distributed_optimizer.value)
    add("plan.use_distributed_optimizer",
        "true, but there is no distributed optimizer" + in + " (its optimizer sharding is zero_stage " +
            stages_text(framework.zero_stages.value) + ")",
        "use_distributed_optimizer: false and zero_stage " + stages_text(framework.zero_stages.value) +
            or_frameworks([](const FrameworkEntry& e) { return e.distributed_optimizer.value; }));
  const bool stage_ok = contains(framework.zero_stages.value, plan.zero_stage);
  // A framework whose only optimizer sharding is a distributed optimizer (MindSpore's optimizer
  // parallelism) shards ZeRO-1's optimizer state that way: say so.
  const bool sharding_by_optimizer = plan.zero_stage == 1 && framework.distributed_optimizer.value;
  if (!stage_ok)
    add("plan.zero_stage", str(plan.zero_stage) + " is not a ZeRO stage" + in + " (it has " +
                               stages_text(framework.zero_stages.value) + ")",
        "zero_stage " + stages_text(framework.zero_stages.value) +
            (sharding_by_optimizer ? " with use_distributed_optimizer: true (its optimizer-state sharding)" : "") +
            or_frameworks([&](const FrameworkEntry& e) { return contains(e.zero_stages.value, plan.zero_stage); }));
  const int most_with_pp = framework.max_zero_stage_with_pp.value;
  if (stage_ok && plan.zero_stage > most_with_pp && pp > 1) {
    std::vector<int> with_pp;
    for (int stage : framework.zero_stages.value)
      if (stage <= most_with_pp) with_pp.push_back(stage);
    add("plan.zero_stage",
        "ZeRO-" + str(plan.zero_stage) + " cannot be combined with pipeline parallelism" + in +
            (with_pp.empty() ? " (it runs no ZeRO stage with PP > 1)"
                             : " (it allows stage " + stages_text(with_pp) + " with PP > 1)"),
        (with_pp.empty() ? std::string() : "zero_stage " + stages_text(with_pp) + " with PP > 1, or ") + "PP 1" +
            or_frameworks([&](const FrameworkEntry& e) {
              return contains(e.zero_stages.value, plan.zero_stage) && plan.zero_stage <= e.max_zero_stage_with_pp.value;
            }));
  }
  if (pp > 1 && framework.schedules_with_pp.value.empty())
    add("plan.pipeline_model_parallel_size",
        str(pp) + ", but there is no pipeline parallelism" + in + " (it runs PP 1 only)",
        "pipeline_model_parallel_size 1" + or_frameworks([&](const FrameworkEntry& e) { return runs_schedule(e, plan.schedule); }));
  else if (pp > 1 && !runs_schedule(framework, plan.schedule))
    add("plan.schedule",
        std::string(to_string(plan.schedule)) + " with PP > 1 is not a schedule" + in + " (it runs " +
            schedules_text(framework.schedules_with_pp.value) + ")",
        "schedule " + schedules_text(framework.schedules_with_pp.value) + ", or PP 1" +
            or_frameworks([&](const FrameworkEntry& e) { return runs_schedule(e, plan.schedule); }));
  // Megatron asserts it (arguments.py validate_args): without the overlap the interleaved
  // schedule's batched exchange would hold two sends and receives between the same two ranks.
  if (!plan.overlap_p2p_comm && plan.schedule == PipelineSchedule::interleaved && vpp > 1 && pp <= 2 &&
      framework.p2p_overlap_interleaved.value)
    add("plan.overlap_p2p_comm",
        "false with the interleaved schedule needs pipeline_model_parallel_size > 2 (it is " + str(pp) + ")" + in +
            ": arguments.py asserts it, to avoid 'multiple p2p sends and recvs between same 2 ranks per "
            "communication batch'",
        "overlap_p2p_comm: true, or pipeline_model_parallel_size >= 3");
  // Megatron-Core's combined 1F1B (transformer_config.py __post_init__, overlap_moe_expert_parallel_comm):
  // expert parallelism, virtual stages when PP > 1, the alltoall or flex dispatcher, no full recompute.
  if (plan.overlap_moe_expert_parallel_comm) {
    const std::string key = "plan.overlap_moe_expert_parallel_comm";
    // The framework must have it (framework.hpp moe_expert_parallel_comm_overlap).
    if (!framework.moe_expert_parallel_comm_overlap.value)
      add(key, "true, but there is no expert-parallel all-to-all overlap" + in,
          "false" + or_frameworks([](const FrameworkEntry& e) { return e.moe_expert_parallel_comm_overlap.value; }));
    if (plan.expert_model_parallel_size <= 1)
      add(key, "true needs expert parallelism (expert_model_parallel_size is " + str(plan.expert_model_parallel_size) + ")",
          "false, or expert_model_parallel_size > 1");
    if (pp > 1 && plan.schedule != PipelineSchedule::interleaved)
      add(key, "true with PP " + str(pp) + " needs virtual pipeline stages (Megatron-Core asserts it), not schedule " +
                   to_string(plan.schedule),
          "false, or schedule: interleaved, or pipeline_model_parallel_size 1");
    if (plan.recompute_granularity == RecomputeGranularity::full)
      add(key, "true with full recompute: the combined 1F1B cannot split a checkpointed layer (Megatron-Core asserts it)",
          "false, or recompute_granularity selective or none");
    if (model.moe && model.moe->token_dispatcher == TokenDispatcher::allgather)
      add(key, "true with the allgather token dispatcher (Megatron-Core allows alltoall and flex)",
          "false, or moe.token_dispatcher alltoall or flex");
  }
  // Vocabulary Parallelism (FrameworkEntry::vocab_parallel; the fork's arguments.py asserts).
  if (plan.vocab_parallel != VocabParallel::none) {
    const std::string key = "plan.vocab_parallel";
    if (!framework.vocab_parallel.value)
      add(key, "set, but there is no vocabulary parallelism across pipeline stages" + in,
          "none" + or_frameworks([](const FrameworkEntry& e) { return e.vocab_parallel.value; }));
    if (pp < 2)
      add(key, "set with pipeline_model_parallel_size " + str(pp) + ": it splits the vocabulary over pipeline stages",
          "none, or pipeline_model_parallel_size >= 2");
    if (plan.schedule != PipelineSchedule::one_f_one_b)
      add(key, "runs on 1F1B only (the fork's vocab_parallel_schedule.py), not schedule " + std::string(to_string(plan.schedule)),
          "none, or schedule: 1f1b");
    // Megatron pads the vocabulary to a multiple of kVocabSizeDivisibleBy x TP; the fork asserts that
    // --make-vocab-size-divisible-by is a multiple of TP x PP, so every stage gets an equal shard.
    if (kVocabSizeDivisibleBy % (static_cast<long long>(tp) * pp) != 0)
      add(key, "needs TP x PP (" + str(static_cast<long long>(tp) * pp) +
                   ") to divide Megatron's --make-vocab-size-divisible-by (" + str(kVocabSizeDivisibleBy) +
                   "), so the padded vocabulary splits evenly",
          "none, or TP x PP in 2, 4, 8, 16, 32, 64, 128");
    if (model.mtp_layers > 0)
      add(key, "runs on the GPT model alone (the fork's README): no multi-token-prediction modules, but the model has " +
                   str(model.mtp_layers),
          "none, or a model without mtp_layers");
    if (model.tie_word_embeddings)
      add(key, "needs untied embeddings (the fork asserts --untie-embeddings-and-output-weights), but the model ties them",
          "none, or model tie_word_embeddings: false");
  }
  // TP overlap: the framework must have it (framework.hpp tp_comm_overlap).
  if (plan.tp_comm_overlap && !framework.tp_comm_overlap.value)
    add("plan.tp_comm_overlap", "true, but there is no tensor-parallel communication overlap" + in,
        "false" + or_frameworks([](const FrameworkEntry& e) { return e.tp_comm_overlap.value; }));
  else if (plan.tp_comm_overlap && framework.tp_comm_overlap_needs_sequence_parallel.value && !plan.sequence_parallel)
    add("plan.tp_comm_overlap",
        "true without sequence_parallel: " + std::string(to_string(plan.framework)) +
            " overlaps only sequence parallelism's all-gather / reduce-scatter (" +
            framework.tp_comm_overlap_needs_sequence_parallel.source + ")",
        tp > 1 ? "false, or sequence_parallel: true" : "false (TP 1 has no TP communication)");
  if (cp > 1 && !framework.context_parallel.value)
    add("plan.context_parallel_size", str(cp) + " > 1, but there is no context parallelism" + in,
        "1" + or_frameworks([](const FrameworkEntry& e) { return e.context_parallel.value; }));
  if (plan.use_distributed_optimizer && plan.zero_stage > 0)
    add("plan.use_distributed_optimizer", "true together with zero_stage " + str(plan.zero_stage) + ": pick one",
        "use_distributed_optimizer: false, or zero_stage: 0");
  if (plan.reuse_fp32_param && framework.reuse_fp32_param_saved_bytes.value <= 0)
    add("plan.reuse_fp32_param", "true, but there is no reuse of the fp32 parameters" + in,
        "false" + or_frameworks([](const FrameworkEntry& e) { return e.reuse_fp32_param_saved_bytes.value > 0; }));
  if (plan.torch_compile && !framework.torch_compile.value)
    add("plan.torch_compile", "true, but there is no torch.compile of the model" + in,
        "false" + or_frameworks([](const FrameworkEntry& e) { return e.torch_compile.value; }));
  // MindSpeed's feature depends on bf16 (reuse_fp32_param.py validate_args: dependency_check(args, 'bf16')).
  if (plan.reuse_fp32_param && plan.precision != Precision::bf16)
    add("plan.reuse_fp32_param", std::string("true with precision ") + to_string(plan.precision) +
                                     ": the fp32 copy is rebuilt from bf16 parameters",
        "precision: bf16, or reuse_fp32_param: false");
  // Optimizer offload (issue 14): the framework must have it (framework.hpp optimizer_offload).
  if (plan.offload_optimizer && !framework.optimizer_offload.value)
    add("plan.offload_optimizer", "cpu, but there is no optimizer-only CPU offload" + in,
        "none" + or_frameworks([](const FrameworkEntry& e) { return e.optimizer_offload.value; }));
  if (plan.offload_optimizer && plan.zero_stage == 0 && !plan.use_distributed_optimizer)
    add("plan.offload_optimizer", "needs a sharded optimizer (ZeRO-Offload runs on ZeRO stage >= 1)",
        "zero_stage 1, 2 or 3");
  // FSDP's mixed-precision policies (framework.hpp fsdp_pure / fsdp_full).
  if (plan.fsdp_mixed_precision != FsdpMixedPrecision::standard && !framework.fsdp_mixed_precision.value)
    add("plan.fsdp_mixed_precision",
        std::string(plan.fsdp_mixed_precision == FsdpMixedPrecision::pure ? "pure" : "full") +
            ", but there are no FSDP mixed-precision policies" + in,
        "default" + or_frameworks([](const FrameworkEntry& e) { return e.fsdp_mixed_precision.value; }));
  // FP8 parameters (Megatron-Core --fp8-param-gather, torchao's FSDP2 float8 all-gather, issue 15;
  // framework.hpp fp8_param_gather), as Megatron-LM megatron/training/arguments.py validate_args and
  // torchao's Float8LinearConfig assert them. One refusal, the first
  // that applies: each names what would be valid with the rest of the plan as it is.
  if (plan.fp8_param_gather) {
    if (plan.precision != Precision::fp8)
      add("plan.fp8_param_gather", std::string("true on a ") + to_string(plan.precision) + " plan (no FP8 weights)",
          "false, or plan.precision fp8");
    else if (framework.fp8_param_gather.value == Fp8ParamGather::none)
      add("plan.fp8_param_gather", "true, but there are no FP8 parameters" + in,
          "false" + or_frameworks([](const FrameworkEntry& e) {
            return e.fp8_param_gather.value != Fp8ParamGather::none;
          }));
    else if (framework.fp8_param_gather.value == Fp8ParamGather::fully_sharded) {
      // torchao's FSDP2 float8 all-gather (config.py): a fully sharded weight, tensorwise scales.
      if (plan.zero_stage != 3)
        add("plan.fp8_param_gather",
            "true with zero_stage " + str(plan.zero_stage) + ", but " + framework.name +
                " all-gathers FP8 weights only under fully_shard (FSDP2's all-gather of each unit)",
            "false, or zero_stage 3");
      else if (plan.fp8_recipe != Fp8Recipe::tensorwise)
        add("plan.fp8_param_gather",
            std::string("true with fp8_recipe ") + to_string(plan.fp8_recipe) +
                " (torchao: 'enable_fsdp_float8_all_gather only supports tensorwise scaling granularity')",
            "false, or plan.fp8_recipe tensorwise");
      // torchtitan float8.py: on only when FSDP shards over data-parallel ranks (dp_shard_enabled).
      else if (dp == 1)
        add("plan.fp8_param_gather",
            "true with data-parallel size 1: FSDP shards nothing to gather (torchtitan turns the FP8 all-gather "
            "on only when dp_shard > 1)",
            "false, or more devices (data-parallel size = devices / (TP x PP x CP) > 1)");
    } else if (!plan.use_distributed_optimizer)
      add("plan.fp8_param_gather",
          "true without the distributed optimizer (Megatron-Core: '--fp8-param-gather only supported with "
          "distributed optimizer, torch fsdp2, megatron fsdp'; trainsim prices the distributed optimizer's gather)",
          "false, or plan.use_distributed_optimizer true");
    else if (plan.zero_stage > 0)
      add("plan.fp8_param_gather",
          "true with zero_stage " + str(plan.zero_stage) + " (Megatron-FSDP's FP8 parameter gather is not priced)",
          "false, or zero_stage 0 with the distributed optimizer");
    else if (plan.offload_optimizer && plan.fp8_recipe != Fp8Recipe::delayed)
      add("plan.fp8_param_gather",
          std::string("true with offload_optimizer cpu and fp8_recipe ") + to_string(plan.fp8_recipe) +
              " (Megatron-Core: 'the optimizer cpu offload must be used in conjunction with --fp8-recipe delayed')",
          "false, or plan.fp8_recipe delayed, or plan.offload_optimizer none");
  }

  // Recompute.
  if (plan.recompute_granularity == RecomputeGranularity::full && pp > 0 && layers % pp == 0 &&
      plan.recompute_num_layers > layers / pp)
    add("plan.recompute_num_layers",
        str(plan.recompute_num_layers) + " exceeds the layers per pipeline stage (" + str(layers / pp) + ")",
        "0.." + str(layers / pp));
  if (plan.recompute_granularity != RecomputeGranularity::full && plan.recompute_num_layers > 0)
    add("plan.recompute_num_layers", "set but recompute_granularity is not full", "0, or recompute_granularity: full");

  // Rank order: a permutation of the five parallel dimensions.
  {
    std::string order = plan.rank_order;
    bool ok = order.size() == 14;
    for (const char* dim : {"tp", "cp", "ep", "dp", "pp"}) {
      const auto at = order.find(dim);
      if (at == std::string::npos) {
        ok = false;
        break;
      }
      order.replace(at, 2, "..");
    }
    if (!ok)
      add("plan.rank_order", "'" + plan.rank_order + "' is not an order of tp, cp, ep, dp, pp", "e.g. tp-cp-ep-dp-pp");
  }
  return out;
}

}  // namespace trainsim
