#include "trainsim/validation/validation.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/model_check.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/named_model.hpp"

namespace trainsim {
namespace {

// Defaults for fields a source leaves null: Megatron-LM's defaults unless the source's era
// or recipe says otherwise. This is the one list; each row names, in `validate`'s output
// (the `*` column, and "defaults" in --json), every default it took, by the name in [ ]:
//  - [tp], [pp]: 1; [vpp]: 1 (no interleaving; named only when PP > 1); [cp]: 1; [ep]: 1
//    (named only for MoE rows); dp = devices / (tp * pp * cp). [tp=N / pp=N / cp=N (devices /
//    the stated sizes)]: a TP or PP null beside a stated DP and the other stated (CP beside both)
//    is what the device count leaves, where a whole number above 1
//  - [micro_batch]: 1, an assumption, not a default: Megatron has none (arguments.py @ f2e5db4
//    declares --micro-batch-size with default=None and validate_args asserts it is set). 1 is
//    the smallest and what the repository's own GPT-3 175B example passes at that commit
//    (examples/gpt3/train_gpt3_175b_distributed.sh); it is never chosen per row, and each row
//    that takes it names it. Where the micro-batch count sets the DP overlap window (Megatron-Core
//    reduces gradients only during the last micro-batch's backward and gathers parameters only
//    during the first one's forward), a row's error under it is the assumption's as much as
//    the model's
//  - [global_batch=N (step time x tokens/s)]: where the row gives both, the sequences a step
//    they imply (within 2% of a multiple of micro_batch x DP); else, without a pipeline,
//    [global_batch=micro_batch x DP (one micro-batch a step)]; with one, an error
//  - [sp]: off (Megatron's default), [sp=on (recipe)] for the recipes below, [sp=on (MindSpeed
//    scripts)] on MindSpeed (all 19 MindSpeed-LLM / ModelLink scripts the calibration rows quote
//    pass --sequence-parallel); named when TP > 1
//  - [zero]: 0, [zero=distributed optimizer (recipe)] for the recipes below. A stated zero 1
//    is Megatron's distributed optimizer, except on DeepSpeed, where zero N is DeepSpeed's
//    ZeRO stage N (BigScience's ZERO_STAGE=1)
//  - [zero=3 (the framework's default)]: FSDP (llm-foundry's Composer included), whose default
//    strategy is FULL_SHARD, and a framework without stage 0 (BMTrain) take that stage
//  - [zero=1 / recompute=selective / recompute=full (the run fit in memory)]: where the row
//    leaves zero or recompute null and the plan so defaulted does not fit, the least saving that
//    fits, in that order (fit_unstated_memory_savings): the run ran, so it fitted
//  - [heads]: hidden / 128 (head dimension 128, Megatron's GPT configs), [heads=kv_heads] where
//    stated KV heads do not divide that; [kv_heads]: heads (MHA)
//  - [ffn]: 4 * hidden
//  - [heads=, kv_heads=, ffn=, vocab= (models/<file>)]: where the row's model name names a shipped
//    model file (its stem, or its stem and a parameter count: named_model.hpp) of the row's
//    hidden size, each null one of these is that file's, the published config the run ran
//  - [vocab]: 51200 (Megatron's padded GPT-2 vocabulary), for GPT-style rows only: a
//    LLaMA-style row without a vocabulary is an error (its tokenizer is never GPT-2's);
//    [vocab=V (the parameter count '<name>' states; 51200 gives another)] where the name states a
//    count that 51200 does not round to and exactly one shipped model's vocabulary does
//    (fill_vocab_from_stated_size, named_model.hpp)
//  - MoE: [moe.topk]: 2 (Megatron's --moe-router-topk default), [moe.moe_ffn]: the dense ffn,
//    [moe.shared_experts]: 0
//  - [recompute]: none; [recompute=full (source counts recompute FLOPs)] where the source's
//    FLOP count includes recompute (Narayanan 2021 Eq. 3, 96Bslh^2): those runs used full
//    recomputation
//  - [layers_per_stage (uneven split)]: layers not divisible by PP (no interleaving): as even
//    as possible, the extra layers on stages 1, 2, ... (stage 0 also holds the embedding);
//    not a default where the notes say the first and last stage "hold one fewer transformer
//    layer" (the zero-bubble paper): account_for_embedding/loss_in_pipeline_split
//  - [vpp]: the zero-bubble paper's 1F1B-I gives none: one layer per chunk (its reference
//    code's --num-layers-per-virtual-pipeline-stage 1; derive_virtual_stages)
//  - [model dims (NeMo GPTConfig)]: NeMo GPT3 5B / 20B rows without dimensions, and
//    [vocab=50257 (NeMo GPT-2 BPE)] for NeMo GPT3 rows without a vocabulary (see below)
//  - [framework=...]: from the source's own words (group, notes, source; never the row id),
//    first match: MindSpeed / ModelLink -> mindspeed; MindFormers / MindSpore -> mindformers;
//    BMTrain's own rows of its README table (notes 'Framework: OpenBMB BMTrain') -> bmtrain;
//    DeepSpeed in 2021 (the text says 2021, or a ZeRO-3 row of a Megatron-LM source dated 2021 or
//    earlier: Megatron-LM had no ZeRO-3) -> deepspeed-2021 (its ZeRO-3 fetch path changed in 0.5.5
//    and 0.6.0, 2021-11 and 2022-01); BigScience (its own Megatron-DeepSpeed fork, 2022) ->
//    bigscience-megatron-deepspeed; DeepSpeed / Megatron-DeepSpeed -> deepspeed; NeMo's performance
//    summary (source NVIDIA/NeMo) -> nemo; llm-foundry -> llm-foundry (Composer on FSDP1); FSDP /
//    torchtitan -> fsdp; a source naming Megatron but not Megatron-Core, dated 2022 or earlier
//    (source_year: its earliest arXiv identifier, else a year written on its own) -> megatron-lm;
//    else megatron-core
//  - [attention_kernel=...]: from the notes' "Attention kernel: flash-attn <major>" (the
//    llm-foundry rows name the flash-attn release their table installed): 1 -> flash1,
//    2 -> flash2, priced at that kernel's measured efficiency. Where the device has no
//    measurement of the named kernel (FlashAttention-1 on H100), the next generation the
//    device has one for (flash2): FA2 is faster than FA1 wherever both are measured
//    (A100, microbenchmarks.md 2a), so that row is priced at most as fast as its kernel ran.
//    No such phrase: auto (the hardware file's attention_efficiency)
//  - per_node: null means the hardware file's devices_per_node; [per_node=N (<file>'s server cut
//    to it, NICs in proportion)]: a divisor of the file's (4-GPU boards beside the 8-GPU HGX),
//    each device keeping its NVLink bandwidth and NIC share, no in-switch reduction; more devices
//    than the file's server, or a non-divisor, is an error (another machine)
// Not defaults but rules read from the source (not named per row):
//  - flash attention: off for runs whose source dates them 2022 or earlier (source_year: the
//    2021-2022 Megatron papers, BigScience's and BMTrain's 2022 records) and for the
//    zero-bubble paper's runs, whose memory says they kept the attention scores
//    (kept_attention_scores); on otherwise. Where the notes quote the row's launch script
//    ("Script flags (<path> @ <commit>): --flag value ...;": the ModelLink / MindSpeed-LLM 910B rows,
//    SimuMax's B200 launchers, the SC21 paper's run_table_1.sh),
//    on exactly when the quoted flags include --use-flash-attn: Megatron's --use-flash-attn is
//    off unless passed (arguments.py store_true), and without it the run takes CoreAttention's
//    eager path (ModelLink @ 390f0f0 modellink/model/transformer.py core_attention_forward)
//  - dropout: Megatron's 0.1 attention and hidden dropout for the zero-bubble paper's runs
//    (its fork's arguments.py defaults, which its launcher zeroes only for exact-numerics
//    tests), Korthikanti et al. 2022's (source arXiv 2205.05198: their activation count holds the
//    dropout masks, their selective recompute the softmax dropout) and BigScience's tr11 runs
//    (source bigscience-workshop: its README says Megatron's dropout defaults are inherited); where the notes
//    quote the script, its --attention-dropout and --hidden-dropout, Megatron's 0.1 each where
//    it passes neither (the SC21 paper's run_table_1.sh); none elsewhere
//  - torch.compile: on where the source or notes say "torch.compile" and the framework has the
//    option (torchtitan's tables); off otherwise
//  - cp_comm_type: a2a where the notes say "cp comm type a2a"; on a framework that runs PyTorch's
//    context_parallel (fsdp), its rotate method, torchtitan's default allgather (all_gather)
//    unless the notes say "rotate method alltoall" (p2p); Megatron's p2p otherwise
//  - precision: fp8 / fp16 when the notes say so, else bf16; an fp8 row's recipe tensorwise
//    where the notes say "dynamic tensorwise scaling" (torchao), Transformer Engine's delayed otherwise; where the notes quote the
//    script's flags, its --fp16 or --bf16
//  - quoted script flags and the plan: a quoted --tensor-model-parallel-size,
//    --pipeline-model-parallel-size, --micro-batch-size, --global-batch-size or
//    --sequence-parallel that disagrees with the row's plan is an error (one of them is wrong);
//    so is a quoted --context-parallel-size, --expert-model-parallel-size,
//    --num-layers-per-virtual-pipeline-stage (vpp = layers / (pp x it)), recomputation
//    (--recompute-granularity / -method / -num-layers), model size (--num-layers, --hidden-size,
//    --num-attention-heads, --seq-length, --ffn-hidden-size on a dense row, --num-query-groups
//    under --group-query-attention, --num-experts, --moe-router-topk, --moe-ffn-hidden-size) or a
//    stated zero 1 without --use-distributed-optimizer (or 0 with it)
//  - where the notes quote the script: the distributed optimizer, --overlap-grad-reduce and
//    --overlap-param-gather on exactly when passed (Megatron-Core core_r0.8.0 arguments.py:
//    store_true, default False; the MindSpeed-LLM rows' Megatron), the gradient all-reduce also
//    overlapped under Megatron-LM 2021's --DDP-impl torch (PyTorch DDP) and after the backward
//    under its default local, Megatron-LM 2021's --checkpoint-activations as full recompute of
//    every layer, --reuse-fp32-param and MC2
//    (--use-mc2) likewise; without a quote, overlapped (Megatron-Core recipes pass both) and read
//    from the notes' words
//  - Megatron-Core README runs (mcore-*): the README states "--overlap-grad-reduce
//    --overlap-param-gather" (so the distributed optimizer), "--tp-comm-overlap" (so
//    sequence parallelism) for these runs
//  - NeMo performance-recipe runs (nemo*): the recipes' defaults, distributed optimizer
//    on, sequence parallelism and TP communication overlap on when TP > 1
// MLP: a feed-forward width of exactly 4h is a GPT-style GeLU MLP with learned
// positions, biases, LayerNorm and tied embeddings (untied for the zero-bubble paper,
// whose reference code unties them); any other width is a LLaMA-style
// SwiGLU MLP with rotary positions, RMSNorm and untied embeddings.

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

bool contains(const std::string& haystack, const std::string& needle) {
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

// What validate prices, for the error that names an accelerator it has no file for.
constexpr const char* kFiledAccelerators =
    "an SXM A100 (40 or 80 GB), A800 80 GB, H100 (80 GB, or 96 GB HBM2e), H800, H200, HGX B200, Ascend 910B "
    "(B1-B4) or 32 GB V100 run";

// The device memory an accelerator's name states ("A100 SXM 40GB", "64GB class"): a number before
// "GB" or "GiB" written in capitals, so "1600 Gbps" of network is not read as memory.
std::optional<double> stated_memory_gb(const std::string& accelerator) {
  for (std::size_t at = accelerator.find("GB"); at != std::string::npos; at = accelerator.find("GB", at + 1)) {
    std::size_t end = at;
    while (end > 0 && accelerator[end - 1] == ' ') --end;
    std::size_t begin = end;
    while (begin > 0 && (std::isdigit(static_cast<unsigned char>(accelerator[begin - 1])) || accelerator[begin - 1] == '.'))
      --begin;
    if (begin == end || (begin > 0 && std::isalpha(static_cast<unsigned char>(accelerator[begin - 1])))) continue;
    const double value = std::atof(accelerator.substr(begin, end - begin).c_str());
    if (value >= 1 && value <= 4096) return value;
  }
  return std::nullopt;
}

// The pipeline schedule a row's `schedule` field names, read as sources write it: case, spaces
// and underscores free ("1F1B", "1f1b", "PipeDream-Flush", "Interleaved 1F1B", "VPP", "ZB-H1",
// "zb_v", "DualPipeV"). nullopt: a schedule trainsim does not replay.
enum class NamedSchedule {
  unstated,           // 1F1B, or interleaved where the row gives a chunk count
  one_f_one_b,
  interleaved,        // Megatron's interleaving: the row's vpp (or derived) chunks
  zero_bubble_paper_interleaved,  // "1F1B-I", the zero-bubble paper's baseline: one layer a chunk
  gpipe,
  zero_bubble_h1,     // ZB-H1 and ZB-1p (the searched schedule under 1F1B's memory, replayed as ZB-H1)
  zero_bubble_2p,
  zero_bubble_h2,
  zero_bubble_v,
  dualpipe,
  dualpipev,
  vocab_parallel  // vocab-1, vocab-2, interlaced: 1F1B with plan.vocab_parallel so (vocab_parallel_from_name)
};

// A schedule field as named_schedule reads it: lower case, spaces and underscores as dashes.
std::string schedule_word(const std::string& field) {
  std::string s = lower(field);
  for (char& c : s)
    if (c == ' ' || c == '_') c = '-';
  return s;
}

std::optional<NamedSchedule> named_schedule(const std::string& field) {
  const std::string s = schedule_word(field);
  auto has = [&](const char* word) { return s.find(word) != std::string::npos; };
  if (s.empty()) return NamedSchedule::unstated;
  if (has("dualpipev") || has("dualpipe-v")) return NamedSchedule::dualpipev;
  if (has("dualpipe")) return NamedSchedule::dualpipe;
  if (has("zb-1p") || has("zb-h1") || has("zbh1")) return NamedSchedule::zero_bubble_h1;
  if (has("zb-2p")) return NamedSchedule::zero_bubble_2p;
  if (has("zb-h2") || has("zbh2")) return NamedSchedule::zero_bubble_h2;
  if (has("zb-v") || has("zbv")) return NamedSchedule::zero_bubble_v;
  if (has("gpipe")) return NamedSchedule::gpipe;
  if (const auto mode = vocab_parallel_from_name(s); mode && *mode != VocabParallel::none)
    return NamedSchedule::vocab_parallel;
  if (s == "1f1b-i") return NamedSchedule::zero_bubble_paper_interleaved;
  if (has("non-interleav") || has("noninterleav")) return NamedSchedule::one_f_one_b;
  if (has("interleav") || has("vpp") || has("virtual")) return NamedSchedule::interleaved;
  if (has("1f1b") || has("pipedream-flush") || has("one-forward-one-backward")) return NamedSchedule::one_f_one_b;
  return std::nullopt;
}

bool is_zero_bubble(NamedSchedule schedule) {
  return schedule == NamedSchedule::zero_bubble_h1 || schedule == NamedSchedule::zero_bubble_2p ||
         schedule == NamedSchedule::zero_bubble_h2 || schedule == NamedSchedule::zero_bubble_v;
}

// The framework a row ran on when its source does not fill plan.framework (the rule in the
// list above).
// NeMo's published performance summary (NVIDIA/NeMo docs/source/performance): its recipes' runs.
bool nemo_performance_summary(const MeasuredRun& run) { return contains(run.source, "NVIDIA/NeMo"); }

// Megatron-LM before Megatron-Core (2023): a row whose source names Megatron but not Megatron-Core
// or NeMo, and dates itself 2022 or earlier (the papers of Narayanan et al. 2021, arXiv 2104.04473,
// and Korthikanti et al. 2022, arXiv 2205.05198, and the README tables quoting them).
bool megatron_lm_era(const MeasuredRun& run) {
  if (!contains(run.source + " " + run.notes, "megatron") || contains(run.source, "megatron-core") ||
      contains(run.source, "mcore") || contains(run.source, "nemo"))
    return false;
  const int year = source_year(run.source);
  return year != 0 && year <= 2022;
}

Framework infer_framework(const MeasuredRun& run) {
  const std::string text = run.group + " " + run.notes + " " + run.source;
  auto says = [&](const char* word) { return contains(text, word); };
  if (says("mindspeed") || says("modellink")) return Framework::mindspeed;
  if (says("mindformers") || says("mindspore")) return Framework::mindformers;
  // BMTrain's README table: its own rows say "Framework: OpenBMB BMTrain"; its DeepSpeed rows,
  // "Framework: DeepSpeed + Megatron", fall to deepspeed below.
  if (says("framework: openbmb bmtrain")) return Framework::bmtrain;
  // Megatron-LM had no ZeRO-3 before Megatron-Core: a ZeRO-3 row of that era ran DeepSpeed (the
  // baseline Narayanan et al. 2021 compare against), before 0.6.0 (2022-01) where the source dates
  // itself 2021 or earlier.
  const bool era_zero3 = megatron_lm_era(run) && run.zero && *run.zero == 3 && source_year(run.source) <= 2021;
  if (era_zero3 || (says("deepspeed") && says("2021"))) return Framework::deepspeed_2021;
  if (says("bigscience") || says("bigsci-")) return Framework::bigscience_megatron_deepspeed;
  if (says("deepspeed")) return Framework::deepspeed;
  if (nemo_performance_summary(run)) return Framework::nemo;
  if (says("llm-foundry")) return Framework::llm_foundry;
  if (says("fsdp") || says("torchtitan")) return Framework::fsdp;
  if (megatron_lm_era(run)) return Framework::megatron_lm;
  return Framework::megatron_core;
}

// The flags the notes quote from the row's launch script ("Script flags (examples/bloom/
// pretrain_bloom_ptd_7B.sh @ 390f0f0): --tensor-model-parallel-size 8 ... --bf16;"), lower-
// cased and padded with a space each side; nullopt where the notes quote none. The list ends at
// the first ';' after the "):".
std::optional<std::string> quoted_script_flags(const MeasuredRun& run) {
  const std::string notes = lower(run.notes);
  const std::size_t at = notes.find("script flags (");
  if (at == std::string::npos) return std::nullopt;
  const std::size_t colon = notes.find("):", at);
  if (colon == std::string::npos) return std::nullopt;
  const std::size_t end = notes.find(';', colon);
  const std::size_t begin = colon + 2;
  return " " + notes.substr(begin, end == std::string::npos ? std::string::npos : end - begin) + " ";
}

bool script_sets(const std::string& flags, const std::string& flag) {
  return flags.find(" " + flag + " ") != std::string::npos;
}

// The characters after a quoted flag up to the next space ("--micro-batch-size 4" -> "4");
// nullopt when the flag is not quoted, has no value, or a value longer than any size or rate
// (13 characters: stoll would throw).
std::optional<std::string> script_token(const std::string& flags, const std::string& flag) {
  const std::size_t at = flags.find(" " + flag + " ");
  if (at == std::string::npos) return std::nullopt;
  const std::size_t begin = at + flag.size() + 2;
  const std::size_t end = std::min(flags.find(' ', begin), flags.size());
  if (end == begin || end - begin > 12) return std::nullopt;
  return flags.substr(begin, end - begin);
}

// The integer after a quoted flag ("--micro-batch-size 4" -> 4); nullopt when not quoted.
std::optional<long long> script_value(const std::string& flags, const std::string& flag) {
  const std::optional<std::string> token = script_token(flags, flag);
  if (!token) return std::nullopt;
  std::size_t digits = 0;
  while (digits < token->size() && std::isdigit(static_cast<unsigned char>((*token)[digits]))) ++digits;
  if (digits == 0) return std::nullopt;
  return std::stoll(token->substr(0, digits));
}

// The decimal after a quoted flag ("--attention-dropout 0.0" -> 0); nullopt when not quoted or
// not a plain non-negative decimal.
std::optional<double> script_number(const std::string& flags, const std::string& flag) {
  const std::optional<std::string> token = script_token(flags, flag);
  if (!token || token->find_first_not_of("0123456789.") != std::string::npos) return std::nullopt;
  char* parsed_end = nullptr;
  const double value = std::strtod(token->c_str(), &parsed_end);
  if (parsed_end != token->c_str() + token->size()) return std::nullopt;
  return value;
}

bool counts_recompute_in_flops(const MeasuredRun& run) {
  return contains(run.notes, "count activation recomputation") || contains(run.notes, "counts recompute");
}

// Ascend MC2 (MindSpeed --use-mc2): the TP all-gather and reduce-scatter of sequence
// parallelism run fused with their matmuls, tile by tile, so they overlap the compute as
// Megatron's --tp-comm-overlap does. The sources record it in the run's notes.
// Where the notes quote the launch script, exactly when it passes --use-mc2.
bool fuses_tp_comm_with_matmul(const MeasuredRun& run, AcceleratorFamily family) {
  // torchtitan's async TP (its tables' "AsyncTP"), where the notes say it was on: the fsdp entry's
  // tp_comm_overlap, priced as the fsdp entry's tp_overlap says (decomposed_matmuls:
  // graph/tp_overlap.hpp).
  if (contains(run.notes, "AsyncTP on")) return true;
  if (family != AcceleratorFamily::ascend_910b) return false;
  if (const std::optional<std::string> script = quoted_script_flags(run)) return script_sets(*script, "--use-mc2");
  return contains(run.notes, "mc2");
}

// Megatron-Core README and NeMo recipe runs: see the defaults above.
bool megatron_core_recipe(const MeasuredRun& run) {
  return contains(run.source, "Megatron-Core") || nemo_performance_summary(run);
}

// Megatron-Core r0.8.0's README tables (NVIDIA/Megatron-LM @ f2e5db4, "Training Speed and
// Scalability": the mcore-h100-weak-* and mcore-h100-strong-* rows) say they overlap
// "pipeline-parallel communication (enabled by default)", and megatron/training/arguments.py at
// that commit (lines 254-277) turns overlap_p2p_comm off unless
// --num-layers-per-virtual-pipeline-stage is given: their PP rows ran the interleaved schedule.
bool interleaved_by_pipeline_overlap(const MeasuredRun& run) {
  return contains(run.source, "Megatron-Core") && contains(run.source, "Training Speed and Scalability");
}

// The zero-bubble paper's runs (Qi et al., on their Megatron-LM fork, sail-sg/zero-bubble-
// pipeline-parallelism): the fork's settings follow from it (untied embeddings, dropout, the
// kept attention scores below).
bool from_zero_bubble_fork(const MeasuredRun& run) {
  return contains(run.source, "zero-bubble-pipeline-parallelism");
}

// The zero-bubble fork's runs kept the s x s attention scores: its 1.5B 1F1B row's 30 GB at micro-batch 6 x 1024 tokens is Korthikanti et al.'s
// activation count with the 5as/h attention-score term (1.24 GB a layer x 3 layers x 7 in
// flight on stage 1, + 18 bytes per parameter of its 1/8 of 1.5B: ~29.5 GB), and about 13 GB
// without it (flash attention); its profiled T_F (18.5 ms for 3 layers) is 1.5x trainsim's
// flash-attention forward and within 17% of its eager one. Read from the source, not the era.
bool kept_attention_scores(const MeasuredRun& run) { return from_zero_bubble_fork(run); }

// Runs whose source says they kept Megatron's 0.1 attention and hidden dropout without quoting a
// script: the zero-bubble fork's (its arguments.py at f68d3879 defaults them to 0.1;
// examples/pretrain_zero_bubble.sh zeroes them only for ENABLE_EXACTLY_NUMERIC_MATCH),
// Korthikanti et al. 2022's (their activation count, Section 4.1, holds the softmax-dropout and
// dropout masks, and selective recomputation recomputes the softmax dropout) and BigScience's
// tr11 runs ("The default Megatron-LM dropout settings are inherited: --attention-dropout 0.1
// --hidden-dropout 0.1", bigscience-workshop/bigscience train/tr11-176B-ml/README.md @ 9e64ede;
// the experiments' train/tr11-200B-ml/tr11-200B-ml.slurm @ 217dc6c, 8aff319 passes neither).
bool kept_megatron_dropout(const MeasuredRun& run) {
  return from_zero_bubble_fork(run) || contains(run.source, "2205.05198") ||
         contains(run.source, "bigscience-workshop");
}

// FlashAttention appeared in 2022-05 (arXiv 2205.14135) and reached Megatron-LM in 2023
// (--use-flash-attn): a run its source dates 2022 or earlier ran without it.
bool predates_flash_attention(const MeasuredRun& run) {
  const int year = source_year(run.source);
  return year != 0 && year <= 2022;
}


// The flash-attn major version the notes name ("Attention kernel: flash-attn 1.0.9 ..."), as a
// plan kernel; device_default when they name none.
AttentionKernel noted_attention_kernel(const MeasuredRun& run) {
  const std::string notes = lower(run.notes);
  const std::string phrase = "attention kernel: flash-attn ";
  const std::size_t at = notes.find(phrase);
  if (at == std::string::npos || at + phrase.size() >= notes.size()) return AttentionKernel::device_default;
  switch (notes[at + phrase.size()]) {
    case '1': return AttentionKernel::flash1;
    case '2': return AttentionKernel::flash2;
    case '3': return AttentionKernel::flash3;
    default: return AttentionKernel::device_default;
  }
}

// The kernel the notes name, or the next later FlashAttention generation the device has a
// measurement of (see the header comment); device_default when none is measured.
AttentionKernel priced_attention_kernel(AttentionKernel noted, const DeviceSpec& device) {
  const AttentionKernel generations[] = {AttentionKernel::flash1, AttentionKernel::flash2, AttentionKernel::flash3};
  bool reached = false;
  for (AttentionKernel k : generations) {
    reached = reached || k == noted;
    if (reached && attention_kernel_efficiency(device, k) > 0) return k;
  }
  return AttentionKernel::device_default;
}

Diagnostic problem(const MeasuredRun& run, const std::string& field, const std::string& what,
                   const std::string& valid = "") {
  return Diagnostic{{}, run.id + "." + field, what, valid};
}

RecomputeGranularity parse_recompute(const std::string& text) {
  // As sources write it: "full (block method, 1 layer)", "selective", "none"; any other wording of
  // recomputation ("activation checkpointing", "checkpoint-activations", "uniform") is full, the
  // only kind frameworks had before selective; "no", "false", "off" or "0" is none.
  const std::string t = lower(text);
  if (t.find("selective") != std::string::npos) return RecomputeGranularity::selective;
  if (t.empty() || t.rfind("none", 0) == 0 || t == "no" || t == "false" || t == "off" || t == "0")
    return RecomputeGranularity::none;
  return RecomputeGranularity::full;
}

// "full (block method, 1 layer per stage)" -> 1; 0 (all layers) when no count is given. A count
// past int saturates (the plan check then names it as more layers than a stage has; stoi would
// throw: a fuzzer finding).
int recompute_layers_of(const std::string& text) {
  const auto at = text.find(" layer");
  if (at == std::string::npos) return 0;
  std::size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1]))) --begin;
  long long count = 0;
  for (std::size_t i = begin; i < at; ++i) {
    count = count * 10 + (text[i] - '0');
    if (count > std::numeric_limits<int>::max()) return std::numeric_limits<int>::max();
  }
  return static_cast<int>(count);
}

// The model, the other parallel sizes and the recomputation a quoted script sets, against the
// row's fields (one run: a disagreement is a wrong row). Each flag is checked only where quoted.
// --ffn-hidden-size is not checked on a MoE row: with every layer MoE (MindSpeed-LLM's Qwen3
// scripts, --moe-layer-freq -1) the script's dense width builds nothing.
void check_quoted_script(const MeasuredRun& run, const std::string& flags, std::vector<Diagnostic>& problems) {
  auto disagree = [&](const std::string& field, const std::string& what) {
    problems.push_back(problem(run, field, "the quoted script " + what,
                               "the script's value in the row, or the script's flags as it sets them"));
  };
  const bool moe = run.moe_experts.has_value();
  const std::optional<long long> kv_heads = script_sets(flags, "--group-query-attention")
                                                ? script_value(flags, "--num-query-groups")
                                                : script_value(flags, "--num-attention-heads");
  const std::pair<const char*, std::optional<long long>> model[] = {
      {"--num-layers", run.layers},          {"--hidden-size", run.hidden},
      {"--num-attention-heads", run.heads},  {"--seq-length", run.seq_len},
      {"--ffn-hidden-size", moe ? std::nullopt : run.ffn},
      {"--num-experts", run.moe_experts},    {"--moe-router-topk", run.moe_topk},
      {"--moe-ffn-hidden-size", run.moe_ffn}};
  for (const auto& [flag, field] : model) {
    const std::optional<long long> quoted = script_value(flags, flag);
    if (quoted && field && *quoted != *field)
      disagree("model", std::string("sets ") + flag + " " + std::to_string(*quoted) + ", the row " + std::to_string(*field));
  }
  if (kv_heads && run.kv_heads && *kv_heads != *run.kv_heads)
    disagree("model.kv_heads", "builds " + std::to_string(*kv_heads) + " key/value heads (--group-query-attention " +
                                   "--num-query-groups, else one per head), the row " + std::to_string(*run.kv_heads));
  const std::pair<const char*, std::optional<int>> sizes[] = {{"--context-parallel-size", run.cp},
                                                              {"--expert-model-parallel-size", run.ep}};
  for (const auto& [flag, field] : sizes) {
    const std::optional<long long> quoted = script_value(flags, flag);
    if (quoted && *quoted != field.value_or(1))
      disagree("plan", std::string("sets ") + flag + " " + std::to_string(*quoted) + ", the plan " +
                           std::to_string(field.value_or(1)));
  }
  // Megatron's interleaving by layers per virtual stage: vpp = layers / (pp x that).
  if (const std::optional<long long> per_chunk = script_value(flags, "--num-layers-per-virtual-pipeline-stage");
      per_chunk && *per_chunk > 0 && run.layers) {
    const long long vpp = *run.layers / (run.pp.value_or(1) * *per_chunk);
    if (vpp != run.vpp.value_or(1))
      disagree("plan.vpp", "sets --num-layers-per-virtual-pipeline-stage " + std::to_string(*per_chunk) + " (vpp " +
                               std::to_string(vpp) + "), the plan " + std::to_string(run.vpp.value_or(1)));
  }
  // Recomputation: Megatron's --recompute-granularity / -method / -num-layers.
  const RecomputeGranularity planned = run.recompute ? parse_recompute(*run.recompute) : RecomputeGranularity::none;
  // Full recomputation by the block method of 0 layers recomputes nothing (Megatron-Core
  // TransformerBlock._checkpointed_forward, block method: a layer is checkpointed only while its
  // index is below recompute_num_layers): the SimuMax launchers pass exactly that.
  const bool zero_block_layers = script_sets(flags, "--recompute-method block") &&
                                 script_value(flags, "--recompute-num-layers").value_or(-1) == 0;
  // Megatron-LM 2021's --checkpoint-activations is full recomputation of every layer (megatron/
  // arguments.py @ 6985e58938: activations_checkpoint_method 'uniform', num layers 1).
  const bool full = (script_sets(flags, "--recompute-granularity full") && !zero_block_layers) ||
                    script_sets(flags, "--checkpoint-activations");
  const RecomputeGranularity scripted =
      full ? RecomputeGranularity::full
      : script_sets(flags, "--recompute-granularity selective")               ? RecomputeGranularity::selective
                                                                                 : RecomputeGranularity::none;
  if (planned != scripted) {
    disagree("plan.recompute", std::string("recomputes ") + (scripted == RecomputeGranularity::full        ? "full"
                                                             : scripted == RecomputeGranularity::selective ? "selective"
                                                                                                           : "nothing") +
                                   ", the plan " + (run.recompute ? *run.recompute : std::string("null")));
  } else if (scripted == RecomputeGranularity::full) {
    const std::optional<long long> layers = script_value(flags, "--recompute-num-layers");
    const bool block = script_sets(flags, "--recompute-method block");
    if ((layers && *layers != recompute_layers_of(*run.recompute)) || block != contains(*run.recompute, "block"))
      disagree("plan.recompute", "recomputes by the " + std::string(block ? "block" : "uniform") + " method, " +
                                     (layers ? std::to_string(*layers) : std::string("all")) + " layer(s); the plan '" +
                                     *run.recompute + "'");
  }
}

// Narayanan et al. 2021 Eq. 3: FLOPs per step with full recomputation.
double narayanan_eq3_flops(const Scenario& s) {
  const double B = s.plan.global_batch_size, seq = s.plan.seq_length, l = s.model.num_layers,
               h = static_cast<double>(s.model.hidden_size), V = static_cast<double>(s.model.vocab_size);
  return 96.0 * B * seq * l * h * h * (1.0 + seq / (6.0 * h) + V / (16.0 * l * h));
}

// DeepSeek-V2 and -V3 config.json: the same multi-head latent attention (q_lora_rank 1536,
// kv_lora_rank 512, qk_nope / qk_rope / v head dims 128 / 64 / 128); `shared` shared experts of
// moe_intermediate_size (n_shared_experts) and `dense_layers` leading dense layers
// (first_k_dense_replace): V2 2 and 1, V3 1 and 3.
void apply_deepseek_architecture(ModelSpec& m, int shared, int dense_layers) {
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.moe) {
    m.moe->num_shared_experts = shared;
    m.moe->shared_intermediate_size = m.moe->expert_intermediate_size;
    m.moe->first_dense_layers = dense_layers;
  }
}

// Architecture details the calibration schema has no field for, from the models'
// published Hugging Face configs (by model name, whatever the row).
void apply_published_architecture(ModelSpec& m) {
  if (starts_with(m.name, "DeepSeek-V2")) {
    apply_deepseek_architecture(m, 2, 1);
  } else if (starts_with(m.name, "DeepSeek-V3")) {
    apply_deepseek_architecture(m, 1, 3);
  } else if (starts_with(m.name, "Qwen3")) {
    m.head_dim = 128;  // Qwen/Qwen3-30B-A3B config.json: head_dim 128 (not hidden / heads = 64)
  }
}

// Model dimensions a source leaves out but names by a published configuration: NeMo's GPT3
// 5B and 20B (nemo/collections/llm/gpt/model/base.py GPTConfig5B / GPTConfig20B, the same in
// the NeMo launcher's conf/training/gpt3/{5b,20b}.yaml), whose tokenizer is GPT-2 BPE (50257
// entries; Megatron pads it). Names what it filled in `defaults`.
void fill_published_dimensions(MeasuredRun& run, std::vector<std::string>& defaults) {
  if (!nemo_performance_summary(run) || run.model_name.rfind("GPT3-", 0) != 0) return;
  if (!run.layers && !run.hidden) {
    if (run.model_name == "GPT3-5B") {
      run.layers = 24, run.hidden = 4096, run.heads = 32, run.ffn = 16384;
    } else if (run.model_name == "GPT3-20B") {
      run.layers = 44, run.hidden = 6144, run.heads = 48, run.ffn = 24576;
    }
    if (run.layers) {
      run.kv_heads = run.heads;
      defaults.emplace_back("model dims (NeMo GPTConfig)");
    }
  }
  if (!run.vocab) {
    run.vocab = 50257;
    defaults.emplace_back("vocab=50257 (NeMo GPT-2 BPE)");
  }
}

// MindSpeed-LLM divides by 354 TFLOPS for any device named 910B (its flops_base.py).
constexpr double kMindSpeedPeakFlops = 354e12;

}  // namespace

const std::vector<UnsupportedEntry>& unsupported_runs() {
  using M = UnsupportedEntry::Match;
  static const std::vector<UnsupportedEntry> entries = {
      {M::group, "narayanan21-fused-ops-175B",
       "the device count, plan and batch (the source gives none); operator fusion is not a plan setting"},
  };
  return entries;
}

const UnsupportedEntry* unsupported_entry(const MeasuredRun& run) {
  for (const auto& entry : unsupported_runs()) {
    const std::string& field = entry.match == UnsupportedEntry::Match::schedule ? run.schedule
                               : entry.match == UnsupportedEntry::Match::group  ? run.group
                                                                                : run.id;
    if (field == entry.name) return &entry;
  }
  return nullptr;
}

const char* to_string(AcceleratorFamily family) {
  switch (family) {
    case AcceleratorFamily::a100: return "A100";
    case AcceleratorFamily::h100: return "H100";
    case AcceleratorFamily::b200: return "B200";
    case AcceleratorFamily::ascend_910b: return "910B";
    case AcceleratorFamily::v100: return "V100";
    case AcceleratorFamily::unknown: return "other";
  }
  return "other";
}

// A form factor no shipped file describes, though its name holds a filed part's: the PCIe cards
// (lower power and clocks: the H100 PCIe's 756 dense BF16 TFLOPS against the SXM's 989, NVIDIA's
// H100 datasheet; NVLink only between bridged pairs, no NVSwitch), the H100 NVL (94 GB, paired by
// bridges) and the Grace-Blackwell GB200 (its B200 at 1200 W, 72 to an NVLink domain). Priced on the
// SXM files they would be silently wrong; refused, they name what is missing.
bool unfiled_form_factor(const std::string& accelerator) {
  if (contains(accelerator, "PCIe") || contains(accelerator, "GB200") || contains(accelerator, "GB300")) return true;
  const std::string text = lower(accelerator);
  for (std::size_t at = text.find("nvl"); at != std::string::npos; at = text.find("nvl", at + 1))
    if (text.compare(at, 6, "nvlink") != 0) return true;  // "H100 NVL", "NVL72"; "NVLink" is a link
  return false;
}

AcceleratorFamily family_of(const std::string& accelerator) {
  if (unfiled_form_factor(accelerator)) return AcceleratorFamily::unknown;
  if (contains(accelerator, "A100")) return AcceleratorFamily::a100;
  if (contains(accelerator, "H100")) return AcceleratorFamily::h100;
  // The parts sold as another's silicon (named_submodel_file gives each its file): the A800 is the
  // A100 80 GB with slower NVLink (a800-80gb.yaml; no 40 GB A800 file), the H800 the H100 with slower
  // NVLink, the H200 the H100 with more and faster memory. A GH200 (a Grace Hopper superchip, four to
  // a node) and an H20 (a smaller Hopper) have no file.
  if (contains(accelerator, "A800") && !contains(accelerator, "40GB") && !contains(accelerator, "40 GB"))
    return AcceleratorFamily::a100;
  if (contains(accelerator, "H800")) return AcceleratorFamily::h100;
  if (contains(accelerator, "H200") && !contains(accelerator, "GH200")) return AcceleratorFamily::h100;
  if (contains(accelerator, "B200")) return AcceleratorFamily::b200;
  if (contains(accelerator, "910B")) return AcceleratorFamily::ascend_910b;
  // Huawei's A2 servers and clusters (Atlas 800T A2, Atlas 900 A2 PoD) hold the 910B.
  if (contains(accelerator, "Atlas") && contains(accelerator, " A2")) return AcceleratorFamily::ascend_910b;
  if (contains(accelerator, "V100")) return AcceleratorFamily::v100;
  return AcceleratorFamily::unknown;
}

Scenario scenario_for_run(const MeasuredRun& measured, const ValidationOptions& options,
                          std::vector<std::string>* defaults_used) {
  std::vector<std::string> defaults;
  MeasuredRun run = measured;
  fill_published_dimensions(run, defaults);
  const std::string models_dir =
      options.models_dir.empty() ? options.hardware_dir + "/../models" : options.models_dir;
  fill_named_model_fields(run, models_dir, defaults);
  fill_vocab_from_stated_size(run, models_dir, defaults);
  // The row's quoted launch-script flags, if its notes quote them (quoted_script_flags).
  const std::optional<std::string> script = quoted_script_flags(run);
  std::vector<Diagnostic> problems;
  auto use_default = [&](const std::string& field) { defaults.push_back(field); };

  const AcceleratorFamily family = family_of(run.accelerator);
  if (family == AcceleratorFamily::unknown) {
    throw ConfigError(problem(run, "hardware.accelerator", "no hardware file for '" + run.accelerator + "'",
                              kFiledAccelerators));
  }
  Scenario s;
  s.name = run.id;
  // The file the hardware comes from, as messages name it (a fit's hardware_for reads the
  // user's file, not the run's own: "v100-32gb.yaml has 80 GiB" named the wrong one).
  const std::string hardware_file = options.hardware_for && !options.hardware_for_file.empty()
                                        ? options.hardware_for_file
                                        : hardware_file_for_run(run);
  s.hardware = options.hardware_for ? options.hardware_for(family)
                                    : load_hardware(options.hardware_dir + "/" + hardware_file);
  // A memory size the row states that the file's device does not have (a 16 GB V100 priced on the
  // 32 GB file) would give wrong out-of-memory verdicts.
  if (const std::optional<double> stated = stated_memory_gb(run.accelerator)) {
    const double gib = s.hardware.device.hbm_bytes / 1073741824.0, gb = s.hardware.device.hbm_bytes / 1e9;
    const auto near = [&](double have) { return std::abs(have - *stated) <= 0.06 * *stated; };
    if (!near(gib) && !near(gb)) {
      std::ostringstream what;
      what << "'" << run.accelerator << "' states " << *stated << " GB of device memory, but " << hardware_file
           << " has " << std::lround(gib) << " GiB";
      throw ConfigError(problem(run, "hardware.accelerator", what.str(), kFiledAccelerators));
    }
  }
  // The loader reads a null count as 0: say so, rather than let the plan checks divide by it.
  if (run.count < 1) throw ConfigError(problem(run, "hardware.count", "required; the source leaves it null"));
  s.num_devices = run.count;
  // The hardware file's variability defaults, as the scenario loader gives them to a scenario
  // that writes none (apply_hardware_variability): a measured run is replayed as `run` would.
  for (const HardwareVariabilityKey& k : kHardwareVariabilityKeys)
    s.variability.*k.scenario = s.hardware.variability.*k.hardware;
  if (run.per_node && *run.per_node != s.hardware.node.devices_per_node) {
    // A server with fewer of the same devices (the 4-GPU boards of Perlmutter, Leonardo or JUWELS
    // Booster beside the 8-GPU HGX): the file's server cut to per_node devices, each keeping its
    // NVLink bandwidth and its share of the NICs; no NVSwitch on such a board, so no in-switch
    // reduction. More devices than the file's server is another machine: refused.
    const int full = s.hardware.node.devices_per_node;
    if (*run.per_node >= 1 && *run.per_node < full && full % *run.per_node == 0) {
      s.hardware.cluster.nics_per_node = std::max(1, s.hardware.cluster.nics_per_node * *run.per_node / full);
      s.hardware.node.devices_per_node = *run.per_node;
      s.hardware.node.in_switch_reduction = false;
      defaults.push_back("per_node=" + std::to_string(*run.per_node) + " (" + hardware_file +
                         "'s server cut to it, NICs in proportion)");
    } else {
      problems.push_back(problem(run, "hardware.per_node",
                                 std::to_string(*run.per_node) + " devices per server, but " + hardware_file +
                                     " has " + std::to_string(full),
                                 "the hardware file's devices_per_node or a divisor of it"));
    }
  }

  // Model.
  if (!run.layers || !run.hidden || !run.seq_len) {
    throw ConfigError(problem(run, "model", "layers, hidden and seq_len are required; the source leaves one null"));
  }
  ModelSpec& m = s.model;
  m.name = run.model_name;
  m.source = run.source;
  m.num_layers = static_cast<int>(*run.layers);
  m.hidden_size = *run.hidden;
  if (run.heads) {
    m.num_attention_heads = static_cast<int>(*run.heads);
  } else {
    m.num_attention_heads = static_cast<int>(std::max<long long>(1, m.hidden_size / 128));
    // A stated KV head count the default does not divide: as many query heads as KV heads (MHA).
    if (run.kv_heads && *run.kv_heads > 0 && m.num_attention_heads % *run.kv_heads != 0) {
      m.num_attention_heads = static_cast<int>(*run.kv_heads);
      use_default("heads=kv_heads");
    } else {
      use_default("heads");
    }
  }
  m.num_key_value_heads = run.kv_heads ? static_cast<int>(*run.kv_heads) : m.num_attention_heads;
  if (!run.kv_heads) use_default("kv_heads");
  m.head_dim = m.hidden_size / m.num_attention_heads;
  if (run.ffn) {
    m.intermediate_size = *run.ffn;
  } else {
    m.intermediate_size = 4 * m.hidden_size;
    use_default("ffn");
  }
  const bool gpt_style = m.intermediate_size == 4 * m.hidden_size;
  if (run.vocab) {
    m.vocab_size = *run.vocab;
  } else if (gpt_style) {
    m.vocab_size = kMegatronGpt2Vocab;
    use_default("vocab");
  } else {
    problems.push_back(problem(run, "model.vocab",
                               "required for a LLaMA-style (SwiGLU) row: 51200 is Megatron's padded GPT-2 vocabulary",
                               "the vocab_size of the model's published config"));
    m.vocab_size = 1;
  }
  m.max_position_embeddings = *run.seq_len;
  m.gated_mlp = !gpt_style;
  m.hidden_act = gpt_style ? "gelu" : "silu";
  // model.position_embedding where the row's launch script names it (--position-embedding-type);
  // else what the row's shape implies: GPT-style rows learned positions, LLaMA-style rotary.
  if (run.position_embedding) {
    m.position_embedding = parse_position_embedding(*run.position_embedding).value_or(PositionEmbedding::rope);
  } else {
    m.position_embedding = gpt_style ? PositionEmbedding::learned : PositionEmbedding::rope;
  }
  // The zero-bubble reference code's launcher unties them (--untie-embeddings-and-output-weights,
  // examples/pretrain_zero_bubble.sh @ 39f2c186): no embedding all-reduce between its first and
  // last stage, which would otherwise tie their step ends together again. So does any quoted
  // Megatron script passing that flag.
  const bool untied_by_script = script && script_sets(*script, "--untie-embeddings-and-output-weights");
  m.tie_word_embeddings = gpt_style && !from_zero_bubble_fork(run) && !untied_by_script;
  m.use_bias = gpt_style;
  m.norm = gpt_style ? "layernorm" : "rmsnorm";
  // Megatron's dropout where the source says the run kept it: the attention-probability
  // dropout's mask and output are Korthikanti's 3as^2b of the 5as^2b the kept scores hold, and
  // its kernel reads and writes the score matrix once more in each pass. A quoted Megatron
  // launch script decides by its --attention-dropout and --hidden-dropout, else Megatron's
  // defaults, 0.1 each (megatron/arguments.py @ 6985e58938, the SC21 runs' commit;
  // megatron/core/transformer/transformer_config.py today).
  if (script) {
    m.attention_dropout = script_number(*script, "--attention-dropout").value_or(0.1);
    m.hidden_dropout = script_number(*script, "--hidden-dropout").value_or(0.1);
  } else if (kept_megatron_dropout(run)) {
    m.attention_dropout = 0.1;
    m.hidden_dropout = 0.1;
  }
  if (run.moe_experts) {
    MoeSpec moe;
    moe.num_experts = static_cast<int>(*run.moe_experts);
    moe.experts_per_token = static_cast<int>(run.moe_topk.value_or(2));
    if (!run.moe_topk) use_default("moe.topk");
    moe.expert_intermediate_size = run.moe_ffn.value_or(m.intermediate_size);
    if (!run.moe_ffn) use_default("moe.moe_ffn");
    moe.num_shared_experts = static_cast<int>(run.moe_shared_experts.value_or(0));
    if (!run.moe_shared_experts) use_default("moe.shared_experts");
    m.moe = moe;
  }

  apply_published_architecture(m);
  // What the row says its launch ran wins over the published configuration.
  if (m.moe && run.moe_shared_experts) m.moe->num_shared_experts = static_cast<int>(*run.moe_shared_experts);
  if (m.moe && run.moe_first_dense_layers) m.moe->first_dense_layers = static_cast<int>(*run.moe_first_dense_layers);
  // The plan counts tokens in an int: a longer sequence is refused, not wrapped negative.
  if (*run.seq_len > std::numeric_limits<int>::max()) {
    problems.push_back(problem(run, "model.seq_len", std::to_string(*run.seq_len) + " tokens is more than trainsim counts",
                               "1 to " + std::to_string(std::numeric_limits<int>::max())));
    throw ConfigError(std::move(problems));
  }
  // The model file's cross-key checks (a row's heads larger than its width gave a head of
  // width 0 and a silent number; its top-k beyond int an internal error), named by the row's
  // own fields. Thrown here: the plan's checks below divide by these dimensions.
  for (auto& shape : check_model_shape(m, false)) {
    const std::string field = shape.key == "num_attention_heads"   ? "model.heads"
                              : shape.key == "num_key_value_heads" ? "model.kv_heads"
                              : shape.key == "num_experts_per_tok" ? "model.moe.topk"
                              : shape.key == "first_k_dense_replace" ? "model.moe.first_dense_layers"
                                                                     : "model";
    problems.push_back(problem(run, field, shape.problem, shape.valid));
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));

  // Plan.
  ParallelPlan& p = s.plan;
  auto take = [&](const std::optional<int>& value, int fallback, const char* field) {
    if (value) return *value;
    use_default(field);
    return fallback;
  };
  // TP or PP null beside a stated DP and the other stated: the devices pin it (devices / (dp x the
  // other x CP), CP 1 where null too), where that is a whole number; CP likewise beside both. Else 1.
  auto pinned = [&](const std::optional<int>& a, const std::optional<int>& b) -> std::optional<int> {
    if (!run.dp || *run.dp < 1 || !a || *a < 1 || b.value_or(1) < 1 || run.count < 1) return std::nullopt;
    const long long others = static_cast<long long>(*run.dp) * *a * b.value_or(1);
    if (run.count % others != 0 || run.count / others < 2) return std::nullopt;
    return static_cast<int>(run.count / others);
  };
  auto take_size = [&](const std::optional<int>& value, const std::optional<int>& found, const char* field) {
    if (value) return *value;
    if (found) {
      use_default(std::string(field) + "=" + std::to_string(*found) + " (devices / the stated sizes)");
      return *found;
    }
    use_default(field);
    return 1;
  };
  p.tensor_model_parallel_size = take_size(run.tp, pinned(run.pp, run.cp), "tp");
  p.pipeline_model_parallel_size = take_size(run.pp, pinned(run.tp, run.cp), "pp");
  p.context_parallel_size =
      take_size(run.cp, run.tp && run.pp ? pinned(run.tp, run.pp) : std::optional<int>{}, "cp");
  p.expert_model_parallel_size = run.ep.value_or(1);
  if (!run.ep && m.moe) use_default("ep");
  p.virtual_pipeline_model_parallel_size = run.vpp.value_or(1);
  p.schedule = p.virtual_pipeline_model_parallel_size > 1 ? PipelineSchedule::interleaved
                                                           : PipelineSchedule::one_f_one_b;
  if (!run.vpp && p.pipeline_model_parallel_size > 1 && interleaved_by_pipeline_overlap(run)) {
    // The README overlaps pipeline communication, which Megatron runs only on the interleaved
    // path; the chunk count it leaves null takes trainsim's default for interleaving without
    // one (derive_virtual_stages: one layer per chunk), as NeMo 24.07's own recipes nearly do
    // (LLAMA2-70B PP4 VP20: one layer a chunk; GPT3-175B PP8 VP6: two; calibration.yaml).
    p.schedule = PipelineSchedule::interleaved;
    p.virtual_pipeline_model_parallel_size = 0;
    use_default("vpp=one layer per chunk (interleaved: the README's PP overlap)");
  } else if (!run.vpp && p.pipeline_model_parallel_size > 1) {
    use_default("vpp");
  }
  const NamedSchedule named = named_schedule(run.schedule).value_or(NamedSchedule::unstated);
  if (named == NamedSchedule::zero_bubble_h1) {
    // ZB-1p (Qi et al. 2024) is the searched zero-bubble schedule under 1F1B's memory
    // limit; trainsim replays its handcrafted equivalent ZB-H1.
    p.schedule = PipelineSchedule::zero_bubble_h1;
  } else if (named == NamedSchedule::zero_bubble_2p) {
    // ZB-2p is the reference's heuristic schedule under twice 1F1B's memory limit
    // (schedule/zb_auto.hpp), which keeps the stages near the limit. ZB-2p* (Table 6 of the
    // ZB-V version) is ZB-2p with half the micro-batch and twice the micro-batches, which the
    // row's own plan already says.
    p.schedule = PipelineSchedule::zero_bubble_2p;
  } else if (named == NamedSchedule::zero_bubble_h2) {
    p.schedule = PipelineSchedule::zero_bubble_h2;
  } else if (named == NamedSchedule::zero_bubble_v) {
    // Two chunks per device in a V: the rows' vpp 2 is that V (the schedule's own chunk
    // count), not Megatron's interleaving.
    p.schedule = PipelineSchedule::zero_bubble_v;
    p.virtual_pipeline_model_parallel_size = 1;
  } else if (named == NamedSchedule::dualpipe || named == NamedSchedule::dualpipev) {
    // DeepSeek's schedules: DualPipe's two directions (each device holds two stages) and
    // DualPipeV's V; like ZB-V they carry their own chunks, not Megatron's interleaving.
    p.schedule = named == NamedSchedule::dualpipe ? PipelineSchedule::dualpipe : PipelineSchedule::dualpipev;
    p.virtual_pipeline_model_parallel_size = 1;
  } else if (named == NamedSchedule::gpipe) {
    p.schedule = PipelineSchedule::gpipe;
  } else if (named == NamedSchedule::vocab_parallel) {
    // The vocabulary-parallelism paper's names (its artifact's show_result_full_exp.py): 1F1B
    // with the vocabulary layers split over the stages, Algorithm 1 or 2, or the interlaced pipeline.
    p.schedule = PipelineSchedule::one_f_one_b;
    p.vocab_parallel = *vocab_parallel_from_name(schedule_word(run.schedule));
  } else if (named == NamedSchedule::interleaved && !run.vpp && p.pipeline_model_parallel_size > 1) {
    // Megatron's interleaving needs its chunk count; replaying 1F1B instead would be a silent
    // wrong number.
    problems.push_back(problem(run, "plan.vpp",
                               "required for schedule '" + run.schedule + "'; the source leaves the chunk count null"));
  } else if (named == NamedSchedule::zero_bubble_paper_interleaved) {
    // The zero-bubble paper's interleaved 1F1B baseline: its virtual stage count is not given;
    // the reference code runs it with one layer per chunk (--num-layers-per-virtual-pipeline-
    // stage 1), the default rule of derive_virtual_stages (trainsim/schedule/layer_split.hpp).
    p.schedule = PipelineSchedule::interleaved;
    if (!run.vpp) p.virtual_pipeline_model_parallel_size = 0;
  }
  // "1F1B" with a chunk count stays interleaved (set from vpp above): Megatron's interleaved
  // schedule is its 1F1B over virtual stages, and tables often name it by the plain word.
  // The zero-bubble schedules of Qi et al. ran with optimizer post-validation (Section 4): the
  // reference code turns --enable-optimizer-post-validation on for every zero-bubble schedule
  // unless fp32 or SYNC_OPTIMIZER (examples/pretrain_zero_bubble.sh @ 39f2c186).
  p.optimizer_post_validation = is_zero_bubble(named);
  const bool recipe = megatron_core_recipe(run);
  // MindSpeed-LLM's and ModelLink's launch scripts pass --sequence-parallel (all 19 quoted in
  // tests/validation/calibration.yaml, TP 1 to 8): a MindSpeed row that leaves sp null ran it.
  const Framework framework =
      run.framework ? parse_framework(*run.framework).value_or(Framework::megatron_core) : infer_framework(run);
  const bool mindspeed_scripts = framework == Framework::mindspeed;
  p.sequence_parallel = run.sp.value_or(recipe || mindspeed_scripts) && p.tensor_model_parallel_size > 1;
  if (!run.sp && p.tensor_model_parallel_size > 1)
    use_default(recipe ? "sp=on (recipe)" : mindspeed_scripts ? "sp=on (MindSpeed scripts)" : "sp");
  p.tp_comm_overlap = (recipe || fuses_tp_comm_with_matmul(run, family)) && p.sequence_parallel;
  p.micro_batch_size = take(run.micro_batch, 1, "micro_batch");
  p.global_batch_size = run.global_batch.value_or(1);
  if (!run.global_batch) {
    // The rows' own measurements pin it where they give both a step time and a throughput; else a
    // plan without a pipeline takes one micro-batch a step (its batch size is then only the
    // optimizer's amortization); a pipeline's fill and drain depend on it: required.
    const int dp = run.dp.value_or(std::max(1, run.count / std::max(1, p.tensor_model_parallel_size *
                                                                         p.pipeline_model_parallel_size *
                                                                         p.context_parallel_size)));
    const long long unit = static_cast<long long>(p.micro_batch_size) * dp;
    const double sequences = run.step_time_s && run.tokens_per_s_per_device
                                 ? *run.tokens_per_s_per_device * run.count * *run.step_time_s / *run.seq_len
                                 : 0.0;
    // Beyond an int's sequences (a fuzzed or mis-united throughput) nothing is derived.
    const bool countable = std::isfinite(sequences) && sequences > 0 && sequences < 2e9;
    const long long multiple =
        unit > 0 && countable ? std::llround(sequences / static_cast<double>(unit)) * unit : 0;
    if (multiple > 0 && multiple <= std::numeric_limits<int>::max() &&
        std::abs(static_cast<double>(multiple) - sequences) <= 0.02 * sequences) {
      p.global_batch_size = static_cast<int>(multiple);
      use_default("global_batch=" + std::to_string(multiple) + " (step time x tokens/s)");
    } else if (p.pipeline_model_parallel_size == 1 && unit > 0) {
      p.global_batch_size = static_cast<int>(unit);
      use_default("global_batch=micro_batch x DP (one micro-batch a step)");
    } else {
      problems.push_back(problem(run, "plan.global_batch",
                                 "required with a pipeline; the source leaves it null",
                                 "the source's global batch, or a step time beside its tokens/s"));
    }
  }
  p.seq_length = static_cast<int>(*run.seq_len);  // checked against int above
  p.framework = framework;
  if (!run.framework) defaults.push_back(std::string("framework=") + to_string(p.framework));
  // The optimizer's placement where the source states it (plan.offload_optimizer: cpu, e.g.
  // BMTrain's AdamOffloadOptimizer); on the device otherwise. check_plan refuses it on a
  // framework without an optimizer offload.
  p.offload_optimizer = run.offload_optimizer && *run.offload_optimizer == "cpu";
  // MindSpeed --reuse-fp32-param where the row's notes name it (MindSpeed-LLM launchers: "bf16,
  // mcore, reuse-fp32-param, ..."): the fp32 master copy rebuilt from the bf16 parameters and a
  // 16-bit residual (the framework entry's saving). Read after the framework, whose entry says
  // whether it has the feature: on one without it the key stays off (check_plan would refuse it).
  // Where the notes quote the launch script, exactly when it passes --reuse-fp32-param.
  const bool reuse_fp32 = script ? script_sets(*script, "--reuse-fp32-param") : contains(run.notes, "reuse-fp32-param");
  if (reuse_fp32 && framework_entry(p.framework).reuse_fp32_param_saved_bytes.value > 0) p.reuse_fp32_param = true;
  // FSDP's mixed-precision policy as the llm-foundry tables state it (their mixed_precision
  // column, quoted in each row's notes: "FSDP mixed_precision PURE"); default otherwise.
  if (framework_entry(p.framework).fsdp_mixed_precision.value && contains(run.notes, "FSDP mixed_precision PURE"))
    p.fsdp_mixed_precision = FsdpMixedPrecision::pure;
  if (framework_entry(p.framework).fsdp_mixed_precision.value && contains(run.notes, "FSDP mixed_precision FULL"))
    p.fsdp_mixed_precision = FsdpMixedPrecision::full;
  // torch.compile where the row's source or notes say the run compiled the model (torchtitan's
  // benchmark tables: "+ torch.compile"), on a framework that has the option.
  if (framework_entry(p.framework).torch_compile.value &&
      (contains(run.notes, "torch.compile") || contains(run.source, "torch.compile")))
    p.torch_compile = true;
  // The context-parallel communication the run's notes name (SimuMax's B200 launcher: "CP comm
  // type a2a (launcher default CP_COMM_TYPE=a2a)"); Megatron's default, p2p, otherwise.
  if (contains(run.notes, "cp comm type a2a")) p.cp_comm_type = CpCommType::a2a;
  // PyTorch's context_parallel (torchtitan): its rotate method, torchtitan's default 'allgather'
  // (config_manager.py experimental.context_parallel_rotate_method @ 9dec370) unless the notes
  // name 'alltoall'.
  if (runs_torch_context_parallel(p.framework))
    p.cp_comm_type = contains(run.notes, "rotate method alltoall") ? CpCommType::p2p : CpCommType::all_gather;
  if (run.recompute) {
    p.recompute_granularity = parse_recompute(*run.recompute);
    p.recompute_method = contains(*run.recompute, "block") ? RecomputeMethod::block : RecomputeMethod::uniform;
    p.recompute_num_layers = recompute_layers_of(*run.recompute);
  } else if (counts_recompute_in_flops(run)) {
    p.recompute_granularity = RecomputeGranularity::full;
    use_default("recompute=full (source counts recompute FLOPs)");
  } else {
    use_default("recompute");
  }
  // A framework that shards unless told otherwise (FSDP's FULL_SHARD, BMTrain's only stage):
  // FrameworkEntry::default_zero_stage.
  const int framework_zero = framework_entry(p.framework).default_zero_stage.value;
  const int zero = run.zero.value_or(recipe ? 1 : framework_zero);
  if (!run.zero)
    use_default(recipe ? "zero=distributed optimizer (recipe)"
                : framework_zero != 0 ? "zero=" + std::to_string(framework_zero) + " (the framework's default)"
                                      : std::string("zero"));
  // zero 1 in the Megatron-based sources is --use-distributed-optimizer; on DeepSpeed it is
  // DeepSpeed's own ZeRO stage (the "zero_optimization": {"stage": N} of its config).
  const bool deepspeed_zero = runs_on_deepspeed(p.framework);
  p.use_distributed_optimizer = zero == 1 && !deepspeed_zero;
  p.zero_stage = zero >= 2 || deepspeed_zero ? zero : 0;
  p.use_flash_attn = script ? script_sets(*script, "--use-flash-attn")
                            : !predates_flash_attention(run) && !kept_attention_scores(run);
  if (script) {
    // The quoted script and the row's plan describe one run: a disagreement is a wrong row.
    const std::pair<const char*, std::optional<int>> sizes[] = {
        {"--tensor-model-parallel-size", run.tp}, {"--pipeline-model-parallel-size", run.pp},
        {"--micro-batch-size", run.micro_batch}, {"--global-batch-size", run.global_batch}};
    for (const auto& [flag, field] : sizes) {
      const std::optional<long long> quoted = script_value(*script, flag);
      if (quoted && field && *quoted != *field)
        problems.push_back(problem(run, "notes", std::string("the quoted script sets ") + flag + " " +
                                                     std::to_string(*quoted) + ", the plan " + std::to_string(*field),
                                   "the script's value in the plan, or the script's flags as it sets them"));
    }
    // Megatron turns --sequence-parallel off without tensor parallelism (megatron/training/
    // arguments.py: "Disabling sequence parallelism because tensor model parallelism is disabled"):
    // a TP-1 row may say sp false where its script passes the flag.
    const bool scripted_sp = script_sets(*script, "--sequence-parallel");
    const bool disabled_at_tp1 = scripted_sp && run.sp && !*run.sp && run.tp.value_or(1) == 1;
    if (run.sp && *run.sp != scripted_sp && !disabled_at_tp1)
      problems.push_back(problem(run, "plan.sp",
                                 std::string(*run.sp ? "true" : "false") + ", but the quoted script " +
                                     (*run.sp ? "does not pass" : "passes") + " --sequence-parallel",
                                 "the script's --sequence-parallel"));
    check_quoted_script(run, *script, problems);
    // The distributed optimizer, the overlapped DP gradient reduction and parameter gather: on
    // exactly when the script passes them. Megatron-Core core_r0.8.0 (the Megatron MindSpeed-LLM
    // installs at these rows' commits, docs/features/install_guide.md) megatron/training/
    // arguments.py: --use-distributed-optimizer, --overlap-grad-reduce and --overlap-param-gather
    // are store_true, default False; neither MindSpeed nor MindSpeed-LLM sets them.
    p.use_distributed_optimizer = !deepspeed_zero && script_sets(*script, "--use-distributed-optimizer");
    // Megatron-LM 2021's --DDP-impl torch: PyTorch DDP all-reduces bucket by bucket during the
    // last micro-batch's backward (megatron/schedules.py @ 6985e58938: model.no_sync for the
    // others); its default, local, all-reduces after the whole backward (training.py
    // train_step: allreduce_gradients).
    p.overlap_grad_reduce = script_sets(*script, "--overlap-grad-reduce") || script_sets(*script, "--ddp-impl torch");
    p.overlap_param_gather = script_sets(*script, "--overlap-param-gather");
    if (run.zero && !deepspeed_zero && (*run.zero == 1) != p.use_distributed_optimizer)
      problems.push_back(problem(run, "plan.zero",
                                 std::to_string(*run.zero) + ", but the quoted script " +
                                     (p.use_distributed_optimizer ? "passes" : "does not pass") +
                                     " --use-distributed-optimizer",
                                 "1 where the script passes --use-distributed-optimizer, 0 where it does not"));
  }
  // Megatron's --no-gradient-accumulation-fusion (the ModelLink / MindSpeed-LLM launchers pass it):
  // each weight gradient added into the buffer by the DDP hook's own kernel.
  if (script ? script_sets(*script, "--no-gradient-accumulation-fusion")
             : contains(run.notes, "--no-gradient-accumulation-fusion"))
    p.gradient_accumulation_fusion = false;
  // Megatron's --accumulate-allreduce-grads-in-fp32: an fp16 run's gradient buffer in fp32.
  if (script && script_sets(*script, "--accumulate-allreduce-grads-in-fp32")) p.accumulate_allreduce_grads_in_fp32 = true;
  // sail-sg/VocabularyParallelism's --enable-vocab-parallel on 1F1B: Algorithm 2 by default,
  // Algorithm 1 under --disable-backward-fusion (its vocab_parallel_schedule.py), the interlaced
  // pipeline under --use-interlaced-schedule (interlaced_schedule.py).
  if (script && script_sets(*script, "--enable-vocab-parallel") && p.vocab_parallel == VocabParallel::none)
    p.vocab_parallel = script_sets(*script, "--use-interlaced-schedule")   ? VocabParallel::interlaced
                       : script_sets(*script, "--disable-backward-fusion") ? VocabParallel::vocab_1
                                                                          : VocabParallel::vocab_2;
  if (const AttentionKernel noted = noted_attention_kernel(run); p.use_flash_attn && noted != AttentionKernel::device_default) {
    p.attention_kernel = priced_attention_kernel(noted, s.hardware.device);
    std::string what = std::string("attention_kernel=") + to_string(p.attention_kernel);
    if (p.attention_kernel != noted) what += std::string(" (notes name ") + to_string(noted) + ", not measured on this device)";
    defaults.push_back(what);
  }
  // MindSpeed's --cp-attention-mask-type general, as the row's script passes it.
  if (contains(run.notes, "--cp-attention-mask-type general") && p.context_parallel_size > 1) {
    p.cp_attention_mask_type = CpAttentionMask::general;
    defaults.push_back("cp_attention_mask_type=general (the script's)");
  }
  // FP8 where the notes say so, on a device with FP8 units (an A100 row's note about FP8
  // is about something else: it cannot have trained in it).
  if (contains(run.notes, "FP8 training") && s.hardware.device.peak_flops_fp8 > 0) {
    p.precision = Precision::fp8;
    // torchao's Float8 training (torchtitan's rows): dynamic scaling of each whole tensor from its
    // current amax (torchao float8/config.py: ScalingType.DYNAMIC, ScalingGranularity.TENSORWISE),
    // where the notes say so; Transformer Engine's delayed scaling otherwise (the recipe default).
    if (contains(run.notes, "dynamic tensorwise scaling")) {
      p.fp8_recipe = Fp8Recipe::tensorwise;
      defaults.push_back("fp8_recipe=tensorwise (torchao)");
    }
  } else if (script && (script_sets(*script, "--fp16") || script_sets(*script, "--bf16"))) {
    p.precision = script_sets(*script, "--fp16") ? Precision::fp16 : Precision::bf16;
  } else if (contains(run.notes, "fp16")) {
    p.precision = Precision::fp16;
  }
  const std::optional<long long> final_stage_layers =
      script && script_sets(*script, "--enable-layer-redistribution")
          ? script_value(*script, "--final-stage-num-layers")
          : std::nullopt;
  if (final_stage_layers && p.pipeline_model_parallel_size > 1 && *final_stage_layers >= 0 &&
      *final_stage_layers <= m.num_layers && p.virtual_pipeline_model_parallel_size == 1) {
    // The vocabulary-parallelism paper's layer redistribution (sail-sg/VocabularyParallelism @
    // 6191c3bf megatron/core/transformer/transformer_block.py get_num_layers_to_build): the last
    // stage builds --final-stage-num-layers, the others (L - n) / (p - 1) each, the remainder one
    // each on the stages before the last, from the last backwards.
    const int pp_size = p.pipeline_model_parallel_size;
    const int last = static_cast<int>(*final_stage_layers);
    p.layers_per_stage.assign(static_cast<std::size_t>(pp_size), (m.num_layers - last) / (pp_size - 1));
    for (int extra = 0; extra < (m.num_layers - last) % (pp_size - 1); ++extra)
      ++p.layers_per_stage[static_cast<std::size_t>(pp_size - 2 - extra)];
    p.layers_per_stage.back() = last;
  } else if (contains(run.notes, "hold one fewer transformer layer") && p.pipeline_model_parallel_size > 1) {
    // The zero-bubble paper's split (layers = k p - 2): the first and the last virtual stage
    // one layer short, the embedding and the loss in their place: Megatron's account_for_*
    // keys, the reference code's --allow-padding-num-layers.
    p.account_for_embedding_in_pipeline_split = true;
    p.account_for_loss_in_pipeline_split = true;
  } else if (p.virtual_pipeline_model_parallel_size == 1 && p.pipeline_model_parallel_size > 1 &&
             m.num_layers % p.pipeline_model_parallel_size != 0 &&
             framework_entry(p.framework).pipeline_split_edge_layers.value == 0) {
    // An uneven split the source does not spell out: as even as possible, the extra
    // layers on the stages after the first (which also holds the embedding). A framework with
    // its own split (torchtitan's) splits as it does.
    const int pp_size = p.pipeline_model_parallel_size;
    p.layers_per_stage.assign(static_cast<std::size_t>(pp_size), m.num_layers / pp_size);
    for (int extra = 0; extra < m.num_layers % pp_size; ++extra) ++p.layers_per_stage[static_cast<std::size_t>(1 + extra)];
    use_default("layers_per_stage (uneven split)");
  }
  derive_virtual_stages(p, m.num_layers);
  derive_plan(p, s.num_devices);
  // torchao's Float8 FSDP all-gather where the notes name it; torchtitan turns it on only when
  // FSDP shards over data-parallel ranks (float8.py: dp_shard_enabled).
  if (p.precision == Precision::fp8 && contains(run.notes, "Float8 FSDP all-gather") && p.data_parallel_size > 1 &&
      framework_entry(p.framework).fp8_param_gather.value == Fp8ParamGather::fully_sharded) {
    p.fp8_param_gather = true;
    defaults.push_back("fp8_param_gather=true (torchao FSDP float8 all-gather)");
  }
  if (run.dp && *run.dp != p.data_parallel_size) {
    problems.push_back(problem(run, "plan.dp", "dp " + std::to_string(*run.dp) + " disagrees with devices / (tp*pp*cp) = " +
                                                   std::to_string(p.data_parallel_size)));
  }
  for (auto& d : check_plan(s.model, s.hardware, s.num_devices, p)) {
    d.key_path = run.id + "." + d.key_path;
    problems.push_back(std::move(d));
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
  if (defaults_used) *defaults_used = std::move(defaults);
  return s;
}

namespace {

// The schedules trainsim replays, as the validation files name them (named_schedule).
bool replayable_schedule(const std::string& schedule) { return named_schedule(schedule).has_value(); }

constexpr const char* kFitInMemory = " (the run fit in memory)";

// A measured run ran, so it fitted in memory. Where the row leaves ZeRO (the distributed
// optimizer) or recompute null and the plan as defaulted does not fit, the least saving under
// which it fits is taken, in the order launchers reach for them: the sharded optimizer state
// first (it costs no compute), then selective recompute, then full; the setting taken is named
// among the row's defaults. A setting the row's quoted script contradicts is not tried (the
// scenario refuses it), and where none fits the row keeps its out-of-memory verdict.
void fit_unstated_memory_savings(const MeasuredRun& run, const ValidationOptions& options, const SimOptions& sim_options,
                                 Scenario& scenario, SimResult& result, std::vector<std::string>& defaults) {
  enum class Trial { refused, too_big, fits };
  auto priced = [&](const MeasuredRun& trial, const std::string& name) {
    std::vector<std::string> trial_defaults;
    Scenario s;
    try {
      s = scenario_for_run(trial, options, &trial_defaults);
    } catch (const ConfigError&) {
      return Trial::refused;
    }
    SimResult r = simulate(s, sim_options);
    if (!r.memory.fits) return Trial::too_big;
    scenario = std::move(s);
    result = std::move(r);
    defaults = std::move(trial_defaults);
    defaults.push_back(name);
    return Trial::fits;
  };
  MeasuredRun base = run;
  std::string zero_name;
  if (!run.zero) {
    MeasuredRun sharded = run;
    sharded.zero = 1;
    const Trial trial = priced(sharded, std::string("zero=1") + kFitInMemory);
    if (trial == Trial::fits) return;
    if (trial == Trial::too_big) {  // allowed, not enough alone: kept under the recompute tried next
      base = sharded;
      zero_name = ", zero=1";
    }
  }
  if (run.recompute || counts_recompute_in_flops(run)) return;
  for (const char* granularity : {"selective", "full"}) {
    MeasuredRun trial = base;
    trial.recompute = granularity;
    if (priced(trial, std::string("recompute=") + granularity + zero_name + kFitInMemory) == Trial::fits) return;
  }
}

}  // namespace

namespace {

// The median of per-stage values, the mean of the middle two for an even count (numpy's
// median, which the zero-bubble runtime's avg_then_mid takes over its stages).
double median_over_stages(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// One micro-batch's passes as the replay prices them (zb_pass_times), each the median over the
// stages, in ms: what a runtime's profile of the same plan reads.
MeasuredRun::PassTimes priced_pass_times_ms(const Scenario& scenario, const Workload& workload) {
  const CostModel cost(scenario.hardware, scenario.plan, scenario.num_devices);
  const MicrobatchGroups::PassTimes t = zb_pass_times(price_plan(scenario, workload, cost).costs);
  MeasuredRun::PassTimes ms;
  if (t.forward.empty()) return ms;
  ms.forward = median_over_stages(t.forward) * 1e3;
  ms.backward_input = median_over_stages(t.backward_input) * 1e3;
  ms.backward_weight = median_over_stages(t.backward_weight) * 1e3;
  ms.transfer = t.transfer * 1e3;
  return ms;
}

}  // namespace

ValidationRow validate_run(const MeasuredRun& run, const ValidationOptions& options) {
  ValidationRow row;
  row.id = run.id;
  row.group = run.group;
  row.schedule = run.schedule;
  row.family = family_of(run.accelerator);
  row.hardware = hardware_file_for_run(run);
  row.devices = run.count;
  row.memory_of = run.memory_of;
  if (const UnsupportedEntry* entry = unsupported_entry(run)) {
    row.unsupported = entry->needs;
    return row;
  }
  if (!run.problems.empty()) {
    row.failure = "unreadable:";
    for (const Diagnostic& d : run.problems) row.failure += " " + d.str() + ";";
    row.failure.pop_back();
    return row;
  }
  if (!replayable_schedule(run.schedule)) {
    row.failure = "schedule '" + run.schedule + "' is not one trainsim replays, and no entry of unsupported_runs() lists it";
    return row;
  }
  if (run.step_time_s) {
    row.metric = "step_time_s";
    row.measured = *run.step_time_s;
  } else if (run.tokens_per_s_per_device) {
    row.metric = "tokens_per_s_per_device";
    row.measured = *run.tokens_per_s_per_device;
  } else if (run.tflops_per_device) {
    row.metric = "tflops_per_device";
    row.measured = *run.tflops_per_device;
  } else if (run.mfu) {
    row.metric = "mfu";
    row.measured = *run.mfu;
  } else if (run.hfu) {
    // Hardware FLOPs utilization (recompute counted) where a source reports nothing else.
    row.metric = "hfu";
    row.measured = *run.hfu;
  }
  if (row.metric.empty() && !run.memory_gb && !run.memory_gib) {
    row.failure = "no measured metric";
    return row;
  }
  try {
    SimOptions sim_options;
    sim_options.record_timeline = false;
    Scenario scenario = scenario_for_run(run, options, &row.defaults);
    SimResult result = simulate(scenario, sim_options);
    if (!result.memory.fits) fit_unstated_memory_savings(run, options, sim_options, scenario, result, row.defaults);
    row.predicted_fits = result.memory.fits;
    const StepMetrics& metrics = result.metrics;
    const double devices = scenario.num_devices;
    if (row.metric == "step_time_s") {
      row.predicted = metrics.step_time_s;
    } else if (row.metric == "tokens_per_s_per_device") {
      row.predicted = metrics.tokens_per_s_per_device;
    } else if (row.metric == "tflops_per_device") {
      if (counts_recompute_in_flops(run)) {
        row.predicted = narayanan_eq3_flops(scenario) / (metrics.step_time_s * devices) / 1e12;
        row.note = "TFLOPS counted as the source does (Narayanan 2021 Eq. 3, includes recompute)";
      } else {
        row.predicted = metrics.tflops_per_device;
      }
    } else if (row.metric == "hfu") {
      row.predicted = metrics.hfu;
    } else if (row.metric == "mfu") {
      if (row.family == AcceleratorFamily::ascend_910b) {
        row.predicted = metrics.model_flops_per_step / (metrics.step_time_s * devices * kMindSpeedPeakFlops);
        row.note = "MFU against 354 TFLOPS, as MindSpeed-LLM counts it";
      } else {
        row.predicted = metrics.mfu;
      }
    }
    if (!row.metric.empty()) row.error = (row.predicted - row.measured) / row.measured;
    if (run.pass_times_ms) {
      row.pass_times_measured_ms = run.pass_times_ms;
      row.pass_times_predicted_ms = priced_pass_times_ms(scenario, result.workload);
    }
    if (run.memory_gib || run.memory_gb) {
      const double gib = 1024.0 * 1024.0 * 1024.0;
      const auto& worst = result.memory.stages.at(result.memory.worst_stage);
      // A peak allocated figure (torch's max_memory_allocated) excludes the runtime context,
      // the caching allocator's slack and NCCL's buffers: compared without the reserve.
      const double predicted_bytes = run.memory_is_allocated() ? worst.allocated() : worst.peak();
      row.memory_measured_gib = run.memory_gib ? *run.memory_gib : *run.memory_gb * 1e9 / gib;
      row.memory_predicted_gib = predicted_bytes / gib;
      row.memory_error = (*row.memory_predicted_gib - *row.memory_measured_gib) / *row.memory_measured_gib;
    }
  } catch (const ConfigError& e) {
    row.failure = e.what();
    std::replace(row.failure.begin(), row.failure.end(), '\n', ' ');
  }
  row.defaults.insert(row.defaults.begin(), run.readings.begin(), run.readings.end());
  return row;
}

namespace {

bool counted(const ValidationRow& row) { return row.unsupported.empty() && row.failure.empty() && !row.metric.empty(); }

// The family's MAPE with every row that has candidates priced on one sub-model (the others on
// their own file), per candidate; a candidate some row lacks gets no figure.
std::vector<std::pair<std::string, double>> candidate_mapes(const std::vector<ValidationRow>& rows, AcceleratorFamily family) {
  std::vector<std::string> names;
  for (const auto& row : rows) {
    if (row.family != family || !counted(row)) continue;
    for (const auto& c : row.candidates) {
      if (std::find(names.begin(), names.end(), c.submodel) == names.end()) names.push_back(c.submodel);
    }
  }
  std::vector<std::pair<std::string, double>> out;
  for (const auto& name : names) {
    double sum = 0;
    int n = 0;
    bool complete = true;
    for (const auto& row : rows) {
      if (row.family != family || !counted(row)) continue;
      double error = row.error;
      if (!row.candidates.empty()) {
        const auto c = std::find_if(row.candidates.begin(), row.candidates.end(),
                                    [&](const CandidatePrediction& p) { return p.submodel == name; });
        if (c == row.candidates.end()) {
          complete = false;
          break;
        }
        error = (c->predicted - row.measured) / row.measured;
      }
      sum += std::abs(error);
      ++n;
    }
    if (complete && n > 0) out.emplace_back(name, sum / n);
  }
  return out;
}

std::vector<FamilySummary> summarize(const std::vector<ValidationRow>& rows) {
  std::vector<FamilySummary> out;
  for (AcceleratorFamily family : {AcceleratorFamily::a100, AcceleratorFamily::h100, AcceleratorFamily::b200,
                                   AcceleratorFamily::ascend_910b}) {
    FamilySummary f;
    f.family = family;
    double sum = 0, memory_sum = 0;
    for (const auto& row : rows) {
      if (row.family != family) continue;
      if (!row.unsupported.empty()) {
        ++f.unsupported;
        continue;
      }
      if (!row.failure.empty()) {
        ++f.failed;
        continue;
      }
      if (!row.predicted_fits) {
        ++f.predicted_oom;
        f.predicted_oom_ids.push_back(row.id);
      }
      if (!row.metric.empty()) {
        ++f.runs;
        sum += std::abs(row.error);
        if (std::abs(row.error) > f.worst_error || f.worst_id.empty()) {
          f.worst_error = std::abs(row.error);
          f.worst_id = row.id;
        }
      }
      if (row.memory_error) {
        ++f.memory_runs;
        if (!row.memory_of.empty()) continue;  // the same measurement as its memory_of row: counted once
        ++f.memory_measurements;
        memory_sum += std::abs(*row.memory_error);
        if (std::abs(*row.memory_error) > f.memory_worst_error || f.memory_worst_id.empty()) {
          f.memory_worst_error = std::abs(*row.memory_error);
          f.memory_worst_id = row.id;
        }
      }
    }
    if (f.runs + f.failed + f.unsupported == 0) continue;
    f.mape = f.runs ? sum / f.runs : 0;
    f.memory_mape = f.memory_measurements ? memory_sum / f.memory_measurements : 0;
    f.candidate_mape = candidate_mapes(rows, family);
    out.push_back(f);
  }
  return out;
}

std::string format_value(const std::string& metric, double value) {
  char buffer[64];
  if (metric == "mfu" || metric == "hfu") {
    std::snprintf(buffer, sizeof buffer, "%.3f", value);
  } else if (value >= 1000) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
  }
  return buffer;
}

std::string format_rows(const std::vector<ValidationRow>& rows) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-52s %-5s %6s %-24s %10s %10s %8s %9s %9s %8s\n", "run", "hw", "devs", "metric",
                "measured", "predicted", "error", "mem_meas", "mem_pred", "mem_err");
  out += line;
  for (const auto& row : rows) {
    if (!row.unsupported.empty() || !row.failure.empty()) {
      out += row.id;
      out += row.unsupported.empty() ? "  NOT SIMULATED (a gate failure): " + row.failure
                                     : "  unsupported, needs " + row.unsupported;
      out += "\n";
      continue;
    }
    std::string memory = "        -         -        -";
    if (row.memory_error) {
      char m[96];
      std::snprintf(m, sizeof m, "%7.2fGi %7.2fGi %+7.1f%%%s", *row.memory_measured_gib, *row.memory_predicted_gib,
                    100 * *row.memory_error, row.memory_of.empty() ? "" : "=");
      memory = m;
    }
    // Sub-model uncertainty: the metric's range over the candidates, lowest first, each end
    // named by the sub-model that gives it (the row's own prediction is on row.hardware).
    std::string range;
    if (!row.candidates.empty()) {
      const auto [low, high] = std::minmax_element(
          row.candidates.begin(), row.candidates.end(),
          [](const CandidatePrediction& a, const CandidatePrediction& b) { return a.predicted < b.predicted; });
      range = "  range " + low->submodel + ".." + high->submodel + ": " + format_value(row.metric, low->predicted) + ".." +
              format_value(row.metric, high->predicted);
    }
    // The unstated micro-batch size's range: "mbs 1/2/4: a/b/c".
    if (!row.micro_batch_candidates.empty()) {
      std::string sizes, values;
      for (const auto& c : row.micro_batch_candidates) {
        sizes += (sizes.empty() ? "" : "/") + std::to_string(c.micro_batch);
        values += (values.empty() ? "" : "/") + format_value(row.metric, c.predicted);
      }
      range += "  mbs " + sizes + ": " + values;
    }
    std::string marks = range + (row.note.empty() ? "" : " +");
    if (!row.defaults.empty()) {
      marks += " *";
      for (std::size_t i = 0; i < row.defaults.size(); ++i) marks += (i ? "," : " ") + row.defaults[i];
    }
    std::snprintf(line, sizeof line, "%-52s %-5s %6d %-24s %10s %10s %+7.1f%% %s%s\n", row.id.c_str(),
                  to_string(row.family), row.devices, row.metric.c_str(), format_value(row.metric, row.measured).c_str(),
                  format_value(row.metric, row.predicted).c_str(), 100 * row.error, memory.c_str(), marks.c_str());
    out += line;
  }
  return out;
}

// The unsupported rows, by the feature each needs (unsupported_runs() is the one list).
std::string format_unsupported(const std::vector<const ValidationRow*>& rows) {
  std::string out;
  std::vector<std::string> needs;
  for (const auto* row : rows) {
    if (!row->unsupported.empty() && std::find(needs.begin(), needs.end(), row->unsupported) == needs.end()) {
      needs.push_back(row->unsupported);
    }
  }
  if (needs.empty()) return out;
  out += "unsupported rows (not simulated; the list is unsupported_runs() in sim/validation/validation.cpp):\n";
  for (const auto& need : needs) {
    std::string ids;
    int count = 0;
    for (const auto* row : rows) {
      if (row->unsupported != need) continue;
      ids += (count++ ? ", " : "") + row->id;
    }
    out += "  " + std::to_string(count) + " need " + need + ": " + ids + "\n";
  }
  return out;
}

nlohmann::ordered_json row_json(const ValidationRow& row) {
  nlohmann::ordered_json j;
  j["id"] = row.id;
  if (!row.group.empty()) j["group"] = row.group;
  if (!row.schedule.empty()) j["schedule"] = row.schedule;
  j["family"] = to_string(row.family);
  j["hardware"] = row.hardware;
  j["devices"] = row.devices;
  if (!row.unsupported.empty()) {
    j["unsupported"] = row.unsupported;
    return j;
  }
  if (!row.failure.empty()) {
    j["failure"] = row.failure;
    return j;
  }
  j["metric"] = row.metric;
  j["measured"] = row.measured;
  j["predicted"] = row.predicted;
  j["error"] = row.error;
  j["predicted_fits"] = row.predicted_fits;
  if (row.memory_error) {
    j["memory_measured_gib"] = *row.memory_measured_gib;
    j["memory_predicted_gib"] = *row.memory_predicted_gib;
    j["memory_error"] = *row.memory_error;
    if (!row.memory_of.empty()) j["memory_of"] = row.memory_of;
  }
  j["defaults"] = row.defaults;
  if (!row.note.empty()) j["note"] = row.note;
  if (!row.candidates.empty()) {
    nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
    for (const auto& c : row.candidates)
      candidates.push_back({{"submodel", c.submodel}, {"hardware", c.hardware}, {"predicted", c.predicted}});
    j["submodel_candidates"] = candidates;
  }
  if (!row.micro_batch_candidates.empty()) {
    nlohmann::ordered_json sizes = nlohmann::ordered_json::array();
    for (const auto& c : row.micro_batch_candidates)
      sizes.push_back({{"micro_batch", c.micro_batch}, {"predicted", c.predicted}});
    j["micro_batch_candidates"] = sizes;
  }
  return j;
}

}  // namespace

namespace {

// The candidate sub-model files present in the hardware directory, loaded once (a directory
// without them, e.g. a user's copy of the four family files, simply gives no range).
using CandidateHardware = std::vector<std::pair<std::string, HardwareSpec>>;

CandidateHardware load_candidates(const std::string& hardware_dir) {
  CandidateHardware out;
  for (AcceleratorFamily family : {AcceleratorFamily::a100, AcceleratorFamily::h100, AcceleratorFamily::b200,
                                   AcceleratorFamily::ascend_910b}) {
    for (const auto& file : submodel_candidates(family)) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(hardware_dir + "/" + file, ec)) continue;
      out.emplace_back(file, load_hardware(hardware_dir + "/" + file));
    }
  }
  return out;
}

// "ascend-910b2.yaml" -> "910B2".
std::string submodel_label(const std::string& file) {
  std::string name = file.substr(0, file.rfind(".yaml"));
  name = name.substr(name.rfind('-') + 1);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name;
}

// A row whose source names no sub-model, of a family that has them: its metric on each
// candidate present (its own pricing, on the family's file, is one of them). Two or more
// candidates make a range; fewer give none.
void price_candidates(ValidationRow& row, const MeasuredRun& run, const CandidateHardware& hardware,
                      const ValidationOptions& options) {
  if (row.metric.empty() || !row.failure.empty() || !row.unsupported.empty() || !named_submodel_file(run).empty()) return;
  std::vector<CandidatePrediction> out;
  for (const auto& file : submodel_candidates(row.family)) {
    const auto found = std::find_if(hardware.begin(), hardware.end(), [&](const auto& h) { return h.first == file; });
    if (found == hardware.end()) continue;
    double predicted = row.predicted;
    if (file != row.hardware) {
      ValidationOptions on_candidate = options;
      const HardwareSpec spec = found->second;
      on_candidate.hardware_for = [spec](AcceleratorFamily) { return spec; };
      const ValidationRow priced = validate_run(run, on_candidate);
      if (!priced.failure.empty() || priced.metric != row.metric) continue;
      predicted = priced.predicted;
    }
    out.push_back({file, submodel_label(file), predicted});
  }
  if (out.size() >= 2) row.candidates = std::move(out);
}

// The memory saving fit_unstated_memory_savings took for a row ("" none), from its defaults.
std::string memory_saving_taken(const std::vector<std::string>& defaults) {
  for (const std::string& d : defaults)
    if (d.find(kFitInMemory) != std::string::npos) return d;
  return "";
}

// A row whose source states no micro-batch size: its metric at each power of two up to 16 that
// divides a replica's sequences (global batch / DP) and fits in memory. Two or more make a range.
void price_micro_batches(ValidationRow& row, const MeasuredRun& run, const ValidationOptions& options) {
  if (row.metric.empty() || !row.failure.empty() || !row.unsupported.empty() || run.micro_batch) return;
  int per_replica = 0;
  try {
    const ParallelPlan plan = scenario_for_run(run, options).plan;
    if (plan.data_parallel_size < 1 || plan.global_batch_size % plan.data_parallel_size != 0) return;
    per_replica = plan.global_batch_size / plan.data_parallel_size;
  } catch (const ConfigError&) {
    return;
  }
  std::vector<MicroBatchPrediction> out;
  for (int size = 1; size <= std::min(per_replica, 16); size *= 2) {
    if (per_replica % size != 0) continue;
    double predicted = row.predicted;
    if (size != 1) {
      MeasuredRun at = run;
      at.micro_batch = size;
      const ValidationRow priced = validate_run(at, options);
      if (!priced.failure.empty() || priced.metric != row.metric || !priced.predicted_fits) continue;
      // A size that fits only with more memory saving than the row's own (fit_unstated_memory_
      // savings) is another plan, not this row at another micro-batch.
      if (memory_saving_taken(priced.defaults) != memory_saving_taken(row.defaults)) continue;
      predicted = priced.predicted;
    }
    out.push_back({size, predicted});
  }
  if (out.size() >= 2) row.micro_batch_candidates = std::move(out);
}

// The hardware files the runs need load from options.hardware_dir, or the whole validation
// is bad input: a missing directory must not become "MAPE 0.0% over 0 runs".
void check_hardware_dir(const std::vector<MeasuredRun>& runs, const ValidationOptions& options) {
  std::vector<std::string> checked;
  for (const auto& run : runs) {
    const AcceleratorFamily family = family_of(run.accelerator);
    const std::string name = hardware_file_for_run(run);
    if (family == AcceleratorFamily::unknown || unsupported_entry(run) ||
        std::find(checked.begin(), checked.end(), name) != checked.end()) {
      continue;
    }
    checked.push_back(name);
    const std::string file = options.hardware_dir + "/" + name;
    try {
      load_hardware(file);
    } catch (const ConfigError& e) {
      std::string why = e.what();
      std::replace(why.begin(), why.end(), '\n', ' ');
      throw ConfigError(Diagnostic({}, "--hardware-dir",
                                   "'" + options.hardware_dir + "' gives no usable " + name +
                                       " (needed by " + run.id + "): " + why,
                                   "a directory holding a100-80gb.yaml, h100-80gb.yaml, b200.yaml, ascend-910b3.yaml"));
    }
  }
}

}  // namespace

ValidationReport validate_runs(const std::vector<MeasuredRun>& runs, const ValidationOptions& options) {
  check_hardware_dir(runs, options);
  // With hardware_for the caller chooses each family's hardware (a fit varying a key): one
  // pricing per row, no candidates.
  const CandidateHardware candidates = options.hardware_for ? CandidateHardware{} : load_candidates(options.hardware_dir);
  ValidationReport report;
  for (const auto& run : runs) {
    ValidationRow row = validate_run(run, options);
    price_candidates(row, run, candidates, options);
    if (!options.hardware_for) price_micro_batches(row, run, options);
    report.rows.push_back(std::move(row));
  }
  report.families = summarize(report.rows);
  return report;
}

std::string format_validation(const ValidationReport& report) {
  std::string out = format_rows(report.rows);
  out += "(* the null fields filled with the documented defaults, named; + the metric is counted as the source counts\n"
         " it; = the memory figure is another row's measurement (memory_of), compared but not counted again;\n"
         " mbs a/b/c: the metric at each micro-batch size that fits, where the source states none and the row takes 1)\n";
  std::vector<const ValidationRow*> rows;
  for (const auto& row : report.rows) rows.push_back(&row);
  out += format_unsupported(rows);
  char line[512];
  for (const auto& f : report.families) {
    std::string extra;
    if (f.failed) extra += ", " + std::to_string(f.failed) + " NOT SIMULATED";
    if (f.unsupported) extra += ", " + std::to_string(f.unsupported) + " unsupported";
    // Beside the MAPE: runs predicted not to fit in memory, each a wrong verdict (the run ran).
    // With no run compared there is no error to print: a MAPE of 0.0% would read as a perfect fit.
    if (f.runs == 0)
      std::snprintf(line, sizeof line, "%s: no run compared, so no MAPE%s; %d predicted out of memory\n",
                    to_string(f.family), extra.c_str(), f.predicted_oom);
    else
      std::snprintf(line, sizeof line, "%s MAPE: %.1f%% over %d runs (worst: %s %.1f%%)%s; %d predicted out of memory\n",
                    to_string(f.family), 100 * f.mape, f.runs, f.worst_id.c_str(), 100 * f.worst_error, extra.c_str(),
                    f.predicted_oom);
    out += line;
    if (!f.candidate_mape.empty()) {
      std::string each;
      for (const auto& [name, mape] : f.candidate_mape) {
        char part[64];
        std::snprintf(part, sizeof part, "%s%s %.1f%%", each.empty() ? "" : ", ", name.c_str(), 100 * mape);
        each += part;
      }
      out += std::string("  ") + to_string(f.family) +
             " sub-model range (rows naming none, all on one candidate; the MAPE above is on each row's file): " + each +
             "\n";
    }
    if (f.predicted_oom > 0) {
      std::string ids;
      for (const auto& id : f.predicted_oom_ids) ids += (ids.empty() ? "" : ", ") + id;
      out += std::string("  ") + to_string(f.family) + " runs predicted out of memory (they ran: wrong verdicts): " +
             ids + "\n";
    }
  }
  for (const auto& f : report.families) {
    if (f.memory_runs == 0) continue;
    std::snprintf(line, sizeof line,
                  "%s peak memory MAPE: %.1f%% over %d distinct measurements (%d rows compared; worst: %s %.1f%%)\n",
                  to_string(f.family), 100 * f.memory_mape, f.memory_measurements, f.memory_runs,
                  f.memory_worst_id.c_str(), 100 * f.memory_worst_error);
    out += line;
  }
  // The unstated micro-batch size: how many of those rows' measurements its range contains.
  int ranged = 0, inside = 0;
  std::string outside;
  for (const auto& row : report.rows) {
    if (row.micro_batch_candidates.empty()) continue;
    ++ranged;
    const auto [low, high] = std::minmax_element(
        row.micro_batch_candidates.begin(), row.micro_batch_candidates.end(),
        [](const MicroBatchPrediction& a, const MicroBatchPrediction& b) { return a.predicted < b.predicted; });
    if (row.measured >= low->predicted && row.measured <= high->predicted)
      ++inside;
    else
      outside += (outside.empty() ? "" : ", ") + row.id;
  }
  if (ranged > 0) {
    std::snprintf(line, sizeof line, "micro-batch range (rows stating none; the MAPEs above take 1): the measurement inside it for %d of %d rows",
                  inside, ranged);
    out += line;
    out += outside.empty() ? "\n" : " (outside: " + outside + ")\n";
  }
  return out;
}

std::string validation_json(const ValidationReport& report) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["trainsim_version"] = version();
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : report.rows) j["rows"].push_back(row_json(row));
  j["families"] = nlohmann::ordered_json::array();
  // An error over no compared run is not 0: null, as the text report says "no MAPE".
  const auto or_null = [](int compared, double error) {
    return compared > 0 ? nlohmann::ordered_json(error) : nlohmann::ordered_json(nullptr);
  };
  for (const auto& f : report.families) {
    j["families"].push_back({{"family", to_string(f.family)},
                             {"runs", f.runs},
                             {"failed", f.failed},
                             {"unsupported", f.unsupported},
                             {"mape", or_null(f.runs, f.mape)},
                             {"worst_id", f.worst_id},
                             {"worst_error", or_null(f.runs, f.worst_error)},
                             {"memory_runs", f.memory_runs},
                             {"memory_measurements", f.memory_measurements},
                             {"memory_mape", or_null(f.memory_runs, f.memory_mape)},
                             {"memory_worst_id", f.memory_worst_id},
                             {"memory_worst_error", or_null(f.memory_runs, f.memory_worst_error)},
                             {"predicted_oom", f.predicted_oom},
                             {"predicted_oom_ids", f.predicted_oom_ids}});
    if (!f.candidate_mape.empty()) {
      nlohmann::ordered_json each = nlohmann::ordered_json::object();
      for (const auto& [name, mape] : f.candidate_mape) each[name] = mape;
      j["families"].back()["submodel_mape"] = each;
    }
  }
  // Replace invalid UTF-8 (an id or note copied from a mis-encoded source) rather than throw.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

TrendsReport validate_trends(const std::vector<MeasuredRun>& runs, const ValidationOptions& options) {
  check_hardware_dir(runs, options);
  TrendsReport report;
  std::vector<std::string> order;
  std::map<std::string, TrendGroup> groups;
  for (const auto& run : runs) {
    const std::string name = run.group.empty() ? run.id : run.group;
    if (!groups.count(name)) {
      order.push_back(name);
      groups[name].group = name;
    }
    ValidationRow row = validate_run(run, options);
    groups[name].rows.push_back(std::move(row));
  }
  for (const auto& name : order) {
    TrendGroup group = std::move(groups[name]);
    // Compare rows with the group's most common metric.
    const ValidationRow* first = nullptr;
    for (const auto& row : group.rows) {
      if (row.failure.empty() && !row.metric.empty()) {
        first = &row;
        break;
      }
    }
    std::vector<const ValidationRow*> supported;
    for (const auto& row : group.rows) {
      const bool ok = first && row.failure.empty() && row.metric == first->metric;
      group.measured_ratio.push_back(ok ? row.measured / first->measured : 0);
      group.predicted_ratio.push_back(ok ? row.predicted / first->predicted : 0);
      if (ok) supported.push_back(&row);
    }
    group.supported = static_cast<int>(supported.size());
    for (const auto& row : group.rows) {
      group.failed += !row.failure.empty();
      group.unsupported += !row.unsupported.empty();
      if (counted(row) && !row.predicted_fits) report.rows_predicted_oom.push_back(row.id);
    }
    report.rows_failed += group.failed;
    report.rows_unsupported += group.unsupported;
    if (group.supported < 2 && group.failed == 0) ++report.groups_unsupported;
    for (std::size_t i = 0; i < supported.size(); ++i) {
      for (std::size_t k = i + 1; k < supported.size(); ++k) {
        const double dm = supported[k]->measured - supported[i]->measured;
        const double dp = supported[k]->predicted - supported[i]->predicted;
        if (dm * dp < 0 || (dm != 0 && dp == 0)) {
          group.order_matches = false;
          const double gap = std::abs(dm) / std::min(supported[i]->measured, supported[k]->measured);
          if (gap > 0.05) group.significant_order_violation = true;
        }
      }
    }
    if (group.supported >= 2) {
      ++report.groups_compared;
      if (group.order_matches) ++report.groups_in_order;
    }
    report.groups.push_back(std::move(group));
  }
  return report;
}

namespace {

// A group's peak memory per GPU of each schedule relative to its 1F1B row (the first of each
// with a memory figure), measured and predicted: the zero-bubble paper's claims are ratios
// (ZB-H1 and ZB-V about 1F1B's memory, ZB-H2 / ZB-2p about twice its activations). "" when
// the group has no 1F1B row with memory.
std::string format_memory_vs_1f1b(const TrendGroup& group) {
  auto with_memory = [](const ValidationRow& r) {
    return r.failure.empty() && r.unsupported.empty() && r.memory_measured_gib && r.memory_predicted_gib;
  };
  const ValidationRow* base = nullptr;
  for (const auto& row : group.rows)
    if (row.schedule == "1F1B" && with_memory(row)) {
      base = &row;
      break;
    }
  if (!base) return "";
  std::string out = "  peak memory / 1F1B's (measured vs predicted):";
  std::vector<std::string> seen = {"1F1B"};
  char item[160];
  for (const auto& row : group.rows) {
    if (!with_memory(row) || std::find(seen.begin(), seen.end(), row.schedule) != seen.end()) continue;
    seen.push_back(row.schedule);
    const double measured = *row.memory_measured_gib / *base->memory_measured_gib;
    const double predicted = *row.memory_predicted_gib / *base->memory_predicted_gib;
    std::snprintf(item, sizeof item, " %s %.2f vs %.2f (%+.1f%%);", row.schedule.c_str(), measured, predicted,
                  100 * (predicted - measured) / measured);
    out += item;
  }
  if (seen.size() == 1) return "";
  out.back() = '\n';
  return out;
}

// Per source (the group name's first word, e.g. qi24 for the zero-bubble paper's groups): the
// compared rows' mean absolute and mean signed error (bias), the level the ratios above leave out.
std::string format_source_bias(const TrendsReport& report) {
  std::vector<std::string> names;
  std::map<std::string, std::vector<double>> errors;
  for (const auto& group : report.groups) {
    const std::string source = group.group.substr(0, group.group.find('-'));
    for (std::size_t i = 0; i < group.rows.size(); ++i) {
      const ValidationRow& row = group.rows[i];
      if (!row.failure.empty() || !row.unsupported.empty() || group.measured_ratio[i] <= 0) continue;
      if (!errors.count(source)) names.push_back(source);
      errors[source].push_back(row.error);
    }
  }
  std::string out;
  char line[256];
  for (const auto& name : names) {
    const auto& e = errors[name];
    if (e.size() < 2) continue;
    double abs_sum = 0, sum = 0;
    for (double x : e) {
      abs_sum += std::abs(x);
      sum += x;
    }
    std::snprintf(line, sizeof line, "source %s: %zu rows compared, MAPE %.1f%%, bias (mean signed error) %+.1f%%\n",
                  name.c_str(), e.size(), 100 * abs_sum / e.size(), 100 * sum / e.size());
    out += line;
  }
  return out;
}

}  // namespace

namespace {

// "F 11.35 / 10.38 (-8.5%)": a measured pass and its price; "-" where either is unknown.
std::string pass_vs(const char* name, const std::optional<double>& measured, const std::optional<double>& predicted) {
  char text[96];
  if (!measured || !predicted) {
    std::snprintf(text, sizeof text, "  %s -", name);
  } else {
    std::snprintf(text, sizeof text, "  %s %.2f / %.2f (%+.1f%%)", name, *measured, *predicted,
                  100 * (*predicted - *measured) / *measured);
  }
  return text;
}

// The row's pass profile against the priced passes, one line under the row.
std::string format_pass_times(const ValidationRow& row) {
  if (!row.pass_times_measured_ms || !row.pass_times_predicted_ms) return "";
  const auto& m = *row.pass_times_measured_ms;
  const auto& p = *row.pass_times_predicted_ms;
  std::optional<double> measured_sum, predicted_sum;
  if (m.forward && m.backward_input && m.backward_weight) measured_sum = *m.forward + *m.backward_input + *m.backward_weight;
  if (p.forward && p.backward_input && p.backward_weight) predicted_sum = *p.forward + *p.backward_input + *p.backward_weight;
  return "    passes, ms (measured / priced, median over stages):" + pass_vs("F", m.forward, p.forward) +
         pass_vs("B", m.backward_input, p.backward_input) + pass_vs("W", m.backward_weight, p.backward_weight) +
         pass_vs("F+B+W", measured_sum, predicted_sum) + pass_vs("transfer", m.transfer, p.transfer) + "\n";
}

nlohmann::ordered_json pass_times_json(const MeasuredRun::PassTimes& t) {
  auto value = [](const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json j;
  j["forward"] = value(t.forward);
  j["backward_input"] = value(t.backward_input);
  j["backward_weight"] = value(t.backward_weight);
  j["transfer"] = value(t.transfer);
  return j;
}

}  // namespace

std::string format_trends(const TrendsReport& report) {
  std::string out;
  char line[512];
  for (const auto& group : report.groups) {
    std::snprintf(line, sizeof line, "group %s: %s\n", group.group.c_str(),
                  group.failed ? "NOT COMPARED: a row did not simulate (a gate failure)"
                  : group.supported < 2 ? "not compared: fewer than two supported rows, the others listed unsupported"
                  : group.order_matches ? "predicted order matches"
                  : group.significant_order_violation ? "ORDER WRONG (measured gap > 5%)"
                                                      : "order differs only where measured gap <= 5%");
    out += line;
    for (std::size_t i = 0; i < group.rows.size(); ++i) {
      const auto& row = group.rows[i];
      if (!row.unsupported.empty() || !row.failure.empty()) {
        // The reason is appended whole: a fixed buffer cut long reasons and their newline,
        // running the next row into this one.
        std::snprintf(line, sizeof line, "  %-52s %-8s %s", row.id.c_str(), row.schedule.c_str(),
                      row.unsupported.empty() ? "NOT SIMULATED: " : "unsupported, needs ");
        out += line;
        out += (row.unsupported.empty() ? row.failure : row.unsupported) + "\n";
        continue;
      }
      const double ratio_error = group.measured_ratio[i] > 0
                                     ? (group.predicted_ratio[i] - group.measured_ratio[i]) / group.measured_ratio[i]
                                     : 0;
      std::snprintf(line, sizeof line, "  %-52s %-8s %-24s meas %10s pred %10s err %+6.1f%%  ratio %.3f vs %.3f (%+.1f%%)\n",
                    row.id.c_str(), row.schedule.c_str(), row.metric.c_str(),
                    format_value(row.metric, row.measured).c_str(), format_value(row.metric, row.predicted).c_str(),
                    100 * row.error, group.measured_ratio[i], group.predicted_ratio[i], 100 * ratio_error);
      out += line;
      out += format_pass_times(row);
    }
    out += format_memory_vs_1f1b(group);
  }
  std::vector<const ValidationRow*> rows;
  for (const auto& group : report.groups)
    for (const auto& row : group.rows) rows.push_back(&row);
  out += format_unsupported(rows);
  if (!report.rows_predicted_oom.empty()) {
    std::string ids;
    for (const auto& id : report.rows_predicted_oom) ids += (ids.empty() ? "" : ", ") + id;
    out += "rows predicted out of memory (they ran: wrong verdicts): " + ids + "\n";
  }
  out += format_source_bias(report);
  std::snprintf(line, sizeof line,
                "trends: %d of %d groups in the measured order; %d groups not compared (every other row unsupported); "
                "%d rows unsupported, %d NOT SIMULATED\n",
                report.groups_in_order, report.groups_compared, report.groups_unsupported, report.rows_unsupported,
                report.rows_failed);
  out += line;
  return out;
}

std::string trends_json(const TrendsReport& report) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["trainsim_version"] = version();
  j["groups"] = nlohmann::ordered_json::array();
  for (const auto& group : report.groups) {
    nlohmann::ordered_json g;
    g["group"] = group.group;
    g["order_matches"] = group.order_matches;
    g["significant_order_violation"] = group.significant_order_violation;
    g["rows"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < group.rows.size(); ++i) {
      auto r = row_json(group.rows[i]);
      r["measured_ratio"] = group.measured_ratio[i];
      r["predicted_ratio"] = group.predicted_ratio[i];
      if (group.rows[i].pass_times_measured_ms && group.rows[i].pass_times_predicted_ms) {
        r["pass_times_ms"] = {{"measured", pass_times_json(*group.rows[i].pass_times_measured_ms)},
                              {"predicted", pass_times_json(*group.rows[i].pass_times_predicted_ms)}};
      }
      g["rows"].push_back(r);
    }
    j["groups"].push_back(g);
  }
  j["groups_in_order"] = report.groups_in_order;
  j["groups_compared"] = report.groups_compared;
  j["groups_unsupported"] = report.groups_unsupported;
  j["rows_unsupported"] = report.rows_unsupported;
  j["rows_failed"] = report.rows_failed;
  j["rows_predicted_oom"] = report.rows_predicted_oom;
  // Replace invalid UTF-8 (an id or note copied from a mis-encoded source) rather than throw.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string named_submodel_file(const MeasuredRun& run) {
  // The 40 GB A100 (HBM2 at 1.555 TB/s, the 2020 launch part) is the A100 family's other
  // memory sub-model: a100-40gb.yaml, the 80 GB file with its HBM. The A800 (China's A100, NVLink
  // 400 GB/s) is a800-80gb.yaml; the H800 (China's H100, NVLink 400 GB/s) h800.yaml; the H200 (the
  // H100 with 141 GB of HBM3e at 4.8 TB/s) h200.yaml.
  // Jean Zay's A100 servers (BigScience's BLOOM runs) have a DGX A100's GPUs and NVLink but 4 x
  // Omni-Path 100 Gb/s between servers instead of 8 x HDR 200: jean-zay-a100.yaml.
  if (family_of(run.accelerator) == AcceleratorFamily::a100) {
    if (contains(run.accelerator, "A800")) return "a800-80gb.yaml";
    if (contains(run.accelerator, "Jean Zay")) return "jean-zay-a100.yaml";
    return contains(run.accelerator, "40GB") || contains(run.accelerator, "40 GB") ? "a100-40gb.yaml" : "";
  }
  // torchtitan's H100 benchmarks ran on Meta's Grand Teton hosts with 96 GB of HBM2e at 2.4 TB/s and a
  // 500 W limit, not the DGX H100's 80 GB of HBM3 at 3.35 TB/s (h100-96gb-grand-teton.yaml). The
  // part, not the server, decides: Grand Teton also houses the 80 GB HBM3 H100 at 700 W that the
  // Llama 3 405B pre-training ran on (arXiv 2407.21783 sec. 3.3.1), a DGX H100's GPU.
  if (family_of(run.accelerator) == AcceleratorFamily::h100) {
    if (contains(run.accelerator, "H800")) return "h800.yaml";
    if (contains(run.accelerator, "H200") && !contains(run.accelerator, "GH200")) return "h200.yaml";
    const bool hbm2e_part = contains(run.accelerator, "HBM2e") || contains(run.accelerator, "96GB") ||
                            contains(run.accelerator, "96 GB");
    return hbm2e_part ? "h100-96gb-grand-teton.yaml" : "";
  }
  if (family_of(run.accelerator) != AcceleratorFamily::ascend_910b) return "";
  // "910B" followed by a digit: 910B1..910B4 ([CANN-ini] platform configs). A 910B2C has the
  // 910B2's cores and clock (hardware/sources/ascend-910b.md section 1), so it is priced as one.
  // "sub-model B1/B2/B3 not stated" names none: no "910B" precedes its digits.
  const std::string text = lower(run.accelerator);
  for (std::size_t at = text.find("910b"); at != std::string::npos; at = text.find("910b", at + 1)) {
    const char digit = at + 4 < text.size() ? text[at + 4] : '\0';
    if (digit >= '1' && digit <= '4') return std::string("ascend-910b") + digit + ".yaml";
  }
  return "";
}

std::string hardware_file_for_run(const MeasuredRun& run) {
  const std::string named = named_submodel_file(run);
  return named.empty() ? hardware_file_of(family_of(run.accelerator)) : named;
}

const std::vector<std::string>& submodel_candidates(AcceleratorFamily family) {
  // The 64 GiB 910B sub-models: the calibration rows that name none say "64GB class" or "sub-model
  // B1/B2/B3 not stated"; the 910B4 has 32 GiB ([CANN-ini]). Fastest first, as validate prints them.
  static const std::vector<std::string> ascend = {"ascend-910b1.yaml", "ascend-910b2.yaml", "ascend-910b3.yaml"};
  static const std::vector<std::string> none;
  return family == AcceleratorFamily::ascend_910b ? ascend : none;
}

// The shipped hardware file that prices a family's measured runs ("" for unknown).
const char* hardware_file_of(AcceleratorFamily family) {
  switch (family) {
    case AcceleratorFamily::a100: return "a100-80gb.yaml";
    case AcceleratorFamily::h100: return "h100-80gb.yaml";
    case AcceleratorFamily::b200: return "b200.yaml";
    case AcceleratorFamily::ascend_910b: return "ascend-910b3.yaml";
    // DGX-1 class, 32 GB (the BMTrain trend rows; no V100 run is in the calibration set).
    case AcceleratorFamily::v100: return "v100-32gb.yaml";
    case AcceleratorFamily::unknown: return "";
  }
  return "";
}

}  // namespace trainsim
