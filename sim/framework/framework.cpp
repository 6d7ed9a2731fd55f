#include "trainsim/framework/framework.hpp"

#include <algorithm>

#include "trainsim/common/error.hpp"

namespace trainsim {

namespace {

// Versions read (the mirrors of the frameworks' repositories, 2026-08).
constexpr const char* kDeepSpeed = "DeepSpeed 0.19.6";
constexpr const char* kDeepSpeedMirror = "DeepSpeed 0.16.5 (38327e0)";
constexpr const char* kDeepSpeed2021 = "DeepSpeed 0.3.13 (2021-03-16; the same in 0.3.14-0.5.4)";
constexpr const char* kMcore = "Megatron-LM (megatron/core)";
constexpr const char* kTorchtitan = "torchtitan (2026-08-21) on PyTorch FSDP2";
// The model code its 2024-12 benchmark tables ran (benchmarks/llama3_h100_202412_torchtitan.md).
constexpr const char* kTorchtitan9dec370 = "pytorch/torchtitan @ 9dec370 (2024-12-26)";
constexpr const char* kNccl =
    "NCCL src/graph/tuning.cc ncclTopoTuneModel: all-gather and reduce-scatter have ring (and NVLS/CollNet/PAT, "
    "which need NVSwitch multicast, SHARP or one rank per server), no tree";

// DeepSpeed's pipeline engine ran under Megatron-DeepSpeed; the runs trainsim has on it without
// flash attention (BigScience tr11, 2022-02) ran BigScience's fork, read at the commit they ran.
constexpr const char* kDeepSpeedPipe = "microsoft/DeepSpeed @ 38327e07f (0.16.5) deepspeed/";
constexpr const char* kBigScienceFork = "bigscience-workshop/Megatron-DeepSpeed @ ae6277f5 (2022-02-21)";

std::string at(const char* version, const std::string& where) { return std::string(version) + " " + where; }


// The launchers' arguments (launch.hpp). Each name below was checked in the parser's source
// at the commit named beside its table: read statically (Python's ast over the files named,
// add_argument names plus the dataclass fields Megatron's ArgumentGroupFactory turns into
// flags), every name found, on 2026-11-30.
using A = LaunchArgument;

// Megatron-LM: NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553 (2026-08-22).
// megatron/training/arguments.py: --decoder-first-pipeline-num-layers (3095),
// --decoder-last-pipeline-num-layers (3099), --num-virtual-stages-per-pipeline-rank (3116: the
// form arguments.py (955) asserts with the first / last counts, so the one written),
// --overlap-grad-reduce (3121), --overlap-param-gather (3148), --use-distributed-optimizer
// (3156), --data-parallel-sharding-strategy (3190), --seq-length (3305),
// --optimizer-cpu-offload (2918); ArgumentGroupFactory fields: megatron/core/model_parallel_config.py
// tensor_model_parallel_size (55), pipeline_model_parallel_size (83), sequence_parallel (94),
// context_parallel_size (100), expert_model_parallel_size (127), fp16 (177), bf16 (180),
// tp_comm_overlap (265); megatron/core/transformer/transformer_config.py attention_backend (151,
// AttnBackend flash|unfused in megatron/core/transformer/enums.py), recompute_granularity (532),
// recompute_method (543), recompute_num_layers (551), fp8 (587, --fp8-format e4m3|hybrid),
// account_for_embedding_in_pipeline_split (137), account_for_loss_in_pipeline_split (141);
// megatron/training/config/training_config.py micro_batch_size (11), global_batch_size (15);
// megatron/training/config/common_config.py use_megatron_fsdp (92).
constexpr const char* kMegatronLaunchChecked =
    "NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553 (2026-08-22) megatron/training/arguments.py "
    "(and the config dataclasses its ArgumentGroupFactory turns into flags)";
constexpr const char* kNoZeroBubble =
    "no zero-bubble schedule: megatron/training/arguments.py has no such argument and "
    "core/pipeline_parallel/schedules.py runs 1F1B or interleaved 1F1B";
constexpr const char* kNoVocabParallel =
    "no vocabulary parallelism: megatron/training/arguments.py has no --enable-vocab-parallel (sail-sg/"
    "VocabularyParallelism's fork of Megatron-Core adds it, with --disable-backward-fusion for vocab-1 and "
    "--use-interlaced-schedule for interlaced)";
constexpr const char* kNoDualPipe =
    "no DualPipe schedule: megatron/training/arguments.py has no such argument and "
    "core/pipeline_parallel/schedules.py runs 1F1B or interleaved 1F1B";

std::vector<LaunchArgument> megatron_launch_arguments() {
  return {
      A{"plan.tensor_model_parallel_size", "*", "", "--tensor-model-parallel-size {value}", ""},
      A{"plan.pipeline_model_parallel_size", "*", "", "--pipeline-model-parallel-size {value}", ""},
      A{"plan.virtual_pipeline_model_parallel_size", "1", "", "", ""},
      A{"plan.virtual_pipeline_model_parallel_size", "*", "", "--num-virtual-stages-per-pipeline-rank {value}", ""},
      // model_parallel_config.py microbatch_group_size_per_vp_stage (arg_names): absent unless set.
      A{"plan.microbatch_group_size_per_vp_stage", "", "", "", ""},
      A{"plan.microbatch_group_size_per_vp_stage", "*", "", "--microbatch-group-size-per-virtual-pipeline-stage {value}", ""},
      // The uneven split (layer_split.hpp): each key is absent ("") unless the plan sets it.
      A{"plan.decoder_first_pipeline_num_layers", "", "", "", ""},
      A{"plan.decoder_first_pipeline_num_layers", "*", "", "--decoder-first-pipeline-num-layers {value}", ""},
      A{"plan.decoder_last_pipeline_num_layers", "", "", "", ""},
      A{"plan.decoder_last_pipeline_num_layers", "*", "", "--decoder-last-pipeline-num-layers {value}", ""},
      A{"plan.account_for_embedding_in_pipeline_split", "", "", "", ""},
      A{"plan.account_for_embedding_in_pipeline_split", "true", "", "--account-for-embedding-in-pipeline-split", ""},
      A{"plan.account_for_loss_in_pipeline_split", "", "", "", ""},
      A{"plan.account_for_loss_in_pipeline_split", "true", "", "--account-for-loss-in-pipeline-split", ""},
      A{"plan.schedule", "1f1b", "", "", ""},
      A{"plan.schedule", "interleaved", "", "", ""},  // the virtual stages select it
      A{"plan.schedule", "gpipe", "", "", "no GPipe schedule: get_forward_backward_func runs 1F1B or interleaved 1F1B"},
      A{"plan.schedule", "zb-h1", "", "", kNoZeroBubble},
      A{"plan.schedule", "zb-h2", "", "", kNoZeroBubble},
      A{"plan.schedule", "zb-2p", "", "", kNoZeroBubble},
      A{"plan.schedule", "zb-v", "", "", kNoZeroBubble},
      A{"plan.schedule", "dualpipe", "", "", kNoDualPipe},
      A{"plan.schedule", "dualpipev", "", "", kNoDualPipe},
      // plan.vocab_parallel: absent ("") unless set.
      A{"plan.vocab_parallel", "", "", "", ""},
      A{"plan.vocab_parallel", "*", "", "", kNoVocabParallel},
      A{"plan.context_parallel_size", "1", "", "", ""},
      A{"plan.context_parallel_size", "*", "", "--context-parallel-size {value}", ""},
      A{"plan.expert_model_parallel_size", "1", "", "", ""},
      A{"plan.expert_model_parallel_size", "*", "", "--expert-model-parallel-size {value}", ""},
      A{"plan.sequence_parallel", "true", "", "--sequence-parallel", ""},
      A{"plan.sequence_parallel", "false", "", "", ""},
      A{"plan.micro_batch_size", "*", "", "--micro-batch-size {value}", ""},
      A{"plan.global_batch_size", "*", "", "--global-batch-size {value}", ""},
      A{"plan.seq_length", "*", "", "--seq-length {value}", ""},
      A{"plan.recompute_granularity", "none", "", "", ""},
      A{"plan.recompute_granularity", "selective", "", "--recompute-granularity selective", ""},
      A{"plan.recompute_granularity", "full", "", "--recompute-granularity full", ""},
      A{"plan.recompute_method", "uniform", "plan.recompute_granularity=full", "--recompute-method uniform", ""},
      A{"plan.recompute_method", "block", "plan.recompute_granularity=full", "--recompute-method block", ""},
      A{"plan.recompute_num_layers", "*", "plan.recompute_granularity=full", "--recompute-num-layers {recompute_num_layers}", ""},
      A{"plan.use_distributed_optimizer", "true", "", "--use-distributed-optimizer", ""},
      A{"plan.use_distributed_optimizer", "false", "", "", ""},
      A{"plan.zero_stage", "0", "", "", ""},
      A{"plan.zero_stage", "1", "", "--use-megatron-fsdp --data-parallel-sharding-strategy optim", ""},
      A{"plan.zero_stage", "2", "", "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads", ""},
      A{"plan.zero_stage", "3", "", "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params", ""},
      A{"plan.offload_optimizer", "none", "", "", ""},
      A{"plan.offload_optimizer", "cpu", "", "--optimizer-cpu-offload", ""},
      A{"plan.precision", "bf16", "", "--bf16", ""},
      A{"plan.precision", "fp16", "", "--fp16", ""},
      A{"plan.precision", "fp8", "", "--bf16 --fp8-format hybrid", ""},
      // transformer_config.py fp8_recipe (--fp8-recipe, default delayed: plan_overrides writes the
      // key only when it is not); arguments.py --fp8-param-gather (2016) and, for MXFP8 parameters,
      // --reuse-grad-buf-for-mxfp8-param-ag (3080: TE's replace_raw_data cannot move an MXFP8Tensor
      // into the DDP parameter buffer, so the gather goes through the gradient buffer).
      A{"plan.fp8_recipe", "", "", "", ""},
      A{"plan.fp8_recipe", "*", "", "--fp8-recipe {value}", ""},
      A{"plan.fp8_recipe", "mxfp8", "", "--fp8-recipe mxfp8", ""},
      A{"plan.fp8_recipe", "mxfp8", "plan.fp8_param_gather=true", "--reuse-grad-buf-for-mxfp8-param-ag", ""},
      A{"plan.fp8_param_gather", "", "", "", ""},
      A{"plan.fp8_param_gather", "true", "", "--fp8-param-gather", ""},
      A{"plan.use_flash_attn", "true", "", "--attention-backend flash", ""},
      A{"plan.use_flash_attn", "false", "", "--attention-backend unfused", ""},
      A{"plan.overlap_grad_reduce", "true", "", "--overlap-grad-reduce", ""},
      A{"plan.overlap_grad_reduce", "false", "", "", ""},
      // Megatron overlaps the parameter gather only with the distributed optimizer (arguments.py
      // asserts it); Megatron-FSDP overlaps its own.
      A{"plan.overlap_param_gather", "true", "plan.use_distributed_optimizer=true", "--overlap-param-gather", ""},
      A{"plan.overlap_param_gather", "true", "plan.use_distributed_optimizer=false", "", ""},
      A{"plan.overlap_param_gather", "false", "", "", ""},
      A{"plan.tp_comm_overlap", "true", "", "--tp-comm-overlap", ""},
      A{"plan.tp_comm_overlap", "false", "", "", ""},
      // arguments.py: --overlap-moe-expert-parallel-comm needs --delay-wgrad-compute (the combined
      // 1F1B splits the weight gradient out to overlap it).
      A{"plan.overlap_moe_expert_parallel_comm", "true", "", "--overlap-moe-expert-parallel-comm --delay-wgrad-compute", ""},
      A{"plan.overlap_moe_expert_parallel_comm", "false", "", "", ""},
  };
}

LaunchSyntax megatron_launch() {
  return {"megatron", kMegatronLaunchChecked, "pretrain_gpt.py", "Megatron-LM's pretrain_gpt.py", "",
          megatron_launch_arguments()};
}

// MindSpeed: Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48 (2026-07-21)
// mindspeed/arguments.py --context-parallel-algo (175, default ulysses_cp_algo), over the
// Megatron-LM its README pins, core_v0.12.1 = a845aa7e12b3a117e24c2352b9e3e60bad2e3a17, whose
// megatron/training/arguments.py has every Megatron name above (literal add_argument calls) but
// --use-megatron-fsdp: there --use-custom-fsdp (2133), which needs the distributed optimizer
// (556), and --use-flash-attn (1703), which MindSpeed's attention reads.
LaunchSyntax mindspeed_launch() {
  LaunchSyntax s{"mindspeed",
                 "Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48 (2026-07-21) mindspeed/arguments.py, "
                 "over NVIDIA/Megatron-LM core_v0.12.1 (a845aa7e12b3a117e24c2352b9e3e60bad2e3a17) "
                 "megatron/training/arguments.py",
                 "pretrain_gpt.py", "Megatron-LM's pretrain_gpt.py with 'import mindspeed.megatron_adaptor' added",
                 "", megatron_launch_arguments()};
  // MindSpeed's DualPipeV (Ascend/MindSpeed @ 9811df6689c36bd2c2b30bacdf7d9ec229e464a9
  // mindspeed/features_manager/pipeline_parallel/dualpipev_feature.py: --schedules-method
  // dualpipev; validate_args asserts overlap_grad_reduce off and context parallelism 1).
  s.arguments.erase(std::remove_if(s.arguments.begin(), s.arguments.end(),
                                   [](const LaunchArgument& a) {
                                     return a.key == "plan.schedule" && a.value == "dualpipev";
                                   }),
                    s.arguments.end());
  const char* dualpipev_asserts = "MindSpeed's dualpipev asserts overlap_grad_reduce off and context_parallel_size 1 "
                                  "(features_manager/pipeline_parallel/dualpipev_feature.py)";
  for (LaunchArgument& a : s.arguments) {
    if (a.key == "plan.context_parallel_size" && a.value == "*")
      a.text = "--context-parallel-size {value} --context-parallel-algo megatron_cp_algo";  // ring attention, as priced
    if (a.key == "plan.zero_stage" && a.value != "0")
      a.text = "--use-custom-fsdp --use-distributed-optimizer --data-parallel-sharding-strategy " +
               std::string(a.value == "1" ? "optim" : a.value == "2" ? "optim_grads" : "optim_grads_params");
    if (a.key == "plan.use_flash_attn") a.text = a.value == "true" ? "--use-flash-attn" : "";
    // MindSpeed's own EP overlap (docs/features/megatron_moe/megatron-moe-alltoall-overlap-comm.md:
    // --moe-alltoall-overlap-comm with the alltoall dispatcher and --moe-grouped-gemm); core_v0.12.1
    // has no --overlap-moe-expert-parallel-comm.
    if (a.key == "plan.overlap_moe_expert_parallel_comm" && a.value == "true")
      a.text = "--moe-alltoall-overlap-comm --moe-grouped-gemm";
    // TP overlap is MindSpeed's CoC (Ascend/MindSpeed @ b07b45b75b
    // docs/features/communication-over-computation.md), not Transformer Engine's userbuffers.
    if (a.key == "plan.tp_comm_overlap" && a.value == "true") a.text = "--use-ascend-coc";
  }
  // mindspeed/arguments.py --cp-attention-mask-type {causal,general} (default causal).
  s.arguments.push_back(A{"plan.cp_attention_mask_type", "", "", "", ""});  // causal: not written
  s.arguments.push_back(A{"plan.cp_attention_mask_type", "general", "", "--cp-attention-mask-type general", ""});
  s.arguments.push_back(A{"plan.schedule", "dualpipev", "plan.overlap_grad_reduce=false", "--schedules-method dualpipev", ""});
  s.arguments.push_back(A{"plan.schedule", "dualpipev", "plan.overlap_grad_reduce=true", "", dualpipev_asserts});
  s.arguments.push_back(A{"plan.context_parallel_size", "*", "plan.schedule=dualpipev", "", dualpipev_asserts});
  return s;
}

// torchtitan: pytorch/torchtitan @ b5bcd76c66d0acb1a08b176d9639425bc55e0b2a (2026-08-21), tyro
// flags --section.field (torchtitan/config/manager.py tyro.cli over Trainer.Config,
// torchtitan/trainer.py: sections training, parallelism, compile, activation_checkpoint);
// torchtitan/config/configs.py TrainingConfig num_tokens_per_microbatch_per_dp_rank (37),
// num_tokens_per_train_step (43), max_context_length (51), mixed_precision_param (94,
// bfloat16|float32); ParallelismConfig data_parallel_replicate_degree (122),
// data_parallel_shard_degree (133), fsdp_reshard_after_forward (145, default|always|never),
// tensor_parallel_degree (166), enable_sequence_parallel (169, default true),
// pipeline_parallel_degree (180), pipeline_parallel_first_stage_less_layers (197),
// pipeline_parallel_last_stage_less_layers (203), pipeline_parallel_layers_per_stage (209),
// pipeline_parallel_schedule (216: PyTorch's schedule names), num_pp_microbatches (232),
// context_parallel_degree (239), expert_parallel_degree (282); CompileConfig enable (295),
// enable_async_tensor_parallel (298); torchtitan/distributed/activation_checkpoint.py
// ActivationCheckpointingConfig (332): tyro subcommands activation-checkpoint:none|full|selective
// (the form tests use: experiments/transformers_modeling_backend/tests/run_moe_tests.sh).
std::vector<LaunchArgument> torchtitan_launch_arguments() {
  const char* no_zb = "torch.distributed.pipelining's zero-bubble schedules (InterleavedZeroBubble, ZBVZeroBubble) "
                      "are multi-stage: torchtitan/distributed/pipeline_parallel.py requires at least 2 stages per "
                      "rank, and ZB-H1 and ZB-H2 have one";
  const char* same_pass = "FSDP2 always overlaps its collectives with compute (no option turns it off)";
  return {
      A{"plan.tensor_model_parallel_size", "*", "", "--parallelism.tensor_parallel_degree {value}", ""},
      A{"plan.pipeline_model_parallel_size", "1", "", "", ""},
      // trainsim splits the layers evenly, the embedding and head beside them.
      A{"plan.pipeline_model_parallel_size", "*", "",
        "--parallelism.pipeline_parallel_degree {value} --parallelism.pipeline_parallel_layers_per_stage "
        "{layers_per_chunk} --parallelism.pipeline_parallel_first_stage_less_layers 0 "
        "--parallelism.pipeline_parallel_last_stage_less_layers 0 --parallelism.num_pp_microbatches {microbatches}",
        ""},
      A{"plan.virtual_pipeline_model_parallel_size", "*", "", "", ""},  // layers_per_stage gives the stages
      A{"plan.schedule", "1f1b", "", "", ""},
      A{"plan.schedule", "interleaved", "", "--parallelism.pipeline_parallel_schedule Interleaved1F1B", ""},
      A{"plan.schedule", "gpipe", "", "--parallelism.pipeline_parallel_schedule GPipe", ""},
      A{"plan.schedule", "zb-h1", "", "", no_zb},
      A{"plan.schedule", "zb-h2", "", "", no_zb},
      A{"plan.schedule", "zb-2p", "", "", no_zb},
      // Two stages per rank in a V: torch.distributed.pipelining's ScheduleZBVZeroBubble and
      // ScheduleDualPipeV, which torchtitan's get_schedule_class finds by these names.
      A{"plan.schedule", "zb-v", "", "--parallelism.pipeline_parallel_schedule ZBVZeroBubble", ""},
      A{"plan.schedule", "dualpipev", "", "--parallelism.pipeline_parallel_schedule DualPipeV", ""},
      A{"plan.schedule", "dualpipe", "", "",
        "torch.distributed.pipelining has DualPipeV (one copy of the model in a V), not the two-copy DualPipe"},
      A{"plan.vocab_parallel", "", "", "", ""},
      A{"plan.vocab_parallel", "*", "", "",
        "no vocabulary parallelism across pipeline stages: torchtitan's pipeline splits the model by whole "
        "modules, the embedding on the first stage and the output on the last"},
      A{"plan.context_parallel_size", "1", "", "", ""},
      A{"plan.context_parallel_size", "*", "", "--parallelism.context_parallel_degree {value}", ""},
      A{"plan.expert_model_parallel_size", "1", "", "", ""},
      A{"plan.expert_model_parallel_size", "*", "", "--parallelism.expert_parallel_degree {value}", ""},
      A{"plan.sequence_parallel", "true", "", "", ""},
      A{"plan.sequence_parallel", "false", "", "--parallelism.no_enable_sequence_parallel", ""},
      A{"plan.micro_batch_size", "*", "", "--training.num_tokens_per_microbatch_per_dp_rank {micro_batch_tokens}", ""},
      A{"plan.global_batch_size", "*", "", "--training.num_tokens_per_train_step {global_batch_tokens}", ""},
      A{"plan.seq_length", "*", "", "--training.max_context_length {value}", ""},
      A{"plan.use_distributed_optimizer", "false", "", "", ""},
      A{"plan.use_distributed_optimizer", "true", "", "",
        "no Megatron distributed optimizer: fully_shard shards the optimizer states with the parameters "
        "(plan.zero_stage 2 or 3)"},
      A{"plan.zero_stage", "0", "", "--parallelism.data_parallel_replicate_degree {dp} --parallelism.data_parallel_shard_degree 1", ""},
      A{"plan.zero_stage", "1", "", "",
        "FSDP has no optimizer-only sharding (ZeRO-1): fully_shard shards parameters, gradients and optimizer "
        "states together"},
      A{"plan.zero_stage", "2", "", "--parallelism.fsdp_reshard_after_forward never", ""},
      // "default": resharded after forward without PP, kept with PP, as the fsdp entry prices it.
      A{"plan.zero_stage", "3", "", "", ""},
      A{"plan.offload_optimizer", "none", "", "", ""},
      A{"plan.offload_optimizer", "cpu", "", "",
        "training.enable_cpu_offload offloads the parameters and gradients with the optimizer states (FSDP's "
        "CPU offload), not the optimizer alone"},
      // torchtitan/config/configs.py (b5bcd76c6) mixed_precision_param (94: bfloat16|float32),
      // mixed_precision_reduce (102: Literal["float32"] only).
      A{"plan.fsdp_mixed_precision", "default", "", "", ""},
      A{"plan.fsdp_mixed_precision", "pure", "", "",
        "torchtitan's training.mixed_precision_reduce takes only float32 (config/configs.py): no bf16 reduction"},
      A{"plan.fsdp_mixed_precision", "full", "", "--training.mixed_precision_param float32", ""},
      A{"plan.precision", "bf16", "", "--training.mixed_precision_param bfloat16", ""},
      A{"plan.precision", "fp16", "", "", "training.mixed_precision_param takes bfloat16 or float32 only"},
      A{"plan.precision", "fp8", "", "",
        "float8 training is a quantization converter (torchtitan/components/quantization/float8.py) chosen in the "
        "Python configuration, not a command-line option"},
      A{"plan.use_flash_attn", "true", "", "", ""},
      A{"plan.use_flash_attn", "false", "", "",
        "the attention backend belongs to the model (Trainer.Config.model_spec, tyro.conf.Suppress: off the command "
        "line)"},
      A{"plan.overlap_grad_reduce", "true", "", "", ""},
      A{"plan.overlap_grad_reduce", "false", "", "", same_pass},
      A{"plan.overlap_param_gather", "true", "", "", ""},
      A{"plan.overlap_param_gather", "false", "", "", same_pass},
      A{"plan.tp_comm_overlap", "false", "", "", ""},
      A{"plan.tp_comm_overlap", "true", "", "--compile.enable --compile.enable_async_tensor_parallel", ""},
      A{"plan.overlap_moe_expert_parallel_comm", "false", "", "", ""},
      A{"plan.overlap_moe_expert_parallel_comm", "true", "", "", "no expert-parallel all-to-all overlap option in torchtitan's job config"},
      A{"plan.recompute_method", "uniform", "", "", ""},
      A{"plan.recompute_method", "block", "plan.recompute_granularity=full", "",
        "FullAC wraps every transformer block: no count of blocks to recompute"},
      A{"plan.recompute_num_layers", "*", "", "", ""},
      // Last: a tyro subcommand ends the root's arguments.
      A{"plan.recompute_granularity", "none", "", "activation-checkpoint:none", ""},
      A{"plan.recompute_granularity", "full", "", "activation-checkpoint:full", ""},
      A{"plan.recompute_granularity", "selective", "", "",
        "torchtitan's selective AC (SelectiveAC: saves chosen ops' outputs, recomputes every second matmul) is "
        "not Megatron's recompute of the attention core that trainsim prices"},
  };
}

LaunchSyntax torchtitan_launch() {
  return {"torchtitan",
          "pytorch/torchtitan @ b5bcd76c66d0acb1a08b176d9639425bc55e0b2a (2026-08-21) torchtitan/config/configs.py, "
          "torchtitan/trainer.py, torchtitan/distributed/activation_checkpoint.py (tyro --section.field)",
          "-m torchtitan.train --module MODEL --config CONFIG", "MODEL and CONFIG: a torchtitan configuration of the model",
          "", torchtitan_launch_arguments()};
}

// DeepSpeed under Megatron-DeepSpeed: microsoft/Megatron-DeepSpeed @
// f4157bea69f3df8c6cb66f2ebcda66ba03d1288e (2024-12-24) megatron/arguments.py:
// --micro-batch-size (801), --global-batch-size (808), --recompute-granularity (830),
// --recompute-method (842), --recompute-num-layers (851), --enable-zbh1-pipeline (856, asserts no
// sequence parallelism at 80), --use-flash-attn-v2 (930), --no-pipeline-parallel (954),
// --sequence-parallel (972), --fp16 (1111), --bf16 (1113), --tensor-model-parallel-size (1149),
// --pipeline-model-parallel-size (1154), --moe-expert-parallel-size (1159), --seq-length
// (1278), --zero-stage (1487); --deepspeed and --deepspeed_config from DeepSpeed's
// add_config_arguments (deepspeed/__init__.py 248, 253). The JSON keys: microsoft/DeepSpeed @
// 38327e07f6cd39b63418f60cedd1651b0be3e7c3 (0.16.5) deepspeed/runtime/constants.py
// train_batch_size (17), train_micro_batch_size_per_gpu (93), gradient_accumulation_steps (105),
// bf16.enabled (123, 126), fp16.enabled (151, 153); runtime/zero/config.py zero_optimization (53)
// .stage (91), .overlap_comm (134), .offload_optimizer (160) .device (offload_config.py 55),
// .stage3_prefetch_bucket_size (208, the alias of prefetch_bucket_size).
std::vector<LaunchArgument> deepspeed_launch_arguments() {
  const char* one_stage = "DeepSpeed's PipelineEngine runs TrainSchedule (1F1B), one stage per rank: no virtual stages";
  return {
      A{"plan.tensor_model_parallel_size", "*", "", "--tensor-model-parallel-size {value}", ""},
      A{"plan.pipeline_model_parallel_size", "1", "", "--pipeline-model-parallel-size 1 --no-pipeline-parallel", ""},
      A{"plan.pipeline_model_parallel_size", "*", "", "--pipeline-model-parallel-size {value}", ""},
      A{"plan.virtual_pipeline_model_parallel_size", "1", "", "", ""},
      A{"plan.virtual_pipeline_model_parallel_size", "*", "", "", one_stage},
      A{"plan.schedule", "1f1b", "", "", ""},
      A{"plan.schedule", "interleaved", "", "", one_stage},
      A{"plan.schedule", "gpipe", "", "",
        "TrainSchedule is DeepSpeed's only train schedule (InferenceSchedule is forward-only)"},
      A{"plan.schedule", "zb-h1", "plan.sequence_parallel=false", "--enable-zbh1-pipeline", ""},
      A{"plan.schedule", "zb-h1", "plan.sequence_parallel=true", "",
        "Megatron-DeepSpeed's --enable-zbh1-pipeline asserts sequence_parallel == False (megatron/arguments.py)"},
      A{"plan.schedule", "zb-h2", "", "", "Megatron-DeepSpeed's only zero-bubble flag is --enable-zbh1-pipeline"},
      A{"plan.schedule", "zb-2p", "", "", "Megatron-DeepSpeed's only zero-bubble flag is --enable-zbh1-pipeline"},
      A{"plan.schedule", "zb-v", "", "", one_stage},
      A{"plan.schedule", "dualpipe", "", "", one_stage},
      A{"plan.schedule", "dualpipev", "", "", one_stage},
      A{"plan.vocab_parallel", "", "", "", ""},
      A{"plan.vocab_parallel", "*", "", "",
        "no vocabulary parallelism across pipeline stages: Megatron-DeepSpeed's GPTModelPipe puts the embedding "
        "on the first stage and the output layer on the last"},
      A{"plan.context_parallel_size", "1", "", "", ""},
      A{"plan.context_parallel_size", "*", "", "",
        "no context parallelism: Megatron-DeepSpeed's --ds-sequence-parallel-size is Ulysses (an all-to-all of "
        "heads), not the ring attention trainsim prices"},
      A{"plan.expert_model_parallel_size", "1", "", "", ""},
      A{"plan.expert_model_parallel_size", "*", "", "--moe-expert-parallel-size {value}", ""},
      A{"plan.sequence_parallel", "true", "", "--sequence-parallel", ""},
      A{"plan.sequence_parallel", "false", "", "", ""},
      A{"plan.micro_batch_size", "*", "", "--micro-batch-size {value}", ""},
      A{"plan.micro_batch_size", "*", "", "ds_config:train_micro_batch_size_per_gpu={value}", ""},
      A{"plan.global_batch_size", "*", "", "--global-batch-size {value}", ""},
      A{"plan.global_batch_size", "*", "", "ds_config:train_batch_size={value}", ""},
      A{"plan.global_batch_size", "*", "", "ds_config:gradient_accumulation_steps={microbatches}", ""},
      A{"plan.seq_length", "*", "", "--seq-length {value}", ""},
      A{"plan.recompute_granularity", "none", "", "", ""},
      A{"plan.recompute_granularity", "selective", "", "--recompute-granularity selective", ""},
      A{"plan.recompute_granularity", "full", "", "--recompute-granularity full", ""},
      A{"plan.recompute_method", "uniform", "plan.recompute_granularity=full", "--recompute-method uniform", ""},
      A{"plan.recompute_method", "block", "plan.recompute_granularity=full", "",
        "GPTModelPipe (megatron/model/gpt_model.py 448) checkpoints at a uniform interval only"},
      A{"plan.recompute_num_layers", "*", "plan.recompute_granularity=full", "--recompute-num-layers {recompute_num_layers}", ""},
      A{"plan.use_distributed_optimizer", "false", "", "", ""},
      A{"plan.use_distributed_optimizer", "true", "", "",
        "no Megatron distributed optimizer under DeepSpeed: ZeRO stage 1 shards the optimizer (plan.zero_stage=1)"},
      A{"plan.zero_stage", "*", "", "--zero-stage {value}", ""},
      A{"plan.zero_stage", "*", "", "ds_config:zero_optimization.stage={value}", ""},
      A{"plan.offload_optimizer", "none", "", "", ""},
      A{"plan.offload_optimizer", "cpu", "", "ds_config:zero_optimization.offload_optimizer.device=cpu", ""},
      A{"plan.precision", "bf16", "", "--bf16", ""},
      A{"plan.precision", "bf16", "", "ds_config:bf16.enabled=true", ""},
      A{"plan.precision", "fp16", "", "--fp16", ""},
      A{"plan.precision", "fp16", "", "ds_config:fp16.enabled=true", ""},
      A{"plan.precision", "fp8", "", "", "no FP8 argument in Megatron-DeepSpeed's megatron/arguments.py"},
      A{"plan.use_flash_attn", "true", "", "--use-flash-attn-v2", ""},
      A{"plan.use_flash_attn", "false", "", "", ""},
      A{"plan.overlap_grad_reduce", "true", "", "ds_config:zero_optimization.overlap_comm=true", ""},
      A{"plan.overlap_grad_reduce", "false", "", "ds_config:zero_optimization.overlap_comm=false", ""},
      A{"plan.overlap_param_gather", "true", "", "", ""},
      A{"plan.overlap_param_gather", "false", "", "ds_config:zero_optimization.stage3_prefetch_bucket_size=0", ""},
      A{"plan.tp_comm_overlap", "false", "", "", ""},
      A{"plan.tp_comm_overlap", "true", "", "", "no TP communication overlap argument in Megatron-DeepSpeed"},
      A{"plan.overlap_moe_expert_parallel_comm", "false", "", "", ""},
      A{"plan.overlap_moe_expert_parallel_comm", "true", "", "", "no expert-parallel all-to-all overlap argument in Megatron-DeepSpeed"},
  };
}

LaunchSyntax deepspeed_launch() {
  return {"deepspeed",
          "microsoft/Megatron-DeepSpeed @ f4157bea69f3df8c6cb66f2ebcda66ba03d1288e (2024-12-24) megatron/arguments.py; "
          "ds_config keys: microsoft/DeepSpeed @ 38327e07f6cd39b63418f60cedd1651b0be3e7c3 (0.16.5) "
          "deepspeed/runtime/constants.py, runtime/zero/config.py, runtime/zero/offload_config.py",
          "pretrain_gpt.py", "Megatron-DeepSpeed's pretrain_gpt.py", "--deepspeed --deepspeed_config {ds_config}",
          deepspeed_launch_arguments()};
}

FrameworkEntry megatron_core() {
  FrameworkEntry e;
  e.id = Framework::megatron_core;
  e.name = "megatron-core";
  e.versions = kMcore;
  e.grad_bucket_params = {0, at(kMcore,
                                "distributed/distributed_data_parallel.py DistributedDataParallel.__init__: "
                                "bucket_size = max(40000000, 1000000 * dp_size)")};
  e.param_persistence_threshold = {0, at(kMcore, "Megatron-FSDP shards every parameter of an FSDP unit")};
  // 2 every step: zero_grad_buffer writes the whole buffer (training.py train_step ->
  // _ParamAndGradBuffer.reset: grad_data.zero_()) and the NaN/Inf check reads it for a norm
  // before the DP collective (check_for_nan_in_loss_and_grad, default on: arguments.py
  // --no-check-for-nan-in-loss-and-grad is store_false; _ParamAndGradBucketGroup.check_grads).
  // Then start_grad_sync pre-scales (grad_data *= gradient_scaling_factor, read and write) when
  // the factor, 1 / (DP x CP) unless average_in_collective, is not 1. Read at NVIDIA/Megatron-LM
  // @ d98e8a64 and 23e00ed0; hardware/sources/megatron-moe-step-costs.md A1.
  e.step_grad_buffer_passes = {2, at(kMcore, "param_and_grad_buffer.py _ParamAndGradBuffer.reset (zero_), "
                                              "_ParamAndGradBucketGroup.check_grads (grad_data.norm), "
                                              "training.py train_step zero_grad_buffer")};
  e.grad_prescale_passes = {2, at(kMcore, "param_and_grad_buffer.py start_grad_sync: if gradient_scaling_factor "
                                           "!= 1.0: grad_data *= gradient_scaling_factor; distributed_data_parallel.py: "
                                           "1 / data_parallel_world_size unless average_in_collective (default off)")};
  e.step_grad_shard_passes = {1, at(kMcore, "optimizer.py get_grad_norm -> clip_grads.py get_grad_norm_fp32 "
                                             "(multi-tensor l2norm over the main-grad shard; --clip-grad default 1.0)")};
  e.chained_optimizers_gather_all_buckets = {
      true, at(kMcore, "optimizer/__init__.py get_megatron_optimizer builds a dense and an expert "
                       "DistributedOptimizer on the same model chunks; ChainedOptimizer._step calls each one's "
                       "step_with_ready_grads, which without overlap_param_gather starts the param sync of every "
                       "bucket group, dense and expert (distrib_optimizer.py start_param_sync_for_bucket_group_subset, "
                       "formerly model_chunk.start_param_sync); SimuMax perf_llm.py doubles the gather for MoE")};
  e.prefetch_bucket_params = {0, at(kMcore, "Megatron-FSDP: the next FSDP unit is gathered while one computes")};
  e.zero3_gather_unit = {GatherUnit::layer, at(kMcore,
                                               "Megatron-FSDP fully_shard(fsdp_unit_modules=[TransformerLayer], "
                                               "zero_dp_strategy='optim_grads_params')")};
  e.zero3_gathers_per_microbatch = {2, at(kMcore,
                                          "Megatron-FSDP optim_grads_params: weights freed after forward, "
                                          "gathered again for backward")};
  e.zero3_gathers_per_microbatch_with_pp = e.zero3_gathers_per_microbatch;
  e.grad_reduce_bytes = {0, at(kMcore,
                               "bf16: accumulate_allreduce_grads_in_fp32 / grad_reduce_in_fp32 (fp32); "
                               "fp16: fp16")};
  e.blocking_p2p = {false, at(kMcore,
                              "pipeline_parallel/p2p_communication.py _communicate: batch_isend_irecv, "
                              "overlap_p2p_comm with the interleaved schedule")};
  e.p2p_exchange_blocking = {true, at(kMcore,
                                       "pipeline_parallel/schedules.py forward_backward_pipelining_without_interleaving: "
                                       "send_forward_recv_backward / send_backward_recv_forward after each pass; "
                                       "p2p_communication.py _communicate: batch_isend_irecv, then req.wait() on every "
                                       "request (wait_on_reqs) and torch.cuda.synchronize() (batch_p2p_sync, default "
                                       "True); arguments.py sets overlap_p2p_comm False for non-interleaved schedules. "
                                       "The interleaved schedule without overlap_p2p_comm: forward_k, backward_k, then "
                                       "send_forward_backward_recv_forward_backward")};
  e.p2p_overlap_interleaved = {true, at(kMcore,
                                        "arguments.py --no-overlap-p2p-communication (store_false, dest "
                                        "overlap_p2p_comm: on by default since 4eeff55d 'Make overlap_p2p_comm the "
                                        "default', 2023-10-12; also in the zero-bubble fork, sail-sg/zero-bubble-"
                                        "pipeline-parallelism f68d3879 'for arxiv paper'); schedules.py "
                                        "forward_backward_pipelining_with_interleaving: send_forward_recv_forward after "
                                        "the forward, its handles waited before the next forward, "
                                        "send_backward_recv_backward after the backward, waited before the next "
                                        "backward")};
  e.max_zero_stage_with_pp = {1, at(kMcore, "distributed optimizer (ZeRO-1) with PP; no ZeRO-2/3 with PP")};
  e.sharded_collectives_ring_only = {true, kNccl};
  e.softmax_batch_per_block_from_heads = {false,
                                          "Megatron-LM megatron/model/fused_softmax.py (2021-22) "
                                          "FusedScaleMaskSoftmax.get_batch_per_block(sq, sk, b, np): the kernel's "
                                          "batches per block come from the key length"};
  e.bf16_grad_fold_bytes_per_param = {0, at(kMcore,
                                            "distributed/distributed_data_parallel.py: gradients accumulate "
                                            "in the main_grad buffer as the backward writes them (no pass "
                                            "per micro-batch over the parameters)")};
  e.grad_reduce_after_pipeline = {false, at(kMcore,
                                            "distributed/param_and_grad_buffer.py: a bucket's reduction "
                                            "starts when its last gradient is ready, during the last "
                                            "micro-batch's backward (overlap_grad_reduce)")};
  // Read at f2e5db4 (2024-07-15, the commit of the README's H100 weak-scaling table; the same in
  // core_r0.8.0) and unchanged in how buckets are cut through 2024.
  e.grad_buckets_first_stage_only = {
      true, "NVIDIA/Megatron-LM @ f2e5db4 megatron/core/distributed/distributed_data_parallel.py "
            "DistributedDataParallel.__init__: 'if parallel_state.get_pipeline_model_parallel_rank() > 0: "
            "self.bucket_size = None' and 'if disable_bucketing: self.bucket_size = None'; "
            "megatron/training/training.py get_model: disable_bucketing=(model_chunk_idx > 0); the other stages' "
            "reduction starts after their last backward (schedules.py forward_backward_pipelining_without_"
            "interleaving: enable_grad_sync() only 'if config.grad_sync_func is None or rank == 0', the rest "
            "launched after the cooldown; --no-delay-grad-reduce is the opt-out)"};
  e.param_gather_waited_in_forward = {
      true, "NVIDIA/Megatron-LM @ f2e5db4 megatron/core/optimizer/distrib_optimizer.py: zero_grad() dispatches the "
            "all-gather of the first bucket in forward order (_get_model_param_buffer_dp_views: buckets reversed), "
            "and the forward pre-hook (_make_forward_pre_hook -> _finish_param_sync_helper) waits for a module's "
            "bucket, then dispatches the next one ('We can't pre-launch all-gathers for all buckets at once'); the "
            "handles are None after the first forward, so later micro-batches wait for nothing. "
            "--overlap-param-gather-with-optimizer-step came later (4e3840535b, 2024-08-23)"};
  e.p2p_partitioned_over_tp = {false, at(kMcore,
                                         "pipeline_parallel/p2p_communication.py _communicate: every rank "
                                         "sends the whole tensor_shape (with sequence parallelism already "
                                         "1/TP of the sequence)")};
  e.schedules_with_pp = {{PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::zero_bubble_h1},
                         at(kMcore,
                            "pipeline_parallel/schedules.py get_forward_backward_func: "
                            "forward_backward_pipelining_with_interleaving / _without_interleaving (1F1B); "
                            "gpipe and zb-h1 are trainsim's replays, not refused here")};
  e.interleaved_microbatch_groups = {
      MicrobatchGrouping::megatron_core,
      at(kMcore, "pipeline_parallel/schedules.py get_schedule_table: groups of microbatch_group_size_per_vp_stage "
                 "(model_parallel_config.py: default pipeline_model_parallel_size) run chunk after chunk; "
                 "get_pp_rank_microbatches: warm-up (p - rank - 1) * 2 + (v - 1) * N, capped at m * v; "
                 "forward_backward_pipelining_with_interleaving refuses N outside [p, m] and a last group "
                 "of 1..p-1 (since 4295be1a6c, 2024-11-01, core_r0.10.0)")};
  e.moe_overlap_extra_warmup = {
      1, at(kMcore, "pipeline_parallel/schedules.py get_pp_rank_microbatches: 'When enabling "
                    "overlap_moe_expert_parallel_comm, we schedule one extra micro-batch forward step before the 1f1b "
                    "stages', num_warmup_microbatches + 1 (combined_1f1b_schedule_for_interleaved_pipelining)")};
  e.distributed_optimizer = {true, at(kMcore, "optimizer/distrib_optimizer.py DistributedOptimizer "
                                              "(--use-distributed-optimizer)")};
  e.zero_stages = {{0, 1, 2, 3}, at(kMcore,
                                    "distributed/distributed_data_parallel_config.py "
                                    "data_parallel_sharding_strategy: 'no_shard', 'optim', 'optim_grads', "
                                    "'optim_grads_params' (Megatron-FSDP)")};
  e.context_parallel = {true, at(kMcore,
                                 "parallel_state.py initialize_model_parallel(context_parallel_size) "
                                 "(--context-parallel-size, from 292543d342 2023-10-12)")};
  e.moe_expert_parallel_comm_overlap = {
      true, "NVIDIA/Megatron-LM @ d98e8a64dd megatron/core/transformer/transformer_config.py "
            "overlap_moe_expert_parallel_comm (--overlap-moe-expert-parallel-comm; from ae1c88296f, 2025-08-01, "
            "'Support EP A2A overlap at PP=1', with interleaved PP from d7bf5aaaa8, 2025-08-26)"};
  e.grad_buffer_bytes = {0, at(kMcore,
                               "distributed/param_and_grad_buffer.py: the grad buffer's dtype is fp32 when "
                               "grad_reduce_in_fp32, else the parameters'; megatron/training/arguments.py: 'bfloat16 "
                               "requires gradient accumulation and all-reduce to be performed in fp32' "
                               "(accumulate_allreduce_grads_in_fp32 forced on with --bf16; off by default with --fp16, "
                               "so an fp16 run's buffer is fp16); docs dist_optimizer.md: bf16 param, fp32 grads = "
                               "6 + 12/d bytes")};
  e.vocab_parallel = {true,
                      "sail-sg/VocabularyParallelism @ 6191c3bf (Yeung et al., MLSys 2025, arXiv 2411.05288): Megatron-Core "
                      "forked, --enable-vocab-parallel (arguments.py: PP > 1, no virtual pipeline, "
                      "make_vocab_size_divisible_by a multiple of TP x PP, untied embeddings), "
                      "pipeline_parallel/vocab_parallel_schedule.py; NVIDIA's Megatron-Core has no such flag"};
  e.main_grad_accumulation = {true, at(kMcore,
                                       "distributed/distributed_data_parallel.py: each parameter's main_grad in the "
                                       "contiguous buffer; the backward hook's param.main_grad.add_(param.grad.data), "
                                       "or the weight-gradient GEMM accumulating into it (gradient_accumulation_fusion)")};
  e.gradient_accumulation_fusion = {
      true, at(kMcore,
               "training/arguments.py --no-gradient-accumulation-fusion (dest gradient_accumulation_fusion, "
               "default on); tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication.backward: "
               "fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32(total_input, grad_output, weight.main_grad) "
               "when fused, else grad_weight = grad_output.t().matmul(total_input); Transformer Engine's Linear and "
               "GroupedLinear (fuse_wgrad_accumulation) accumulate into main_grad in the GEMM; unfused, "
               "distributed/distributed_data_parallel.py's backward hook runs param.main_grad.add_(param.grad.data)")};
  e.gathered_units_in_flight = {2, at(kMcore,
                                      "Megatron-FSDP: the unit computing and the next unit, prefetched "
                                      "(its all-gather issued while the current unit computes)")};
  e.layers_graph_captured = {false, at(kMcore,
                                       "transformer/transformer_config.py enable_cuda_graph = False (--enable-cuda-graph "
                                       "wraps TransformerLayer in CUDA graphs only when set; the weak-scaling runs of "
                                       "the README table do not name it)")};
  e.loss_check_syncs_host = {
      true, at(kMcore, "pretrain_gpt.py loss_func: with args.check_for_nan_in_loss_and_grad (arguments.py "
                       "--no-check-for-nan-in-loss-and-grad, store_false: on by default) each micro-batch's loss goes "
                       "through rerun_state_machine.validate_result(rejection_func=torch.isnan), whose `if "
                       "result_rejected:` reads a device tensor on the host (earlier versions: `assert not "
                       "loss.isnan()`)")};
  // --optimizer-cpu-offload (ADLR/megatron-lm!2526, 60007c93d3, 2025-02-14).
  e.optimizer_offload = {true, at(kMcore,
                                  "optimizer/__init__.py: config.optimizer_cpu_offload wraps the optimizer in "
                                  "optimizer/cpu_offloading/hybrid_optimizer.py HybridDeviceOptimizer")};
  e.offload_grad_d2h_bytes_per_param = {
      4, at(kMcore,
            "hybrid_optimizer.py _set_sub_optimizer_grads: cpu_copy_map_grad[param].copy_(grad, non_blocking=True) "
            "in the dtype of the optimizer's (fp32 main) parameter")};
  e.offload_param_h2d_bytes_per_param = {
      4, at(kMcore,
            "hybrid_optimizer.py param_copy_back_gpu_hook: gpu_param.data.copy_(param.data) of the fp32 main "
            "parameter (the 16-bit model copy is made on the device after)")};
  e.offload_cpu_optimizer_speed = {
      8.2 / 56.0, at(kMcore,
                     "optimizer/__init__.py: 'from torch.optim import AdamW as CPUAdam', PyTorch's CPU Adam, not "
                     "DeepSpeed's vectorised one: 56 s against DeepSpeed CPU-Adam's 8.2 s for an 11.6B GPT-2 on "
                     "the same host (deepspeedai/DeepSpeed pull 735, 2021-02-08)")};
  e.offload_grad_shard_to_host = {false, at(kMcore,
                                            "HybridDeviceOptimizer copies the gradients out of the DDP gradient "
                                            "buffer, which stays on the device")};
  e.fp8_weights_cached_per_step = {
      true, "NVIDIA/Megatron-LM @ d98e8a64dd megatron/core/extensions/transformer_engine.py TELinear / "
            "TELayerNormColumnParallelLinear / TEGroupedLinear forward: super().forward(x, "
            "is_first_microbatch=self.is_first_microbatch) (None only with disable_parameter_transpose_cache, "
            "default False), then is_first_microbatch = False; core/pipeline_parallel/schedules.py forward_step: "
            "model.set_is_first_microbatch() on a step's first micro-batch. NVIDIA/TransformerEngine @ d0067d0da6 "
            "transformer_engine/pytorch/module/linear.py Linear.forward: cache_name = None if is_first_microbatch is "
            "None else 'weight', _fp8_workspaces[cache_name] keeps the quantized weight, which quantize_weight "
            "(module/base.py) requantizes in place only when is_first_microbatch"};
  e.transformer_engine_linears = {
      true, "NVIDIA/Megatron-LM @ d98e8a64dd megatron/training/arguments.py --transformer-impl (default "
            "transformer_engine): get_gpt_layer_with_transformer_engine_spec builds TELayerNormColumnParallelLinear / "
            "TERowParallelLinear / TEGroupedMLP; TE's Linear backward allocates its 16-bit dummy wgrad per module "
            "(MooreThreads/SimuMax simumax/core/base_struct.py _record_te_dummy_wgrad_shape)"};
  e.fp8_linear_inputs_kept_in_fp8 = {
      true, "NVIDIA/TransformerEngine @ d0067d0da6 transformer_engine/pytorch/module/linear.py _linear_forward_impl: "
            "the input quantized by the Linear's input_quantizer is the saved_inputmat of the backward, with "
            "inputmat.update_usage(rowwise_usage=False, columnwise_usage=True) ('Discard row-wise data since it is "
            "not needed in backward pass'; row-wise kept when the input is all-gathered in backward and the "
            "recipe gathers only row-wise data); Megatron-Core's TELinear / TELayerNormColumnParallelLinear / "
            "TEGroupedLinear are these modules (TELayerNormColumnParallelLinear saves its normalized output, "
            "quantized, likewise: layernorm_linear.py)"};
  e.fp8_tp_all_gather = {
      true, "NVIDIA/TransformerEngine v1.13 (e5edd6cc) transformer_engine/pytorch/module/layernorm_linear.py: "
            "ln_out_dtype = torch.uint8 if fp8 (L129), gather_along_first_dim(ln_out, tp_group) under "
            "sequence_parallel (L169), backward gathers the saved FP8 local shard again (L463 'Overlap input AG "
            "with dgrad'); linear.py L154 / L429 likewise; module/base.py grad_output_preprocess: the output "
            "gradient cast to FP8, then gather_along_first_dim (L842-854); reduce_scatter_along_first_dim in the "
            "activation dtype (linear.py L362). TE 2.x gathers in the recipe's format (v2.3-2.4 blockwise in bf16)"};
  e.fp8_param_gather = {
      Fp8ParamGather::distributed_optimizer,
      "NVIDIA/Megatron-LM @ d98e8a64dd megatron/training/arguments.py --fp8-param-gather ('Keep the compute "
            "param in fp8 (do not use any other intermediate dtype) and perform the param all-gather in fp8'; "
            "asserted with the distributed optimizer or an FSDP); megatron/core/fp8_utils.py get_fp8_context(is_init="
            "True): transformer_engine.pytorch.fp8_model_init; core/distributed/param_and_grad_buffer.py: param_dtype "
            "torch.uint8 for FP8 parameters"};
  e.async_checkpoint = {true, at(kMcore,
                                  "distributed checkpointing, --async-save (megatron/training/arguments.py; "
                                  "torch_dist format only)")};
  e.tp_comm_overlap = {true, at(kMcore, "--tp-comm-overlap (megatron/training/arguments.py; Transformer Engine's "
                                        "userbuffers overlap the TP all-gather / reduce-scatter with the GEMMs)")};
  e.tp_comm_overlap_needs_sequence_parallel = {
      true, at(kMcore, "megatron/training/arguments.py validate_args: 'Tensor parallel communication/GEMM overlap can "
                       "happen only when sequence parallelism is enabled' (asserted with --tp-comm-overlap)")};
  e.eager_layer_norm = {
      false, "NVIDIA/Megatron-LM @ d98e8a64dd megatron/core/models/gpt/gpt_layer_specs.py: the Transformer Engine spec "
             "(--transformer-impl default) fuses the input norm into TELayerNormColumnParallelLinear and takes TENorm "
             "elsewhere (extensions/transformer_engine_spec_provider.py layer_norm); the local spec's LNImpl is Apex's "
             "FusedLayerNorm (models/backends.py)"};
  e.launch = megatron_launch();
  return e;
}

FrameworkEntry megatron_lm() {
  FrameworkEntry e = megatron_core();
  e.vocab_parallel = {false, "Megatron-LM 2021-22 predates Vocabulary Parallelism (2024)"};
  e.id = Framework::megatron_lm;
  e.name = "megatron-lm";
  e.versions = "Megatron-LM 2021-22 (Narayanan et al. 2021, Korthikanti et al. 2022)";
  e.step_grad_buffer_passes = {3, "Megatron-LM 2021-22 megatron/model/distributed.py: zero_grad_buffer zeroes the "
                                  "contiguous main-grad buffer, allreduce_gradients divides it by the DP size (read "
                                  "and write, DP 1 included); no NaN check of the gradients before the reduction"};
  e.grad_prescale_passes = {0, "Megatron-LM 2021-22: the division by the DP size is counted in step_grad_buffer_passes"};
  e.grad_buffer_bytes.source =
      "NVIDIA/Megatron-LM @ de7dc40f88 megatron/model/distributed.py _get_buffer_type: torch.float if "
      "accumulate_allreduce_grads_in_fp32 else param.dtype (arguments.py forces fp32 accumulation with --bf16 "
      "only): by the precision, as Megatron-Core's";
  e.moe_overlap_extra_warmup = {0, "Megatron-LM 2021-22 has no combined 1F1B (moe_expert_parallel_comm_overlap)"};
  e.interleaved_microbatch_groups = {
      MicrobatchGrouping::megatron_2021,
      "Megatron-LM 2021-22 megatron/schedules.py forward_backward_pipelining_with_interleaving: "
      "get_model_chunk_id (k % (p * v)) // p, micro-batch (k // (p * v)) * p + k % p; 'number of "
      "microbatches is not divisible by pipeline-parallel size' asserted; all_warmup_microbatches when "
      "num_microbatches == pipeline_parallel_size"};
  e.step_grad_shard_passes = {1, "Megatron-LM 2021-22 megatron/optimizer/clip_grads.py clip_grad_norm_fp32: the "
                                 "gradient norm over every local fp32 main gradient (--clip-grad default 1.0)"};
  e.chained_optimizers_gather_all_buckets = {false, "Megatron-LM 2021-22 has no distributed optimizer"};
  e.grad_bucket_params.source =
      "Megatron-LM 2021-22 megatron/model/distributed.py: one contiguous buffer per "
      "model chunk, all-reduced after backward (taken as Megatron-Core's buckets)";
  e.distributed_optimizer.source =
      "Megatron-LM megatron/optimizer/distrib_optimizer.py DistributedOptimizer, "
      "megatron/arguments.py --use-distributed-optimizer (from 329fe5820f 2022-02-10, in the 2022 releases)";
  e.context_parallel = {false,
                        "Megatron-LM 2021-22 megatron/arguments.py has no --context-parallel-size (it arrived "
                        "with 292543d342, 2023-10-12, in megatron/core)"};
  // Its schedules block too (megatron/p2p_communication.py _communicate: batch_isend_irecv,
  // wait, torch.cuda.synchronize), but every run of it with PP here is interleaved, whose
  // batched exchange sends and receives both directions between two stages at once: the
  // replay's exchange (one stream per pair of stages) runs them one after the other, which
  // over-counts them (korthikanti22-t5-530B-full +2.1% -> +13.2%). Not applied until it can.
  e.p2p_exchange_blocking = {false,
                             "Megatron-LM 2021-22 megatron/p2p_communication.py _communicate blocks (batch_isend_irecv, "
                             "req.wait(), torch.cuda.synchronize()); not applied: the replay would serialize the "
                             "interleaved exchange's two directions that NCCL's batched group runs at once"};
  e.p2p_overlap_interleaved = {false,
                               "Megatron-LM 2021-22 megatron/schedules.py "
                               "forward_backward_pipelining_with_interleaving: forward_step, backward_step, then "
                               "p2p_communication.send_forward_backward_recv_forward_backward (blocking); "
                               "overlap_p2p_comm arrived with f9283c5a, 2023-05-31"};
  e.moe_expert_parallel_comm_overlap = {false, "Megatron-LM 2021-22 had no mixture of experts (megatron/core/transformer/"
                                               "moe came in 2023; the EP all-to-all overlap with ae1c88296f, 2025-08-01)"};
  e.optimizer_offload = {false,
                         "Megatron-LM 2021-22 has no CPU optimizer (HybridDeviceOptimizer arrived in megatron/core "
                         "with 60007c93d3, 2025-02-14)"};
  e.fp8_weights_cached_per_step.source =
      "Megatron-LM 2021-22 had no FP8 (Transformer Engine came to Megatron in 2023): an FP8 plan on this entry runs "
      "today's Megatron-Core TELinear, which caches (" + e.fp8_weights_cached_per_step.source + ")";
  e.transformer_engine_linears = {false, "Megatron-LM 2021-22 megatron/mpu/layers.py ColumnParallelLinear / "
                                         "RowParallelLinear (Transformer Engine came to Megatron in 2023)"};
  e.fp8_tp_all_gather.source = "Megatron-LM 2021-22 had no FP8: an FP8 plan on this entry runs today's Megatron-Core "
                               "TE Linears (" + e.fp8_tp_all_gather.source + ")";
  e.fp8_linear_inputs_kept_in_fp8.source = "Megatron-LM 2021-22 had no FP8: an FP8 plan on this entry runs today's "
                                           "Megatron-Core TE Linears (" + e.fp8_linear_inputs_kept_in_fp8.source + ")";
  e.fp8_param_gather = {Fp8ParamGather::none, "Megatron-LM 2021-22 had no FP8 parameters (--fp8-param-gather arrived with "
                               "Megatron-Core's distributed optimizer and Transformer Engine's fp8_model_init)"};
  // Narayanan et al. 2021, Section 4.1 ("scatter/gather communication optimization"): each of
  // the TP ranks sends 1/t of the activation across the pipeline and the receiver all-gathers it
  // over NVLink.
  e.p2p_partitioned_over_tp = {true,
                               "Megatron-LM 2021-22 megatron/arguments.py --no-scatter-gather-tensors-in-pipeline "
                               "(store_false: scatter_gather_tensors_in_pipeline defaults to True), "
                               "megatron/p2p_communication.py split_tensor_into_1d_equal_chunks / gather_split_1d_tensor; "
                               "Narayanan et al. 2021, Section 4.1, scatter/gather communication optimization"};
  e.async_checkpoint = {false, "Megatron-LM 2021-22 megatron/checkpointing.py save_checkpoint: torch.save, "
                               "synchronously (--async-save came with Megatron-Core's distributed checkpointing)"};
  e.tp_comm_overlap = {false, "Megatron-LM 2021-22: --tp-comm-overlap came in NVIDIA/Megatron-LM 116ffddc58 "
                              "(2023-10-23, 'Added user buffer initialization ...', megatron/arguments.py)"};
  e.loss_check_syncs_host = {false, "Megatron-LM 2021-22 pretrain_gpt.py loss_func averages the loss on the device "
                                    "(average_losses_across_data_parallel_group); the NaN check on the host came "
                                    "with check_for_nan_in_loss_and_grad in 2023"};
  e.grad_buckets_first_stage_only = {false, "Megatron-LM 2021-22 megatron/model/distributed.py: one buffer per model "
                                            "chunk on every stage (taken as buckets, as before)"};
  e.param_gather_waited_in_forward = {false, "Megatron-LM 2021-22 had no --overlap-param-gather (the distributed "
                                             "optimizer gathered after its step)"};
  e.eager_layer_norm = {false, "Megatron-LM 2021-22 megatron/model/fused_layer_norm.py MixedFusedLayerNorm: Megatron's "
                               "own fused_mix_prec_layer_norm_cuda kernels (megatron/fused_kernels; NVIDIA/Megatron-LM "
                               "@ b84d7a9012, 2020-12-26)"};
  e.launch = {};  // a past version: its launch is megatron-core's (today's Megatron-LM)
  return e;
}

FrameworkEntry deepspeed() {
  FrameworkEntry e;
  e.id = Framework::deepspeed;
  e.name = "deepspeed";
  e.versions = kDeepSpeed;
  e.grad_bucket_params = {5e8, at(kDeepSpeed,
                                  "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.reduce_bucket_size "
                                  "= pp_int(5e8)")};
  e.param_persistence_threshold = {1e5, at(kDeepSpeed,
                                           "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig."
                                           "param_persistence_threshold = pp_int(1e5) "
                                           "(stage3_param_persistence_threshold)")};
  e.prefetch_bucket_params = {5e7, at(kDeepSpeed,
                                      "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig."
                                      "prefetch_bucket_size = pp_int(5e7) (stage3_prefetch_bucket_size)")};
  e.zero3_gather_unit = {GatherUnit::sub_module,
                         at(kDeepSpeed,
                            "deepspeed/runtime/zero/partitioned_param_coordinator.py "
                            "PartitionedParameterCoordinator.fetch_sub_module -> __all_gather_params: "
                            "one all-gather per sub-module (each Linear)")};
  e.zero3_gathers_per_microbatch = {2, at(kDeepSpeed,
                                          "deepspeed/runtime/zero/parameter_offload.py "
                                          "post_sub_module_forward releases the sub-module; "
                                          "pre_sub_module_backward fetches it again")};
  e.zero3_gathers_per_microbatch_with_pp = {2, at(kDeepSpeed, "PipelineEngine runs ZeRO 0-1 only (no gathers)")};
  e.grad_reduce_bytes = {2, at(kDeepSpeed,
                               "deepspeed/runtime/engine.py DeepSpeedEngine.communication_data_type: "
                               "torch.bfloat16 / torch.float16 when enabled")};
  e.blocking_p2p = {true, at(kDeepSpeed,
                             "deepspeed/runtime/pipe/p2p.py send/recv: assert async_op == False; "
                             "dist.send / dist.recv (or broadcast)")};
  e.max_zero_stage_with_pp = {1, at(kDeepSpeed,
                                    "deepspeed/runtime/pipe/engine.py PipelineEngine.__init__: assert "
                                    "zero_optimization_stage() < ZeroStageEnum.gradients")};
  e.sharded_collectives_ring_only = {true, kNccl};
  e.softmax_batch_per_block_from_heads = {
      false, at(kDeepSpeed,
                "has no attention kernels of its own: the model code chooses them (Megatron's "
                "FusedScaleMaskSoftmax takes batches per block from the key length; the BigScience fork's "
                "bug is the entry bigscience-megatron-deepspeed)")};
  e.bf16_grad_fold_bytes_per_param = {
      18, std::string(kDeepSpeedPipe) +
              " runtime/engine.py get_data_types: bf16 without ZeRO accumulates gradients in fp32 "
              "(grad_accum_dtype = torch.float32) -> BF16_Optimizer; runtime/pipe/engine.py "
              "_exec_backward_pass: 'self.optimizer.update_hp_grads(clear_lp_grads=False)' after every "
              "micro-batch's backward; bf16_optimizer.py _update_hp_grad: "
              "'hp_grad.data.add_(lp.grad.data.to(hp_grad.dtype)...)': read 2 + write 4 (the fp32 copy), "
              "read 4 + 4 + write 4 (the add) = 18 bytes per parameter"};
  e.grad_reduce_after_pipeline = {
      true, std::string(kDeepSpeedPipe) +
                "runtime/pipe/engine.py PipelineEngine.__init__: 'self.enable_backward_allreduce = False'; "
                "runtime/pipe/schedule.py TrainSchedule.steps: 'if step_id == total_steps - 1: "
                "cmds.append(ReduceTiedGrads()); cmds.append(ReduceGrads()); cmds.append(OptimizerStep())'"};
  e.p2p_partitioned_over_tp = {
      true, std::string(kDeepSpeedPipe) +
                "runtime/pipe/engine.py: 'self.is_pipe_partitioned = self.is_model_parallel and "
                "self._config.pipeline[\"pipe_partitioned\"]' (default True; unconditional in 0.6.0, "
                "2022-02); _exec_forward_pass: 'part = PartitionedTensor(tensor=first_output, "
                "group=self.grid.get_slice_parallel_group())', 'outputs = (part.to_meta(), part.data(), "
                "...)'; the receiver: 'part_input.full()' (runtime/utils.py: torch.zeros, dist.all_gather "
                "over the group, .clone()); gradients likewise (is_grad_partitioned)"};
  e.zero3_max_reuse_distance = {1e9, at(kDeepSpeedMirror,
                                        "deepspeed/runtime/zero/config.py max_reuse_distance = pp_int(1e9) "
                                        "(stage3_max_reuse_distance); partitioned_param_coordinator.py "
                                        "__params_to_release keeps a parameter whose next use is within it")};
  e.zero3_list_collectives = {false, at(kDeepSpeedMirror,
                                        "deepspeed/runtime/zero/partition_parameters.py _dist_allgather_fn -> "
                                        "dist.allgather_fn (all_gather_into_tensor); stage3.py __avg_scatter_grads "
                                        "-> reduce_scatter_coalesced (flat tensors)")};
  e.zero3_blocking_fetch = {false, at(kDeepSpeedMirror,
                                      "deepspeed/runtime/zero/partitioned_param_coordinator.py fetch_sub_module: "
                                      "waits on the sub-module's own gather handles; prefetch queue of "
                                      "prefetch_bucket_size ahead, no device synchronize")};
  e.schedules_with_pp = {{PipelineSchedule::one_f_one_b},
                         std::string(kDeepSpeedPipe) +
                             "runtime/pipe/engine.py PipelineEngine.train_batch: 'sched = "
                             "schedule.TrainSchedule(micro_batches=..., stages=..., stage_id=...)', the only train "
                             "schedule; runtime/pipe/schedule.py TrainSchedule.steps: 'total_steps = 2 * "
                             "(self.micro_batches + self.stages - 1)', one forward and one backward slot per "
                             "step (1F1B, no virtual stages, no split weight gradients); InferenceSchedule is "
                             "forward-only (no GPipe train schedule)"};
  e.interleaved_microbatch_groups = {MicrobatchGrouping::megatron_2021,
                                     "no interleaved schedule (schedules_with_pp): never used"};
  e.distributed_optimizer = {false, std::string(kDeepSpeedPipe) +
                                        "runtime/zero/config.py DeepSpeedZeroConfig.stage: the optimizer is "
                                        "sharded by ZeRO stage 1 (plan.zero_stage), no Megatron distributed "
                                        "optimizer"};
  e.zero_stages = {{0, 1, 2, 3}, std::string(kDeepSpeedPipe) +
                                     "runtime/zero/config.py ZeroStageEnum: disabled = 0, optimizer_states = 1, "
                                     "gradients = 2, weights = 3"};
  e.context_parallel = {false, std::string(kDeepSpeedPipe) +
                                   "sequence/layer.py DistributedAttention: Ulysses sequence parallelism "
                                   "(all_to_all_single of heads and sequence), a different mechanism from "
                                   "context parallelism, not modelled by trainsim"};
  e.grad_buffer_bytes = {
      2, std::string(kDeepSpeedPipe) +
             "runtime/zero/stage_1_and_2.py: the 16-bit parameters' .grad accumulate in their dtype (the fp32 "
             "gradient is one partition, single_partition_of_fp32_groups[i].grad, made at the step and counted "
             "with the sharded optimizer state); Rajbhandari et al. 2020 (ZeRO) Section 3.1: '2Psi + 2Psi' "
             "for fp16 parameters and gradients"};
  e.sharded_grad_pass_bytes_per_param = {
      8, std::string(kDeepSpeedPipe) +
             "runtime/zero/: ZeRO-2/3 reduce every micro-batch's gradients as the backward makes them; with "
             "contiguous_gradients (zero/config.py default True) each .grad is first copied into the bucket "
             "(stage_1_and_2.py reduce_independent_p_g_buckets_and_remove_grads, stage3.py "
             "__add_grad_to_ipg_bucket: new_grad_tensor.copy_, read 2 + write 2), and the bucket is pre-divided "
             "by DP before its reduction (stage_1_and_2.py average_tensor tensor.div_, comm/"
             "coalesced_collectives.py reduce_scatter_coalesced tensor_partition_flat_buffer.div_: read 2 + "
             "write 2); ZeRO-3's interleaving torch.cat of the per-rank chunks before that division is not "
             "counted"};
  e.grad_accumulates_in_autograd = {
      true, std::string(kDeepSpeedPipe) +
                "runtime/zero/stage_1_and_2.py: the gradient hooks are registered only 'if "
                "self.partition_gradients or self.overlap_comm' (overlap_comm defaults to stage == 3, "
                "zero/config.py overlap_comm_valid), and reduce_ready_partitions_and_remove_grads does nothing "
                "off the accumulation boundary without partition_gradients: ZeRO-0/1 gradients stay in .grad "
                "over the micro-batches; ZeRO-2's copy_grads_in_partition keeps the rank's partition there and "
                "clears the rest; the pipe engine runs torch.autograd.backward (pipe/engine.py "
                "_exec_backward_pass). PyTorch torch/csrc/autograd/functions/accumulate_grad.h: once .grad "
                "exists, 'variable_grad += new_grad'"};
  e.reduce_buffers_zero12_overlap = {
      2, at(kDeepSpeed,
            "deepspeed/runtime/zero/stage_1_and_2.py setup_buckets: with contiguous_gradients (config.py default "
            "True) 'buf_0 = torch.empty(int(self.reduce_bucket_size), dtype=self.dtype)', and with overlap_comm "
            "'Use double buffers': buf_1 of the same size")};
  e.reduce_buffers_zero12 = {1, at(kDeepSpeed,
                                   "deepspeed/runtime/zero/stage_1_and_2.py setup_buckets: buf_0 only "
                                   "(overlap_comm false, config.py overlap_comm_valid: its default for "
                                   "stages 1-2)")};
  e.reduce_buffers_zero3 = {1, at(kDeepSpeed,
                                  "deepspeed/runtime/zero/stage3.py: 'bucket.buffer = "
                                  "torch.empty(self.reduce_bucket_size, dtype=...)', one per dtype")};
  e.gathered_units_in_flight = {2, at(kDeepSpeed,
                                      "deepspeed/runtime/zero/partitioned_param_coordinator.py fetch_sub_module: "
                                      "the sub-module computing and the ones prefetched (prefetch_bucket_size 5e7 "
                                      "parameters, stage3_max_live_parameters 1e9 does not bind): taken as two "
                                      "layers' parameters")};
  e.optimizer_offload = {true, at(kDeepSpeedPipe,
                                  "runtime/zero/offload_config.py DeepSpeedZeroOffloadOptimizerConfig device: "
                                  "none|cpu|nvme; runtime/zero/stage_1_and_2.py cpu_offload (ZeRO 1-2), stage3.py "
                                  "offload_optimizer (ZeRO-3), both with DeepSpeedCPUAdam")};
  e.offload_grad_d2h_bytes_per_param = {
      4, at(kDeepSpeedPipe,
            "runtime/zero/stage_1_and_2.py async_inplace_copy_grad_to_fp32_buffer_from_gpu: src_tensor.float(), "
            "then dest_tensor.copy_(src, non_blocking=True) into the host fp32 gradient partition; stage3.py "
            "partition_grads: fp32_grad_tensor.copy_(grad_buffer.float())")};
  e.offload_param_h2d_bytes_per_param = {
      2, at(kDeepSpeedPipe,
            "runtime/zero/stage_1_and_2.py step: bit16_partitions[partition_id].data.copy_(fp32_partition.data), a "
            "blocking host -> device copy that PyTorch converts to the 16-bit dtype on the host first "
            "(aten/src/ATen/native/cuda/Copy.cu copy_kernel_cuda: blocking copies convert on the CPU)")};
  e.offload_cpu_optimizer_speed = {1, at(kDeepSpeedPipe,
                                         "ops/adam/cpu_adam.py DeepSpeedCPUAdam (csrc/adam/cpu_adam_impl.cpp, "
                                         "AVX512/AVX256): the optimizer the host rate is measured with")};
  e.offload_grad_shard_to_host = {true, at(kDeepSpeedPipe,
                                           "runtime/zero/stage_1_and_2.py copy_grads_in_partition returns before "
                                           "allocating grads_in_partition on the device when cpu_offload: the "
                                           "partition's gradients go to single_partition_of_fp32_groups[i].grad "
                                           "(host, fp32); stage3.py likewise (fp32_partitioned_groups_flat grad)")};
  e.moe_expert_parallel_comm_overlap = {
      false, "no expert-parallel all-to-all overlap argument in microsoft/Megatron-DeepSpeed @ f4157bea69 "
             "megatron/arguments.py (read for its launch table)"};
  e.async_checkpoint = {false, "DeepSpeed saves with torch.save (Nebula's asynchronous save is Azure ML only)"};
  e.tp_comm_overlap = {false, "no TP communication overlap argument in microsoft/Megatron-DeepSpeed @ f4157bea69 "
                              "megatron/arguments.py (read for its launch table)"};
  e.eager_layer_norm = {
      false, "DeepSpeed has no norm of its own; the rows' models are Megatron's under DeepSpeed (Megatron-DeepSpeed): "
             "megatron/model/__init__.py imports MixedFusedLayerNorm as LayerNorm, fused_mix_prec_layer_norm_cuda "
             "(megatron/model/fused_layer_norm.py; read at bigscience-workshop/Megatron-DeepSpeed @ ae6277f5, a fork "
             "of microsoft/Megatron-DeepSpeed)"};
  // The ZeRO optimizer's step over its shard of 16-bit gradients besides Adam's own 30 bytes
  // (read at deepspeedai/DeepSpeed @ edaa7221, 0.19.6, runtime/zero/stage_1_and_2.py step; stage3.py
  // step makes the same norm, cast, unscale and copy): the overflow check (bf16 too:
  // precision_config.py DeepSpeedBF16Config.check_grad_overflow = True) reads each gradient
  // through _has_inf_or_nan (float() 2 + 4, isnan 4 + 1, isinf 4 + 1, logical_or 2 + 1,
  // float() 1 + 4, max 4: 28 bytes); scaled_global_norm -> get_grad_norm_direct casts to double
  // for the norm (2 + 8, then 8 read: 18); the shard is cast to fp32 (.to: 2 + 4);
  // unscale_and_clip_grads multiplies it in place (4 + 4); the fp32 partition is read again
  // for the 16-bit copy (4; its 2-byte write is Adam's). 64 bytes: 16 passes of 4 bytes.
  e.step_grad_shard_passes = {16, at(kDeepSpeed,
                                     "deepspeed/runtime/zero/stage_1_and_2.py step: check_overflow "
                                     "(_has_inf_or_nan, 28 B), scaled_global_norm (g.double() norm, 18 B), "
                                     "flat partition .to(fp32) (6 B), unscale_and_clip_grads mul_ (8 B), "
                                     "bit16 copy_ from the fp32 partition (4 B read): 64 B per shard parameter")};
  e.launch = deepspeed_launch();
  return e;
}

// DeepSpeed as the 2021 measurements ran it (ZeRO-3 arrived in 0.3.12, 2021-03; the
// list collectives went in 0.5.5, the device syncs and per-parameter collectives in 0.6.0).
FrameworkEntry deepspeed_2021() {
  FrameworkEntry e = deepspeed();
  e.id = Framework::deepspeed_2021;
  e.name = "deepspeed-2021";
  e.versions = std::string(kDeepSpeed2021) + " on PyTorch 1.8";
  e.async_checkpoint = {false, "DeepSpeed 0.3-0.5 (2021) saves with torch.save, synchronously"};
  e.sharded_grad_pass_bytes_per_param = {
      0, at(kDeepSpeed2021, "not read from this version's code: its reduction copies are the list collectives' "
                            "(zero3_list_collectives)")};
  e.eager_layer_norm = {false, "the 2021 Megatron-LM model under DeepSpeed 0.3: megatron/model/fused_layer_norm.py "
                               "MixedFusedLayerNorm (fused_mix_prec_layer_norm_cuda; NVIDIA/Megatron-LM @ b84d7a9012)"};
  e.launch = {};  // a past version: its launch is deepspeed's (today's)
  e.optimizer_offload.source = at(kDeepSpeed2021,
                                  "deepspeed/runtime/zero/stage2.py cpu_offload (ZeRO-Offload, in DeepSpeed since "
                                  "0.3.0, 2020-09), with DeepSpeedCPUAdam");
  e.offload_grad_d2h_bytes_per_param.source = at(kDeepSpeed2021,
                                                 "deepspeed/runtime/zero/stage2.py "
                                                 "async_inplace_copy_grad_to_fp32_buffer_from_gpu: "
                                                 "param.grad...narrow(...).float() copied to the host fp32 partition");
  e.offload_param_h2d_bytes_per_param.source = at(kDeepSpeed2021,
                                                  "deepspeed/runtime/zero/stage2.py step: "
                                                  "optimizer.step(fp16_param_groups=...): DeepSpeedCPUAdam writes the "
                                                  "16-bit parameters and copies them to the device");
  e.grad_bucket_params = {5e8, at(kDeepSpeed2021,
                                  "deepspeed/runtime/zero/constants.py "
                                  "ZERO_OPTIMIZATION_REDUCE_BUCKET_SIZE_DEFAULT = 500000000")};
  e.param_persistence_threshold = {1e5, at(kDeepSpeed2021,
                                           "deepspeed/runtime/zero/constants.py "
                                           "ZERO_OPTIMIZATION_PARAM_PERSISTENCE_THRESHOLD_DEFAULT = 100000; "
                                           "stage3.py persistent_parameters (ds_numel < threshold)")};
  e.prefetch_bucket_params = {5e7, at(kDeepSpeed2021,
                                      "deepspeed/runtime/zero/constants.py "
                                      "ZERO_OPTIMIZATION_PREFETCH_BUCKET_SIZE_DEFAULT = 50000000")};
  e.zero3_gather_unit = {GatherUnit::sub_module,
                         at(kDeepSpeed2021,
                            "deepspeed/runtime/zero/stage3.py PartitionedParameterCoordinator."
                            "fetch_sub_module: each parameter of the sub-module gathered on its own "
                            "(partition_parameters.py _allgather_param)")};
  e.zero3_gathers_per_microbatch = {2, at(kDeepSpeed2021,
                                          "deepspeed/runtime/zero/stage3.py post_sub_module_forward_function "
                                          "-> release_sub_module; pre_sub_module_backward_function -> "
                                          "fetch_sub_module")};
  e.zero3_gathers_per_microbatch_with_pp = {2, at(kDeepSpeed2021, "PipelineEngine runs ZeRO 0-2 only (no gathers)")};
  e.grad_reduce_bytes = {2, at(kDeepSpeed2021,
                               "deepspeed/runtime/zero/stage3.py FP16_DeepSpeedZeroOptimizer_Stage3: "
                               "gradients reduced in the fp16 ipg buffer (bfloat16 came with 0.6.0)")};
  e.blocking_p2p = {true, at(kDeepSpeed2021, "deepspeed/runtime/pipe/p2p.py send/recv: async_op = False; dist.broadcast")};
  e.max_zero_stage_with_pp = {2, at(kDeepSpeed2021,
                                    "deepspeed/runtime/pipe/engine.py: no stage assert; _exec_backward_pass "
                                    "runs overlapping_partition_gradients_reduce_epilogue for ZeRO-2")};
  e.zero3_max_reuse_distance = {1e9, at(kDeepSpeed2021,
                                        "deepspeed/runtime/zero/constants.py "
                                        "ZERO_OPTIMIZATION_MAX_REUSE_DISTANCE_DEFAULT = 1000000000; stage3.py "
                                        "release_sub_module keeps a parameter when _keep_for_later")};
  e.zero3_list_collectives = {true, at(kDeepSpeed2021,
                                       "deepspeed/runtime/zero/partition_parameters.py _allgather_param: "
                                       "torch.distributed.all_gather into world_size narrow()s of a flat tensor; "
                                       "_reduce_scatter_gradient: reduce_scatter from world_size narrow()s; "
                                       "PyTorch 1.8 ProcessGroupNCCL::allgather / reduce_scatter copy_ each of "
                                       "them out of (into) a flattened buffer; replaced by _all_gather_base in "
                                       "c0eeb69 (#1188, 0.5.5) and reduce_scatter_coalesced in 4912e0a (#1453, 0.6.0)")};
  e.bf16_grad_fold_bytes_per_param = {0, at(kDeepSpeed2021,
                                            "no BF16_Optimizer: fp16 only (bfloat16 and bf16_optimizer.py came "
                                            "with 0.6.0, 2022-02)")};
  e.zero3_blocking_fetch = {true, at(kDeepSpeed2021,
                                     "deepspeed/runtime/zero/partition_parameters.py _allgather_param: "
                                     "torch.cuda.synchronize() before each gather; stage3.py "
                                     "_synchronize_communication: comm_stream.synchronize(); "
                                     "torch.cuda.synchronize(); prefetch_next_sub_modules only when no gather "
                                     "is in flight (#1188: 'the async version is not async at all')")};
  // DeepSpeed 0.5.4 runtime/zero/stage2.py step (read at its tag v0.5.4), fp16: check_overflow
  // always, _has_inf_or_nan as float(x.float().sum()) (2 + 4, then 4 read: 10 bytes);
  // get_grad_norm_direct's g.double().norm(2) (18); flatten of the per-parameter gradients and
  // .to(fp32) (2 + 2, 2 + 4: 10); unscale_and_clip_grads' mul_ (8); the fp32 read of the fp16
  // copy (4). 50 bytes: 12.5 passes of 4 bytes.
  e.step_grad_shard_passes = {12.5, at(kDeepSpeed2021,
                                       "deepspeed/runtime/zero/stage2.py step (v0.5.4): check_overflow "
                                       "(x.float().sum(), 10 B), get_grad_norm_direct (double norm, 18 B), "
                                       "flatten(...).to(fp32) (10 B), unscale_and_clip_grads (8 B), fp16 copy_ "
                                       "from the fp32 partition (4 B read): 50 B per shard parameter")};
  return e;
}

// BigScience's fork of Megatron-DeepSpeed as the BLOOM (tr11) runs used it in 2022-02, on
// DeepSpeed 0.6: DeepSpeed's engine and pipeline, with the fork's fused-softmax check.
FrameworkEntry bigscience_megatron_deepspeed() {
  FrameworkEntry e = deepspeed();
  e.id = Framework::bigscience_megatron_deepspeed;
  e.name = "bigscience-megatron-deepspeed";
  e.versions = std::string(kBigScienceFork) + " on DeepSpeed 0.6";
  e.async_checkpoint = {false, std::string(kBigScienceFork) + " on DeepSpeed 0.6 saves with torch.save, synchronously"};
  e.eager_layer_norm = {false, std::string(kBigScienceFork) +
                                   " megatron/model/__init__.py: MixedFusedLayerNorm as LayerNorm "
                                   "(megatron/model/fused_layer_norm.py, fused_mix_prec_layer_norm_cuda)"};
  e.launch = {};  // a past version: its launch is deepspeed's (today's)
  e.p2p_sends_attention_mask = {
      true, std::string(kBigScienceFork) +
                " megatron/model/gpt_model.py GPTModelPipe: '# EmbeddingPipe returns attention mask as well', "
                "megatron/model/transformer.py ParallelTransformerLayerPipe.forward: 'Attention mask is an "
                "activation' -> 'return super().forward(*inputs, **kwargs), attention_mask'; pretrain_gpt.py "
                "get_batch_pipe -> megatron/utils.py get_ltor_masks_and_position_ids: att_mask_batch = 1 without "
                "--reset-attention-mask (train/tr11-200B-ml/tr11-200B-ml.slurm does not pass it): a 1 x 1 x s x s "
                "mask. DeepSpeed's engine (" + kDeepSpeedPipe +
                "runtime/pipe/engine.py _exec_send_activations): 'NCCL does not like to send torch.BoolTensor "
                "types, so cast the mask to half()', then 'for idx, buffer in enumerate(outputs): p2p.send(buffer, "
                "self.next_stage)': meta, partition, mask, each a blocking send; _exec_send_grads: 'First two sends "
                "are partitioned gradient' (meta, partition; the bool mask has no grad). _send_tensor_meta runs "
                "only on the first send ('if self.dynamic_shape or self.first_output_send'): not a per-step cost"};
  e.softmax_batch_per_block_from_heads = {
      true, std::string(kBigScienceFork) +
                " megatron/model/fused_softmax.py FusedScaleMaskSoftmax.is_kernel_available: "
                "'batch_per_block = self.get_batch_per_block(sq, sk, b, np)' on a static method declared "
                "'def get_batch_per_block(b, np, sq, sk)' that returns "
                "'scaled_masked_softmax_cuda.get_batch_per_block(sq, sk, b, np)': the kernel's key length "
                "is the heads per rank (from 9f5f5d4c 2021-10-21, fixed by 1cb76a64 2022-03-06); causal: "
                "'if attn_batches % batch_per_block == 0: return True', else forward_torch_softmax"};
  return e;
}

FrameworkEntry fsdp() {
  FrameworkEntry e;
  e.id = Framework::fsdp;
  e.name = "fsdp";
  e.versions = kTorchtitan;
  e.grad_bucket_params = {0, at(kTorchtitan,
                                "FSDP2 reduce-scatters the gradients of one fully_shard unit "
                                "(one transformer block) at a time")};
  e.param_persistence_threshold = {0, at(kTorchtitan, "fully_shard shards every parameter of the unit")};
  e.prefetch_bucket_params = {0, at(kTorchtitan,
                                    "FSDP2 implicit prefetch: the next unit's all-gather is issued "
                                    "while the current unit computes (one unit ahead)")};
  e.zero3_gather_unit = {GatherUnit::layer, at(kTorchtitan,
                                               "torchtitan/distributed/fsdp.py: fully_shard on every "
                                               "transformer_block of model.layers")};
  e.root_unit_outside_layers = {
      true, at(kTorchtitan9dec370,
               "parallelisms/parallelize_llama.py apply_fsdp: fully_shard on each transformer_block, then "
               "fully_shard(model) over the rest (tok_embeddings, norm, output); FSDP2 _fsdp_state.py: the root's "
               "pre-forward unshards it first, and its post-backward runs from _root_post_backward_final_callback "
               "(no forward input of the root needs a gradient); _lazy_init sets the root's post_forward_mesh_info = "
               "None, 'for the root, do not reshard after forward since for training, the parameters would be freed "
               "and all-gathered immediately'")};
  e.last_layer_kept_after_forward = {
      true, at(kTorchtitan9dec370,
               "parallelisms/parallelize_llama.py apply_fsdp without PP: 'do not reshard after forward for the last "
               "transformer block since FSDP would prefetch it immediately', reshard_after_forward = int(layer_id) < "
               "len(model.layers) - 1 (later torchtitan/distributed/fsdp.py keeps [norm, output] instead)")};
  e.zero3_gathers_per_microbatch = {2, at(kTorchtitan,
                                          "torchtitan/distributed/fsdp.py "
                                          "get_fsdp_reshard_after_forward_policy: 'default' -> "
                                          "reshard_after_forward = not pp_enabled")};
  e.zero3_gathers_per_microbatch_with_pp = {1, at(kTorchtitan,
                                                  "torchtitan/distributed/fsdp.py "
                                                  "get_fsdp_reshard_after_forward_policy: with PP, "
                                                  "reshard_after_forward = False")};
  e.pp_holds_units_unsharded_until_last_backward = {
      true, "PyTorch torch/distributed/pipelining/stage.py (as torchtitan's pipeline stages run): "
            "backward_maybe_with_nosync sets set_reshard_after_backward(False) and "
            "set_requires_gradient_sync(False) on the stage's FSDPModule before every micro-batch's backward, so "
            "the units gathered for the first forward (reshard_after_forward False with PP, above) stay unsharded "
            "and each backward accumulates the unsharded gradient (FSDPParam.to_accumulated_grad_if_needed: in "
            "reduce_dtype, fp32); perform_reduce_grad, the REDUCE_GRAD action 'scheduled after all microbatches W, B "
            "actions', sets them back to True and runs every param group's post_backward: one reduce-scatter per "
            "unit after the stage's last backward, then the reshard; schedules.py _add_reduce_grad puts one "
            "REDUCE_GRAD per stage_index, so each of an interleaved rank's stages (trainsim's chunks) reduces after "
            "its own last B or W"};
  e.zero2_gathers_per_unit = {
      true, "PyTorch torch/distributed/fsdp/api.py ShardingStrategy.SHARD_GRAD_OP (FSDP1, as Composer / llm-foundry "
            "run it): 'this strategy unshards before the forward, does not reshard them after the forward, and only "
            "reshards them after the backward computation'; each FSDP unit's gradients are reduce-scattered by its "
            "post-backward hook (_post_backward_hook), and no all-gather follows the optimizer step (the next "
            "forward's pre-forward unshard gathers the updated shards). FSDP2: fully_shard(reshard_after_forward="
            "False), torchtitan fsdp_reshard_after_forward 'never'"};
  e.grad_reduce_bytes = {4, at(kTorchtitan, "torchtitan/config/configs.py mixed_precision_reduce = 'float32'")};
  e.blocking_p2p = {false, at(kTorchtitan,
                              "torch/distributed/pipelining/schedules.py _batch_p2p: "
                              "dist.batch_isend_irecv")};
  e.max_zero_stage_with_pp = {3, at(kTorchtitan,
                                    "torchtitan parallelize: pipeline stages each wrapped with "
                                    "fully_shard (FSDP + PP, as Llama 3 trained)")};
  e.sharded_collectives_ring_only = {true, kNccl};
  e.softmax_batch_per_block_from_heads = {false, at(kTorchtitan,
                                                    "no Megatron fused softmax: attention is PyTorch SDPA "
                                                    "(flash or memory-efficient kernels)")};
  e.bf16_grad_fold_bytes_per_param = {0, at(kTorchtitan,
                                            "FSDP2 MixedPrecisionPolicy: each unit's gradients are "
                                            "reduce-scattered as its backward ends (priced as the reduction)")};
  e.grad_reduce_after_pipeline = {false, at(kTorchtitan,
                                            "FSDP2 reduce-scatters each unit's gradients as its backward "
                                            "ends, inside the pipeline schedule")};
  e.p2p_partitioned_over_tp = {false, at(kTorchtitan,
                                         "torch/distributed/pipelining/stage.py: each stage sends its "
                                         "whole output tensors")};
  e.sharded_grad_pass_bytes_per_param = {
      14, "PyTorch FSDP1 (torch 2.1, as Composer / llm-foundry run it) torch/distributed/fsdp/_runtime_utils.py "
          "_post_backward_hook: flat_param.grad.to(handle._reduce_dtype), bf16 -> fp32 (read 2 + write 4 bytes "
          "per parameter; mixed precision reduce_dtype fp32, as grad_reduce_bytes), then "
          "algorithms/_comm_hooks/default_hooks.py reduce_scatter_hook: grad.div_(gradient_predivide_factor) "
          "on the unsharded fp32 gradient (read 4 + write 4) before dist.reduce_scatter_tensor. FSDP2 "
          "(torch/distributed/_composable/fsdp/_fsdp_collectives.py) streams as much: foreach_reduce's copy-in "
          "(chunk_cat into the fp32 reduce-scatter input, 2 + 4) and foreach_all_gather_copy_out on the compute "
          "stream (split_with_sizes_copy out of the all-gather buffer, 2 + 2, in forward and again in backward)"};
  e.schedules_with_pp = {{PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved,
                          PipelineSchedule::zero_bubble_h1, PipelineSchedule::zero_bubble_v},
                         at(kTorchtitan,
                            "torchtitan/distributed/pipeline_parallel.py: get_schedule_class("
                            "pipeline_parallel_schedule) from torch/distributed/pipelining/schedules.py "
                            "(ScheduleGPipe, Schedule1F1B, ScheduleInterleaved1F1B, "
                            "ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble: its stages placed in a V, "
                            "style 'v' for ScheduleZBVZeroBubble and ScheduleDualPipeV in pipeline_llm)")};
  e.interleaved_microbatch_groups = {
      MicrobatchGrouping::torch_rounds,
      "PyTorch torch/distributed/pipelining/schedules.py ScheduleInterleaved1F1B: number_of_rounds = max(1, "
      "n_microbatches // pp_group_size), microbatches_per_round = n_microbatches // number_of_rounds (ValueError "
      "unless it divides), forward_stage_index (step // microbatches_per_round) % n_local_stages; _get_warmup_ops: "
      "(n_local_stages - 1) * microbatches_per_round + 2 * (pp_group_size - 1 - rank), capped at m * v"};
  e.pipeline_split_edge_layers = {
      1, at(kTorchtitan,
            "torchtitan/config/configs.py pipeline_parallel_first_stage_less_layers = 1 and "
            "pipeline_parallel_last_stage_less_layers = 1; torchtitan/distributed/pipeline_parallel.py "
            "generate_llm_fqn_per_model_part: num_layers + input_weight + output_weight spread over the stages, "
            "layers_per_stage = effective // num_stages, the first effective % num_stages stages one more, the "
            "first stage input_weight fewer (tok_embeddings), the last output_weight fewer (norm, lm_head)")};
  e.default_chunks_per_stage = {
      2, at(kTorchtitan,
            "torchtitan/distributed/pipeline_parallel.py: without pipeline_parallel_layers_per_stage, "
            "'For multi-stage schedules, default is 2 virtual stages per rank'")};
  e.distributed_optimizer = {false, at(kTorchtitan,
                                       "no Megatron distributed optimizer: the optimizer states are "
                                       "sharded with the parameters by fully_shard (plan.zero_stage)")};
  e.default_zero_stage = {3, at(kTorchtitan,
                                "PyTorch torch/distributed/fsdp/api.py: ShardingStrategy.FULL_SHARD is FSDP1's default "
                                "sharding_strategy; FSDP2 fully_shard(reshard_after_forward=True) by default")};
  e.zero_stages = {{0, 2, 3}, at(kTorchtitan,
                                 "PyTorch FSDP1 torch/distributed/fsdp/api.py ShardingStrategy: NO_SHARD (0), "
                                 "SHARD_GRAD_OP (2), FULL_SHARD (3), no optimizer-only sharding; FSDP2 "
                                 "fully_shard(reshard_after_forward=False (2) / True (3)), "
                                 "torchtitan/distributed/fsdp.py get_fsdp_reshard_after_forward_policy")};
  // torchtitan clips every step (max_norm 1.0): get_total_norm reads the sharded fp32
  // gradients once (foreach norm) and clip_grads_with_norm_ multiplies them in place by the
  // clamped coefficient unconditionally (foreach_mul_, no host sync on the branch): 4 + 8 bytes.
  // zero_grad sets them to None (no pass); the fused AdamW is Adam's own 30 bytes.
  e.step_grad_shard_passes = {3, at(kTorchtitan,
                                    "torchtitan/distributed/utils.py clip_grad_norm_: "
                                    "torch.nn.utils.get_total_norm (read) then clip_grads_with_norm_ "
                                    "(_foreach_mul_, read and write) on the sharded fp32 gradients; "
                                    "torchtitan/config/configs.py max_norm = 1.0; "
                                    "components/optimizer/optimizer.py implementation = 'fused'")};
  e.context_parallel = {true, at(kTorchtitan,
                                 "torchtitan/distributed/context_parallel/api.py (parallelism.context_parallel_degree, "
                                 "PyTorch's experimental context_parallel ring attention)")};
  e.pipeline_keeps_microbatch_tensors = {
      true, "PyTorch torch/distributed/pipelining/stage.py (late 2024: after #138504, before #164329): "
            "_prepare_forward_infra makes one receive buffer per chunk_id in range(num_microbatches) on a "
            "non-first stage, _create_grad_recv_info one gradient receive buffer per micro-batch on a non-last "
            "stage; forward_one_chunk appends every output to output_chunks, and stage_backward leaves each "
            "input's .grad, until clear_runtime_states() at the start of the next step(); torchtitan 9dec370 "
            "builds its stages with PipelineStage (parallelisms/pipeline_llama.py) and loss_parallel keeps the "
            "last stage's logits vocabulary-sharded"};
  e.context_parallel_impl = {
      CpImplementation::torch_experimental,
      at(kTorchtitan9dec370,
         "train.py: context_parallel(cp_mesh, buffers=[input_ids, labels, freqs_cis]) after "
         "set_rotate_method(experimental.context_parallel_rotate_method, default 'allgather', config_manager.py); "
         "PyTorch torch/distributed/tensor/experimental/_attention.py (torch 2.6): _templated_ring_attention runs "
         "one SDPA call per step (step 0 causal, then half blocks), _AllGatherRotater all-gathers the local "
         "[K|V] once at step 0, _AllToAllRotater permute_tensor each step; _SDPAMerger.step converts out and lse "
         "to fp32 (convert_to_f32 True) and merges every step (partial steps torch.cat the halves); "
         "_templated_ring_attention_backward: grad_key/grad_value zeros in fp32, dkv_rotater ALL_TO_ALL "
         "exchanging torch.cat([grad_key, grad_value]) every step, the last next_buffer() after the loop; "
         "models/llama/model.py repeat_kv before F.scaled_dot_product_attention: SDPA, hence the ring, gets "
         "K and V at n_heads")};
  e.grad_buffer_bytes = {4, at(kTorchtitan,
                               "FSDP2 fully_shard keeps each parameter's sharded fp32 gradient "
                               "(MixedPrecisionPolicy reduce_dtype float32: the reduce-scatter output is the "
                               "sharded gradient in fp32); FSDP1 _post_backward_hook likewise casts to "
                               "_reduce_dtype before reduce_scatter_tensor")};
  e.gathered_units_in_flight = {2, at(kTorchtitan,
                                      "FSDP2 implicit prefetch: the unit computing and the next one's all-gather "
                                      "(one unit ahead, forward and backward); FSDP1 limit_all_gathers=True allows "
                                      "two all-gathers in flight (torch/distributed/fsdp/_runtime_utils.py "
                                      "_FreeEventQueue(_max_num_inflight_all_gathers=2))")};
  e.unsharded_grad_bytes_per_param = {
      6, at(kTorchtitan,
            "torch/distributed/_composable/fsdp/_fsdp_collectives.py foreach_reduce: the unit's unsharded bf16 "
            "gradients (2 bytes) are copied into the fp32 reduce-scatter input (chunk_cat, 4 bytes) before "
            "reduce_scatter_tensor; both alive until the copy ends. FSDP1 _post_backward_hook: "
            "flat_param.grad.to(_reduce_dtype), the same 2 + 4")};
  e.optimizer_offload = {false, at(kTorchtitan,
                                   "no optimizer-only offload: FSDP1 CPUOffload(offload_params=True) and FSDP2 "
                                   "OffloadPolicy move the parameters, gradients and optimizer step together "
                                   "(torchtitan training.enable_cpu_offload)")};
  e.fsdp_mixed_precision = {true, "composer/distributed/mosaic_parallelism.py get_mixed_precision (mosaicml/composer "
                                  "@ 6405188805): 'DEFAULT', 'PURE', 'FULL' (llm-foundry's fsdp_config.mixed_precision)"};
  e.fsdp_pure = {
      {2, 4, 2, 2},
      "composer get_mixed_precision 'PURE': MixedPrecision(param_dtype, reduce_dtype and buffer_dtype all the compute "
      "dtype, bf16). PyTorch FSDP1 torch/distributed/fsdp/_runtime_utils.py _post_backward_hook: the bf16 gradient "
      "already has _reduce_dtype (no .to() copy), reduce_scatter_hook grad.div_(gradient_predivide_factor) in place "
      "(read 2 + write 2 bytes per parameter) then dist.reduce_scatter_tensor in bf16 (2 bytes); the unit's unsharded "
      "gradient is the bf16 one alone (2 bytes); parameters gathered in bf16 (2). The sharded gradient is cast back "
      "to the fp32 parameter's dtype after the reduction (keep_low_precision_grads False): kept gradients stay fp32"};
  e.fsdp_full = {
      {4, 14, 4, 4},
      "composer get_mixed_precision 'FULL': MixedPrecision() with no dtypes, so FSDP gathers the fp32 parameters (4 "
      "bytes, and 4 per gathered parameter in memory) and reduce-scatters fp32 gradients (4); autocast casts each "
      "weight to bf16 inside the op, whose backward (ToCopyBackward) writes the fp32 gradient (read 2 + write 4), "
      "then reduce_scatter_hook grad.div_ on it (4 + 4): 14 bytes per parameter as the standard policy; the unit's "
      "unsharded gradient is fp32 (4). Autocast's forward weight casts (4 + 2 per parameter, again in the "
      "recomputed forward) are not priced"};
  e.sharded_param_gather_bytes = {2, at(kTorchtitan,
                                        "FSDP2 MixedPrecisionPolicy param_dtype bfloat16 "
                                        "(training.mixed_precision_param): the all-gather runs in bf16; FSDP1 "
                                        "MixedPrecision(param_dtype=bf16) likewise (composer DEFAULT and PURE)")};
  e.moe_expert_parallel_comm_overlap = {
      false, "no expert-parallel all-to-all overlap option in torchtitan's job config (pytorch/torchtitan @ "
             "b5bcd76c66 torchtitan/config/configs.py, read for its launch table)"};
  e.async_checkpoint = {true, "torch.distributed.checkpoint.async_save (PyTorch 2.3; torchtitan checkpoint.async_mode)"};
  e.tp_comm_overlap = {true, "pytorch/torchtitan @ b5bcd76c66 torchtitan/config/configs.py "
                             "compile.enable_async_tensor_parallel (async TP: the TP collectives decomposed and "
                             "overlapped with the matmuls, under torch.compile), what its launch line writes"};
  e.tp_overlap = {
      TpOverlap::decomposed_matmuls,
      at(kTorchtitan9dec370,
         "parallelisms/parallelize_llama.py apply_tp: enable_async_tp sets torch._inductor.config._micro_pipeline_tp "
         "and enable_symm_mem_for_group(tp group), and needs training.compile. PyTorch "
         "torch/_inductor/fx_passes/micro_pipeline_tp.py: fuse_all_gather_matmul (the gathered tensor the A operand "
         "of mm/_scaled_mm) and fuse_matmul_reduce_scatter (the reduce-scatter input straight from one mm, one "
         "user); the backward reduce-scatters are not matched ('in the backward graph, the reduce-scatters are "
         "receiving as input the addition of various scaled_mms', pytorch PR #149946 review). "
         "torch/distributed/_symmetric_memory/__init__.py _pipelined_all_gather_and_consume: the local shard "
         "copied into the symmetric buffer and a barrier before the first matmul ('giving up the chance to overlap "
         "mv and b'), then for each peer copy_() (cudaMemcpyAsync, the copy engine) and the piece's mm on two "
         "alternating streams; _pipelined_produce_and_all2all: each peer's chunk produced, pulled, then the own "
         "chunk and torch.sum over the tp partials")};
  e.sp_input_regathered_for_weight_grad = {
      false, at(kTorchtitan9dec370,
                "parallelisms/parallelize_llama.py apply_tp: 'attention' and 'feed_forward' take "
                "PrepareModuleInput(input_layouts Shard(1), desired Replicate()): the all-gather is an autograd "
                "op whose gathered output wq/wk/wv and w1/w3 save; its backward is the reduce-scatter of the input "
                "gradient, the rowwise output's the all-gather of the output gradient")};
  e.fp8_tp_all_gather = {
      true, at(kTorchtitan9dec370,
               "apply_tp with float8: Float8ColwiseParallel, Float8RowwiseParallel, PrepareFloat8ModuleInput; "
               "pytorch/ao @ eab345c torchao/float8/float8_tensor_parallel.py: _prepare_input_fn casts the input "
               "(hp_tensor_to_float8_dynamic) before redistribute to Replicate (the all-gather moves e4m3); "
               "_prepare_output_fn redistributes the rowwise output (16-bit reduce-scatter) then "
               "NoopFwToFloat8BwDynamic ('fwd noop bwd cast'): the output gradient is cast before its backward "
               "all-gather")};
  e.fp8_param_gather = {
      Fp8ParamGather::fully_sharded,
      at(kTorchtitan9dec370,
         "float8.py: Float8LinearConfig(enable_fsdp_float8_all_gather=dp_shard_enabled and "
         "float8.enable_fsdp_float8_all_gather), every Linear but 'output'; pytorch/ao @ eab345c "
         "torchao/float8/fsdp_utils.py WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather casts the local shard "
         "to FP8 (returns float8_tensor._data) and fsdp_post_all_gather wraps the gathered data as a Float8Tensor: "
         "1 byte an element, one scale; config.py: 'enable_fsdp_float8_all_gather only supports tensorwise "
         "scaling granularity'")};
  e.megatron_cross_entropy = {false, "llm-foundry's MPT (the FSDP rows, llm_foundry.yaml notes) runs flash-attn's "
                                     "fused xentropy kernel (loss_fn fused_crossentropy): one pass over the 16-bit "
                                     "logits, which it keeps (flash_attn/ops/triton/cross_entropy.py "
                                     "CrossEntropyLossFunction: ctx.save_for_backward(logits, lse, labels))"};
  e.eager_layer_norm = {
      true, "llm-foundry's MPT (the FSDP rows): mosaicml/llm-foundry scripts/train/benchmarking/submit_benchmarks.py "
            "sets model.low_precision_layernorm True (@ 300cc5c58) / model.norm_type 'low_precision_layernorm' (@ "
            "b2a43a14, 5e85bd62), llmfoundry/models/layers/norm.py LPLayerNorm.forward: torch.nn.functional.layer_norm "
            "on the autocast dtype with autocast off (weight and bias: no_bias False by default). torchtitan's models "
            "use RMSNorm, which this value does not cover"};
  // torchtitan's Llama model code at 9dec370 (2024-12-26), what its benchmark tables of
  // 2024-12 ran (benchmarks/llama3_h100_202412_torchtitan.md: torch 1963fc8, torchtitan 9dec370).
  e.selective_recompute = {
      SelectiveRecompute::torchtitan_op,
      at(kTorchtitan9dec370,
         "train_configs/llama3_8b.toml activation_checkpoint mode 'selective', selective_ac_option 'op'; "
         "parallelisms/parallelize_llama.py _apply_ac_to_transformer_block: _save_list = {aten.mm, "
         "_scaled_dot_product_efficient_attention, _scaled_dot_product_flash_attention, "
         "reduce_scatter_tensor, abs, max}; _get_custom_policy: 'meta[mm_count_key] += 1' then "
         "'to_save = func in _save_list and not (func == aten.mm and meta[mm_count_key] % 2 == 0)', "
         "MUST_SAVE else PREFER_RECOMPUTE; selective_checkpointing_context_fn makes meta = defaultdict(int) per "
         "checkpointed block call: wq, wv, w1, w2 and the attention output saved, wk, wo, w3 and every "
         "elementwise op recomputed")};
  e.eager_model_ops = {
      true, at(kTorchtitan9dec370,
               "models/norms.py RMSNorm (norm_type 'rmsnorm', llama3_8b.toml): '_norm(x.float()).type_as(x) * "
               "self.weight', _norm = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps); models/llama/model.py "
               "apply_rotary_emb: view_as_complex(xq.float().reshape(...)) * freqs_cis, view_as_real, type_as; "
               "repeat_kv: unsqueeze, expand, reshape (a copy to n_heads); FeedForward: w2(F.silu(w1(x)) * w3(x)); "
               "h = x + attention(...), out = h + feed_forward(...)")};
  e.torch_compile = {true, at(kTorchtitan9dec370,
                              "parallelisms/parallelize_llama.py apply_compile: torch.compile(transformer_block, "
                              "fullgraph=True) for each block (training.compile); the embedding, final norm, "
                              "output layer and loss stay eager")};
  e.fp32_eager_cross_entropy = {
      true, at(kTorchtitan9dec370,
               "train.py loss_fn: torch.nn.functional.cross_entropy(pred.flatten(0, 1).float(), "
               "labels.flatten(0, 1)), not compiled ('compiling loss function causes CUDA errors')")};
  e.launch = torchtitan_launch();
  return e;
}

FrameworkEntry mindspeed() {
  // MindSpeed patches Megatron-Core for Ascend: the same schedules, buckets and overlaps.
  FrameworkEntry e = megatron_core();
  e.vocab_parallel = {false, "MindSpeed has no --enable-vocab-parallel"};
  e.ascend_only = {true, "Ascend/MindSpeed megatron_adaptor.py: it patches Megatron-Core onto torch_npu (Ascend's "
                         "PyTorch adapter) and its fused operators are NPU kernels (mindspeed.ops); no CUDA path"};
  e.cuda_base = {Framework::megatron_core,
                 "Ascend/MindSpeed @ 028de58c megatron_adaptor.py patches NVIDIA's Megatron-Core (its README pins "
                 "core_v0.12.1): on NVIDIA devices the same job runs on Megatron-Core itself"};
  e.id = Framework::mindspeed;
  e.name = "mindspeed";
  e.loss_check_syncs_host = {false, "MindSpeed-LLM's loss function not checked for a host read of the loss: counted as "
                                    "none (the host runs ahead across micro-batches)"};
  e.versions = "MindSpeed (Ascend) over Megatron-Core";
  e.gradient_accumulation_fusion.source =
      "Ascend/MindSpeed megatron_adaptor.py apex_adaptation: fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32 "
      "patched with mindspeed.ops.npu_matmul_add.npu_matmul_add_fp32 (on unless --no-gradient-accumulation-fusion, "
      "which the ModelLink / MindSpeed-LLM example launchers pass); Megatron's path: " +
      e.gradient_accumulation_fusion.source;
  e.moe_overlap_extra_warmup = {
      0, "Ascend/MindSpeed @ 028de58ca6 docs/features/megatron_moe/megatron-moe-alltoall-overlap-comm.md: "
         "--moe-alltoall-overlap-comm overlaps the all-to-alls inside each MoE layer's own forward and backward, "
         "not Megatron-Core's combined 1F1B: no extra warm-up forward"};
  e.interleaved_microbatch_groups.source =
      "MindSpeed patches Megatron-Core and keeps its schedules.py (taken as megatron-core's; the core release a "
      "MindSpeed version pairs with is not read here: before core_r0.10.0 it is megatron-lm's rule): " +
      e.interleaved_microbatch_groups.source;
  e.sharded_collectives_ring_only = {false,
                                     "HCCL (CANN) all-gather / reduce-scatter: ring, mesh, recursive halving-"
                                     "doubling, NHR and NB algorithms, chosen by size and rank count: the cost "
                                     "model's automatic choice"};
  e.layers_graph_captured = {false,
                             "MindSpeed trains in PyTorch eager on torch_npu (pretrain_gpt.py over Megatron-Core); the task sink "
                             "is MindSpore's graph mode (and torchair's graph compile), which it does not use"};
  e.reuse_fp32_param_saved_bytes = {
      2, "Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48 docs/zh/features/reuse-fp32-param.md "
         "(FP32 = BF16 + Residual: the fp32 copy is rebuilt from the bf16 parameters before the optimizer step): "
         "saves sizeof(bfloat16) x parameters with Float16OptimizerWithFloat16Params, sizeof(bfloat16) x "
         "parameters / DP with the distributed optimizer; mindspeed/features_manager/memory/reuse_fp32_param.py "
         "validate_args: dependency_check(args, 'bf16')"};
  e.fp8_weights_cached_per_step = {
      false, "MindSpeed runs Megatron's tensor_parallel Linears on torch_npu, not Transformer Engine's (TE is "
             "CUDA-only): no FP8 weight cache"};
  e.fp8_param_gather = {Fp8ParamGather::none, "no FP8 parameters: Transformer Engine's fp8_model_init is CUDA-only"};
  e.fp8_tp_all_gather = {false, "MindSpeed's Linears are Megatron's tensor_parallel layers on torch_npu "
                                 "(Transformer Engine is CUDA-only): 16-bit all-gathers"};
  e.transformer_engine_linears = {false, "MindSpeed runs Megatron's local layer spec on torch_npu: "
                                         "core/tensor_parallel/layers.py ColumnParallelLinear / RowParallelLinear "
                                         "(Transformer Engine is CUDA-only)"};
  e.fp8_linear_inputs_kept_in_fp8 = {false, "MindSpeed's Linears are Megatron's tensor_parallel layers on torch_npu "
                                            "(Transformer Engine is CUDA-only): no FP8 input copy"};
  e.moe_expert_parallel_comm_overlap = {
      true, "Ascend/MindSpeed @ 028de58ca6 docs/features/megatron_moe/megatron-moe-alltoall-overlap-comm.md: "
            "--moe-alltoall-overlap-comm (alltoall dispatcher, --moe-grouped-gemm), what its launch line writes"};
  e.async_checkpoint = {false, "no asynchronous save documented for MindSpeed (assumption)"};
  e.tp_comm_overlap_needs_sequence_parallel = {
      false, "Ascend/MindSpeed @ b07b45b75b docs/features/communication-over-computation.md: --use-ascend-coc "
             "overlaps the TP all-reduce as well (not Megatron's --tp-comm-overlap, whose assertion it does not meet)"};
  e.tp_comm_overlap = {true, "Ascend/MindSpeed @ b07b45b75b docs/features/communication-over-computation.md: "
                             "--use-ascend-coc replaces ColumnParallelLinear / RowParallelLinear's forward so "
                             "that the matmuls overlap their TP all-reduce / all-gather / reduce-scatter (not with "
                             "MoE models, not with --use-ascend-mc2); Transformer Engine's --tp-comm-overlap is "
                             "CUDA-only"};
  e.alibi_separate_bias_passes = {
      true, "aeeeeeep/ModelLink @ 390f0f0e modellink/model/transformer.py core_attention_forward (patched over "
            "megatron.legacy CoreAttention.forward by modellink/patchs/megatron_patch.py): with ALiBi, "
            "'q_trans = query_layer.transpose(0, 1).contiguous()', the same for K, then 'matmul_result = self.beta * "
            "self.alibi.matmul_result + torch.bmm(q_trans, k_trans) * (1.0 / self.norm_factor)': the bmm's output "
            "scaled in one pass and the cached (b x heads/TP, 1, s) bias (modellink/model/alibi.py, built once, "
            "without --square-alibi-mask / --fill-neg-inf) added in another; the scalar multiply's backward "
            "scales the score gradient, the add passes it through (the bias needs no gradient)"};
  e.eager_layer_norm = {
      true, "Ascend/MindSpeed @ 028de58c mindspeed/core/fusions/fused_layer_norm.py: the patched FusedLayerNorm "
            "(fused_layer_norm_affine, FastLayerNormFN) calls torch.nn.functional.layer_norm, torch_npu's own op"};
  e.launch = mindspeed_launch();
  return e;
}

// NeMo 1.x (the 24.07 container, NeMo-Framework-Launcher recipes) over Megatron-Core models:
// Megatron-Core's model, schedules and overlaps, with Apex's DistributedFusedAdam as the
// optimizer (optim.name distributed_fused_adam), which keeps its contiguous gradient buffer in
// grad_sync_dtype and reduce-scatters in it.
FrameworkEntry nemo() {
  constexpr const char* kLauncher =
      "NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/gpt3/20b_fp8_performance.yaml @ 1e46ac6c "
      "(and the other gpt3/*.yaml recipes)";
  constexpr const char* kApex =
      "NVIDIA/apex apex/contrib/optimizers/distributed_fused_adam.py";
  FrameworkEntry e = megatron_core();
  e.vocab_parallel = {false, "NeMo's Megatron-Core has no --enable-vocab-parallel (it is sail-sg's fork)"};
  e.id = Framework::nemo;
  e.name = "nemo";
  e.loss_check_syncs_host = {false, "NeMo's loss reduction (MaskedTokenLossReduction) not checked for a host read "
                                    "of the loss: counted as none (the host runs ahead across micro-batches)"};
  e.versions = std::string("NeMo 24.07 (NeMo 1.x) over Megatron-Core, ") + kApex;
  e.optimizer_offload = {false, std::string(kApex) +
                                    " DistributedFusedAdam keeps its state buckets on the device; the Megatron-Core "
                                    "of NeMo 24.07 predates HybridDeviceOptimizer (60007c93d3, 2025-02-14)"};
  e.moe_expert_parallel_comm_overlap = {
      false, "the Megatron-Core of NeMo 24.07 predates overlap_moe_expert_parallel_comm (NVIDIA/Megatron-LM "
             "ae1c88296f, 2025-08-01)"};
  e.moe_overlap_extra_warmup = {0, "the Megatron-Core of NeMo 24.07 predates the combined 1F1B (ae1c88296f)"};
  e.interleaved_microbatch_groups = {
      MicrobatchGrouping::megatron_2021,
      "the Megatron-Core of NeMo 24.07 (core 0.8) predates the tunable schedule (NVIDIA/Megatron-LM 4295be1a6c, "
      "2024-11-01, first in core_r0.10.0): its schedules.py groups p micro-batches, asserts m % p == 0 and runs "
      "every forward first when m == p (all_warmup_microbatches)"};
  e.async_checkpoint = {
      true, "NVIDIA/NeMo nemo/collections/nlp/parts/megatron_trainer_builder.py MegatronTrainerBuilder._plugins: "
            "exp_manager.checkpoint_callback_params.async_save wraps the mcore models' DistributedCheckpointIO in "
            "AsyncFinalizableCheckpointIO (the hydra path the launcher recipes drive; added by c2daa916b6, "
            "2024-05-15, present at r2.0.0rc1 579983fbfc, absent at v2.0.0rc0; that the 24.07 container carries "
            "it is not checked)"};
  e.eager_layer_norm.source =
      "NeMo 24.07 builds its GPT models from Megatron-Core's TE layers: " + e.eager_layer_norm.source;
  e.launch = {};  // launched by its own launcher (hydra configs), not by pretrain_gpt.py arguments
  e.grad_buffer_bytes = {2, std::string(kLauncher) +
                                ": 'optim: name: distributed_fused_adam ... contiguous_grad_buffer: True, "
                                "grad_sync_dtype: bf16'; " + kApex +
                                " _init_grad_buffer: 'self._grad_buffer = torch.zeros([buffer_size], "
                                "dtype=self.grad_sync_dtype)'"};
  // The recipes reduce in bf16 too (grad_sync_dtype), but pricing it moves the H100 family from
  // 8.8% to 9.3% MAPE (the GPT3-20B row +5.9% -> +12.4%): left at Megatron-Core's rule until the
  // DP reduction of these rows is understood (issue 14 report).
  e.grad_reduce_bytes = {0, std::string(kLauncher) +
                                ": grad_sync_dtype: bf16 names a bf16 reduce-scatter (" + kApex +
                                "); priced as Megatron-Core's (fp32 for bf16) until the H100 recipe rows' "
                                "DP reduction is modelled with it"};
  e.layers_graph_captured = {false,
                             "NVIDIA/NeMo nemo/collections/llm/gpt/model/base.py GPTConfig enable_cuda_graph = False "
                             "('When set to true, TransformerLayer blocks are wrapped with CUDA graph'); the 24.07 "
                             "launcher recipes (gpt3/*.yaml, llama/*.yaml) do not set it"};
  e.distributed_optimizer.source = std::string(kApex) +
                                   " DistributedFusedAdam: 'implements the ZeRO-2 algorithm', the optimizer state "
                                   "(StateBucket: fp32 params_shard with store_params, exp_avg, exp_avg_sq) sharded "
                                   "over the data-parallel group";
  e.fp8_weights_cached_per_step.source = "NeMo 24.07 builds its GPT models from Megatron-Core's TE layers and "
                                         "schedules: " + e.fp8_weights_cached_per_step.source;
  e.fp8_linear_inputs_kept_in_fp8.source =
      "NeMo 24.07 builds its GPT models from Megatron-Core's TE layers: " + e.fp8_linear_inputs_kept_in_fp8.source;
  e.transformer_engine_linears.source =
      "NeMo 24.07 builds its GPT models from Megatron-Core's TE layers: " + e.transformer_engine_linears.source;
  e.fp8_param_gather = {Fp8ParamGather::none, "not read from NeMo 24.07's code (model.fp8_params with Apex's DistributedFusedAdam): "
                               "refused until it is"};
  e.grad_buckets_first_stage_only = {false, std::string(kApex) + " buckets its gradients (bucket_cap_mb) on every "
                                                                 "stage: not read further"};
  e.param_gather_waited_in_forward = {false, std::string(kApex) + " overlap_param_sync has its own per-bucket "
                                                                  "hooks, not read: one gather beside the forwards"};
  return e;
}

// MindFormers (MindSpore Transformers) on MindSpore: the model is a static graph compiled by
// MindSpore (context.mode 0) in semi-automatic parallel mode; data, operator (model), pipeline
// and optimizer parallelism are inserted by the compiler, not written in the model code. Read
// at the release of its pretrain_llama2_7b.yaml, the 910B configuration the entry is for.
FrameworkEntry mindformers() {
  constexpr const char* kMf = "mindspore-lab/mindformers v1.5.0 (06e1af77d1, 2025-04-29)";
  constexpr const char* kMfConfig =
      "mindspore-lab/mindformers v1.5.0 (06e1af77d1) configs/llama2/pretrain_llama2_7b.yaml";
  // MindSpore's context API: set_auto_parallel_context's docstring (context.py) and set_context's
  // page (the same text in Chinese, mindspore.set_context.rst).
  constexpr const char* kMsContext = "mindspore-ai/mindspore @ b0b03870d6 mindspore/python/mindspore/context.py";
  constexpr const char* kMsSetContext =
      "mindspore-ai/mindspore @ 15b56f17bc docs/api/api_python/mindspore/mindspore.set_context.rst";
  constexpr const char* kMsDocs = "MindSpore docs (mindspore-ai/docs) docs/mindspore/source_en/features/parallel/";
  FrameworkEntry e;
  e.id = Framework::mindformers;
  e.name = "mindformers";
  e.versions = std::string(kMf) + " on MindSpore 2.6.0-rc1 and CANN 8.1.RC1 (its README's version table), graph "
                                  "mode (context.mode 0), jit_level default (O0 on Atlas A2 / 910B)";
  // Gradient and reduction dtype: MindSpore's gradient of a Parameter has the Parameter's dtype,
  // and MindFormers' Llama keeps its parameters in param_init_type.
  e.grad_buffer_bytes = {
      2, std::string(kMfConfig) +
             " model_config param_init_type: \"float16\" (pretrain_llama2_7b_bf16.yaml too, with compute_dtype "
             "bfloat16): the parameters, and so their gradients and the accumulation buffers (accu_grads, cloned "
             "from the parameters), are 16-bit; optimizer FP32StateAdamWeightDecay (mindformers/core/optim/optim.py "
             "334) keeps only its moments in fp32 ('the optimizer's state will be always initialized with float32')"};
  e.grad_reduce_bytes = {2, std::string(kMsContext) +
                                " set_auto_parallel_context: 'force_fp32_communication (bool): ... whether reduce "
                                "operators (AllReduce, ReduceScatter) are forced to use the fp32 data type ... "
                                "Default: False': the gradients are reduced in their own (16-bit) dtype"};
  // Buckets: the compiler fuses the gradient collectives up to a size threshold.
  e.grad_bucket_params = {
      64.0 * 1024 * 1024 / 2,
      std::string(kMsContext) +
          " set_auto_parallel_context comm_fusion: 'allreduce ... In auto mode, AllReduce fusion is configured by "
          "gradients size and the default fusion threshold is 64 MB'; 'reducescatter ... Config is same as "
          "allgather' (auto, 64 MB); reset_auto_parallel_context: 'fusion_threshold: 64': 64 MB (taken as 64 x 2^20 "
          "bytes) of 16-bit gradients. MindFormers groups the layers into fusion ids besides (mindformers/models/utils.py "
          "LayerSetting.set: set_comm_fusion over parallel_config.gradient_aggregation_group, default 4, without "
          "PP; id 2 for every layer with PP): a bucket never spans two ids"};
  // No ZeRO-3: the ZeRO-3 fields do not apply.
  e.param_persistence_threshold = {0, "no ZeRO-3 in MindFormers (zero_stages 0): parameters are not gathered per unit"};
  e.prefetch_bucket_params = {0, "no ZeRO-3 in MindFormers (zero_stages 0): no prefetch of gathered units"};
  e.zero3_gather_unit = {GatherUnit::whole_stage,
                         std::string(kMsDocs) +
                             "optimizer_parallel.md: optimizer parallelism gathers the sharded weights once a step "
                             "('performing the shared weight operation at the end of the iteration before the forward "
                             "start of the next iteration'), no per-unit ZeRO-3"};
  e.zero3_gathers_per_microbatch = {1, "no ZeRO-3 in MindFormers: optimizer parallelism gathers the weights once a step"};
  e.zero3_gathers_per_microbatch_with_pp = e.zero3_gathers_per_microbatch;
  e.distributed_optimizer = {
      true, std::string(kMfConfig) + " parallel.enable_parallel_optimizer: True; " + kMsDocs +
                "optimizer_parallel.md: 'the parameters are sliced into N copies according to data parallelism, "
                "and each card updates the parameters on the current card', gradients reduce-scattered and the "
                "weights all-gathered once a step (parallel_optimizer_config optimizer_level level1: weights and "
                "optimizer state sharded): as Megatron's distributed optimizer, plan.use_distributed_optimizer"};
  e.zero_stages = {{0}, std::string(kMsContext) +
                            " set_auto_parallel_context: enable_parallel_optimizer is MindSpore's only optimizer "
                            "sharding (plan.use_distributed_optimizer); no DeepSpeed-style ZeRO stages"};
  e.max_zero_stage_with_pp = {0, std::string(kMsContext) +
                                     " parallel_optimizer_config optimizer_weight_shard_size: 'If pipeline parallel is "
                                     "enabled, the numerical range is (0, device_num/stage]': optimizer parallelism "
                                     "runs with PP; no ZeRO stages"};
  // Pipeline: Send / Receive operators in the compiled graph, on the communication stream.
  e.blocking_p2p = {false, std::string(kMsDocs) +
                               "pipeline_parallel.md Basic Principle: 'each machine sends the result to the next machine "
                               "through the communication operator (Send) ... the next machine receives (Receive)': "
                               "graph operators on HCCL's stream, not host-blocking calls"};
  e.p2p_exchange_blocking = {false, std::string(kMsDocs) +
                                        "pipeline_parallel.md: Send and Receive are operators of the static graph "
                                        "ordered by the 1F1B scheduler; a stage waits for a Receive only where its "
                                        "output is consumed (no batched exchange both sides wait for, no device "
                                        "synchronize)"};
  e.p2p_overlap_interleaved = {false, "no overlap_p2p_comm option: MindSpore's Send / Receive always run on their own "
                                      "stream (p2p_exchange_blocking false)"};
  e.p2p_partitioned_over_tp = {false, std::string(kMsDocs) +
                                          "pipeline_parallel.md: each stage sends its output tensor as its operator "
                                          "strategy lays it out (no DeepSpeed-style partition and re-gather)"};
  e.schedules_with_pp = {{PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved},
                         std::string(kMsDocs) +
                             "pipeline_parallel.md: GPipe, 1F1B and interleaved pipeline schedulers "
                             "(set_auto_parallel_context pipeline_config pipeline_scheduler '1f1b' | 'gpipe', "
                             "pipeline_interleave with MindFormers' pp_interleave_num: " +
                             std::string(kMf) + " docs/feature_cards/Offset_Recompute.md); zero_bubble_v is in "
                             "later MindSpore releases' list, not read for 2.6"};
  e.interleaved_microbatch_groups = {
      MicrobatchGrouping::megatron_2021,
      "MindSpore's interleaved scheduler not read: taken as Megatron-LM 2021's groups of p (pipeline_parallel.md "
      "gives its figure, not its order)"};
  // Gradient reduction: not overlapped with the backward by default, never under PP.
  e.grad_reduce_after_pipeline = {
      true, std::string(kMsSetContext) +
                " ascend_config parallel_speed_up_json_path: 'enable_grad_comm_opt (bool): True enables "
                "the overlap of gradient dx computation with data-parallel gradient communication; not supported "
                "with LazyInline. Default False'; MindFormers builds pipeline models with @lazy_inline "
                "(mindformers/models/llama/llama.py 483) and puts every layer in one fusion id with PP "
                "(models/utils.py LayerSetting.set: set_comm_fusion(2)): the reduction follows the last micro-batch"};
  e.bf16_grad_fold_bytes_per_param = {0, std::string(kMfConfig) +
                                             ": micro-batch gradients accumulate into accu_grads of the parameters' "
                                             "dtype in the graph (no separate fp32 fold pass)"};
  e.sharded_collectives_ring_only = {false,
                                     "HCCL (CANN) all-gather / reduce-scatter: ring, mesh, recursive halving-"
                                     "doubling, NHR and NB algorithms, chosen by size and rank count: the cost "
                                     "model's automatic choice"};
  e.softmax_batch_per_block_from_heads = {
      false, std::string(kMf) + " mindformers/models/llama/llama_config.py use_flash_attention (FlashAttentionScore, "
                                "the CANN fused kernel; pretrain_llama2_7b.yaml sets it True); no Megatron fused "
                                "softmax"};
  e.context_parallel = {true, std::string(kMf) +
                                  " parallel_config.context_parallel (modules/transformer/transformer.py "
                                  "TransformerOpParallelConfig) with LlamaConfig use_ring_attention (ring attention)"};
  // Host: graph mode launches each kernel of the compiled graph from MindSpore's C++ runtime.
  e.layers_graph_captured = {
      false, std::string(kMsSetContext) +
                 " jit_config jit_level: 'default empty: O2 on Atlas training products, O0 on the "
                 "others' (Atlas A2 / 910B: O0), 'O0: ... kernel-by-kernel execution'; pretrain_llama2_7b_bf16.yaml "
                 "sets O1 (kernel by kernel too); only O2 sinks the whole graph to the device"};
  e.host_dispatch_per_kernel_s = {
      0, std::string(kMsSetContext) +
             " jit_level O0/O1 (the 910B default): the kernels of the compiled static graph are launched by "
             "MindSpore's C++ runtime with shapes and memory planned at compile time: no Python, no per-op "
             "dispatcher or caching allocator on the host; the launch itself is device.kernel_launch. Not measured "
             "beyond it: counted as 0"};
  e.optimizer_offload = {false, std::string(kMf) +
                                    " optimizers (mindformers/core/optim: AdamW, FP32StateAdamWeightDecay) step on "
                                    "the device; no optimizer-only CPU offload"};
  e.moe_expert_parallel_comm_overlap = {false, std::string(kMf) + ": no expert-parallel all-to-all overlap read "
                                                                   "from its code: refused until it is"};
  e.tp_comm_overlap_needs_sequence_parallel = {
      true, "MindSpore Transformers docs, feature 'Distributed Parallelism': fine_grain_interleave needs sequence "
            "parallelism (use_seq_parallel)"};
  e.tp_comm_overlap = {true, "MindSpore Transformers docs, feature 'Distributed Parallelism', multi-replica "
                             "parallelism: model_config fine_grain_interleave (e.g. 2) splits each layer's work into "
                             "copies scheduled so that one copy's TP communication overlaps another's compute; it "
                             "needs sequence parallelism (use_seq_parallel), Llama and DeepSeek models only "
                             "(https://www.mindspore.cn/mindformers/docs/en/dev/feature/parallel_training.html)"};
  e.async_checkpoint = {true, std::string(kMf) + " CheckpointMonitor async_save (mindformers/core/callback/"
                                                 "callback.py, MindSpore save_checkpoint(async_save=True))"};
  e.eager_layer_norm = {false, std::string(kMf) + " runs MindSpore, not PyTorch: its norms are MindSpore operators "
                                                  "compiled into the graph (graph mode), never PyTorch's layer_norm"};
  e.launch = {};  // launched by msrun with run_mindformer.py --config YAML, not by torchrun arguments
  return e;
}

// OpenBMB BMTrain as its README's 13B benchmark ran it (2022-03/04): its own ZeRO-3-like sharding
// of every transformer block (CheckpointBlock), always with activation checkpointing, fp16, one
// NCCL communicator over all ranks, no tensor or pipeline parallelism.
FrameworkEntry bmtrain() {
  constexpr const char* kBmt = "OpenBMB/BMTrain @ 0437a5a996 (2022-04-07, after 0.1.2)";
  const auto bmt = [&](const std::string& where) { return std::string(kBmt) + " " + where; };
  const std::string no_pipeline = bmt("bmtrain/ has no pipeline module (no pipeline parallelism at this commit)");
  FrameworkEntry e;
  e.id = Framework::bmtrain;
  e.name = "bmtrain";
  e.versions = std::string(kBmt) +
               ": CheckpointBlock / TransformerBlockList (bmtrain/block_layer.py), AdamOptimizer with loss scaling "
               "(bmtrain/optim/adam.py; its inf/nan check over the gradients is not priced)";
  e.grad_bucket_params = {0, bmt("bmtrain/block_layer.py CheckpointBlockContext.exit: one nccl.reduceScatter of the "
                                 "block's flat gradient buffer per CheckpointBlock (one transformer layer)")};
  e.param_persistence_threshold = {0, bmt("bmtrain/block_layer.py CheckpointBlock: every parameter of the block is "
                                          "partitioned into its flat storage; those outside blocks are "
                                          "DistributedParameters gathered at each use (bmtrain/parameter.py OpAllGather)")};
  e.prefetch_bucket_params = {
      0, bmt("bmtrain/synchronize.py wait_loader: CheckpointBlockContext.enter first synchronizes the host on "
             "config['load_event'], recorded on the calc stream at the previous block's enter, then issues its "
             "all-gather on config['load_stream']: one block ahead")};
  e.zero3_gather_unit = {GatherUnit::layer,
                         bmt("bmtrain/block_layer.py TransformerBlockList of CheckpointBlock, one per transformer "
                             "layer (example/models/gpt.py); CheckpointBlockContext.enter: nccl.allGather of the "
                             "block's flat storage into a full-size buffer")};
  e.zero3_gathers_per_microbatch = {
      2, bmt("bmtrain/block_layer.py OpTransformerBlockList.forward: block_ctx.enter(), the block, block_ctx.exit() "
             "(releases the parameters); OpTransformerBlockList.backward: block_ctx.enter() again")};
  e.zero3_gathers_per_microbatch_with_pp = {2, no_pipeline};
  e.grad_reduce_bytes = {2, bmt("bmtrain/block_layer.py CheckpointBlockContext.enter: _grad_buffer = "
                                "storage_type(val['total']), the parameters' own dtype (fp16); exit: "
                                "nccl.reduceScatter(_grad_buffer, local_param.grad.storage(), 'sum')")};
  e.blocking_p2p = {false, no_pipeline};
  e.max_zero_stage_with_pp = {-1, no_pipeline};
  e.sharded_collectives_ring_only = {
      true, std::string(kNccl) + "; BMTrain calls ncclAllGather / ncclReduceScatter through its own bindings "
                                 "(bmtrain/nccl/__init__.py)"};
  e.softmax_batch_per_block_from_heads = {false, bmt("no Megatron fused softmax: the model code's torch.nn.Softmax "
                                                     "(example/layers/attention.py)")};
  e.bf16_grad_fold_bytes_per_param = {0, bmt("fp16 only (bf16 came with 1.0.0, docs/UPDATE_1.0.0.md)")};
  e.grad_reduce_after_pipeline = {false, no_pipeline};
  e.p2p_partitioned_over_tp = {false, no_pipeline};
  e.sharded_grad_pass_bytes_per_param = {
      2, bmt("bmtrain/block_layer.py CheckpointBlockContext.enter with gradients enabled (the backward): the "
             "block's unsharded fp16 gradient buffer is allocated and .zero_()ed, 2 bytes written per parameter "
             "each micro-batch; exit adds an earlier micro-batch's gradient to the rank's partition only")};
  e.zero3_max_reuse_distance = {0, bmt("bmtrain/block_layer.py OpTransformerBlockList.backward: each block is "
                                       "entered once, its recomputed forward and its backward inside that gather")};
  e.zero3_list_collectives = {false, bmt("bmtrain/block_layer.py: nccl.allGather(storage, buffer) and "
                                         "nccl.reduceScatter(buffer, storage) on flat storages, no per-rank lists")};
  e.zero3_blocking_fetch = {
      false, bmt("bmtrain/synchronize.py wait_loader synchronizes the host on an event of the calc stream (the "
                 "previous block's start), not the device: each block's gather still runs under the block before "
                 "it, as a one-unit-ahead prefetch")};
  e.interleaved_microbatch_groups = {MicrobatchGrouping::megatron_2021, no_pipeline};
  e.schedules_with_pp = {{}, no_pipeline};
  e.distributed_optimizer = {false, bmt("no Megatron distributed optimizer: the optimizer steps each rank's "
                                        "partition of the blocks (plan.zero_stage 3)")};
  e.zero_stages = {{3}, bmt("bmtrain/block_layer.py CheckpointBlock shards every block's parameters, gradients and "
                            "optimizer state; no zero_level setting before 0.1.7 (its README: 2022/06/14 0.1.7, "
                            "'ZeRO-2 optimization is supported')")};
  e.default_zero_stage = {3, bmt("its only stage (zero_stages): every block sharded")};
  e.context_parallel = {false, bmt("no sequence or context parallelism")};
  e.grad_buffer_bytes = {2, bmt("bmtrain/block_layer.py CheckpointBlockContext.exit: the rank's gradient "
                                "partition local_param.grad = storage_type(partition_size), the parameters' fp16")};
  e.reduce_buffers_zero3 = {0, bmt("reduce-scatters the block's own gradient buffer: no bucket buffers")};
  e.gathered_units_in_flight = {2, bmt("the block computing and the next one gathered (wait_loader: one block "
                                       "ahead)")};
  e.unsharded_grad_bytes_per_param = {
      2, bmt("bmtrain/block_layer.py: the block's fp16 gradient buffer (enter) lives until its reduce-scatter "
             "on the load stream ends (exit: record_stream(config['load_stream']))")};
  // AdamOffloadOptimizer is the optimizer of the README's own usage (Part 3) and of
  // example/train.py at this commit; AdamOptimizer keeps the states on the device.
  e.optimizer_offload = {true, bmt("bmtrain/optim/adam_offload.py AdamOffloadOptimizer: fp32 master parameters and "
                                   "Adam moments in host memory (state exp_avg / exp_avg_sq / _param_fp32 on 'cpu'), "
                                   "the step on the host CPU (csrc/adam_cpu.cpp F_adam_cpu)")};
  e.offload_grad_d2h_bytes_per_param = {
      2, bmt("bmtrain/optim/adam_offload.py step: state['_grad_fp16'].copy_(param.grad, non_blocking=True), the "
             "rank's fp16 gradient partition into a pinned fp16 host buffer (no fp32 cast on the device)")};
  e.offload_param_h2d_bytes_per_param = {
      2, bmt("bmtrain/optim/adam_offload.py step: param.copy_(state['_param_fp16'], non_blocking=True) after "
             "F_adam_cpu writes the fp16 copy on the host (csrc/adam_cpu.cpp _mm512/_mm256_cvtps_ph)")};
  e.offload_cpu_optimizer_speed = {
      1, bmt("csrc/adam_cpu.cpp adam_cpu_launcher: one fused AVX512 / AVX256 pass per element (fp16 gradient in, "
             "fp32 master, moments and fp16 copy out) under at::parallel_for, the design of DeepSpeedCPUAdam whose "
             "rate the hardware file gives. Not priced: its threads are torch's intra-op threads, which torchrun "
             "and torch.distributed.launch (the README's launchers) set to OMP_NUM_THREADS=1 per process unless "
             "the user sets it: 8 one-thread ranks a server, not one process over all cores")};
  e.offload_grad_shard_to_host = {false, bmt("bmtrain/block_layer.py CheckpointBlockContext.exit: the rank's fp16 "
                                             "gradient partition local_param.grad stays on the device; "
                                             "adam_offload.py copies it to the host each step")};
  e.sharded_param_gather_bytes = {2, bmt("the block's flat fp16 storage is gathered")};
  e.megatron_cross_entropy = {
      false, bmt("bmtrain/loss/cross_entropy.py FusedCrossEntropy: one kernel (csrc/cuda/cross_entropy.cu) reads the "
                 "fp16 logits and writes an fp16 softmax kept for the backward, whose kernel updates it in place")};
  e.async_checkpoint = {false, bmt("bmtrain/store.py bmt.save: gathers the parameters and writes them with "
                                    "torch.save on rank 0, synchronously")};
  e.moe_expert_parallel_comm_overlap = {false, bmt("no mixture-of-experts layers at this commit")};
  e.tp_comm_overlap = {false, bmt("no tensor parallelism at this commit (it came in OpenBMB/BMTrain 3063afb, 2023-08-23, 'tensor parallel')")};
  e.eager_layer_norm = {true, bmt("example/layers/layernorm.py Layernorm.forward: torch.nn.functional.layer_norm "
                                  "(PyTorch's own) on the fp16 input with its DistributedParameter weight and bias")};
  e.launch = {};  // launched by torchrun with the user's own script: no launcher arguments
  return e;
}

// MosaicML's llm-foundry: Composer's trainer on PyTorch FSDP1 (the MPT benchmark tables,
// tests/validation/llm_foundry.yaml). FSDP's own mechanisms are the fsdp entry's, which was read
// for these runs where they differ from torchtitan's (FSDP1, Composer's mixed-precision policies,
// MPT's norm and loss); what Composer adds is its optimizer and its gradient clipping.
FrameworkEntry llm_foundry() {
  constexpr const char* kFoundry = "mosaicml/llm-foundry @ b2a43a147 (2023-10-19: mosaicml[...]>=0.16.4,<0.17)";
  constexpr const char* kComposer = "mosaicml/composer v0.16.4";
  const auto composer = [&](const std::string& where) { return std::string(kComposer) + " " + where; };
  const std::string no_pipeline = std::string(kFoundry) + " llmfoundry/: no pipeline or context parallelism (FSDP only)";
  FrameworkEntry e = fsdp();
  e.id = Framework::llm_foundry;
  e.name = "llm-foundry";
  // MPT's model code, not torchtitan's Llama (the fsdp entry's model-code values).
  e.selective_recompute = {SelectiveRecompute::megatron_modules,
                           std::string(kFoundry) + " llmfoundry: activation_checkpointing wraps whole MPTBlocks "
                                                   "(full recompute; no per-op policy)"};
  e.eager_model_ops = {false, std::string(kFoundry) + " MPT: its LayerNorm is priced by eager_layer_norm, its GELU "
                                                      "MLP and fused loss as the fused ops; no rotary, no GQA copy"};
  e.torch_compile = {false, std::string(kFoundry) + " benchmark yamls: no torch.compile of the model"};
  e.fp32_eager_cross_entropy = {false, "its loss_fn fused_crossentropy (megatron_cross_entropy)"};
  e.root_unit_outside_layers = {
      true, std::string(kFoundry) + " MPT fsdp_wrap_fn wraps each MPTBlock; " + kComposer +
                " composer/trainer/dist_strategy.py prepare_fsdp_module wraps the model itself (FSDP root: wte and "
                "norm_f), whose flat parameter is gathered in the root's pre-forward and reduced after the "
                "backward's last gradient (the tied wte's embedding gradient); PyTorch FSDP1 "
                "_runtime_utils._post_forward_reshard: 'Do not free the root's parameters in the post-forward for "
                "FULL_SHARD' (free_unsharded_flat_param = not state._is_root and ...)"};
  e.last_layer_kept_after_forward = {
      false, std::string(kFoundry) + " MPT fsdp_wrap_fn wraps every MPTBlock alike (FULL_SHARD): PyTorch FSDP1 "
                                     "_post_forward_reshard frees every unit but the root after its forward"};
  e.fp8_param_gather = {Fp8ParamGather::none, std::string(kFoundry) + " on PyTorch FSDP1: its FP8 runs Transformer "
                                                                     "Engine Linears, all-gathered in 16 bits"};
  e.versions = std::string(kFoundry) + " on " + kComposer +
               " and PyTorch FSDP1 (use_orig_params True: composer/trainer/dist_strategy.py); its benchmark yamls "
               "(scripts/train/yamls/pretrain/mpt-*.yaml) step decoupled_adamw and clip the gradient norm at 1.0";
  // Per parameter tensor (FSDP1 use_orig_params: every original parameter's shard):
  //   DecoupledAdamW.step: state['step'] += 1 on a device scalar (1 kernel);
  //   DecoupledAdamW.adamw: state_steps[i].item() (a device-to-host copy that waits for the
  //     device, 1), then exp_avg.mul_, .add_, exp_avg_sq.mul_, .addcmul_, .sqrt(), / sqrt(bc2),
  //     .add_(eps), param.addcdiv_ (8); weight_decay 0 in the yamls skips param.mul_;
  //   gradient_clipping (clipping_type norm): FSDP.clip_grad_norm_ takes a vector_norm of each
  //     gradient and multiplies each in place by the clamped coefficient (2).
  e.optimizer_host_ops_per_tensor = {
      12, composer("composer/optim/decoupled_weight_decay.py DecoupledAdamW.step (state['step'] a "
                   "torch.zeros((), device=p.device) since 0408b38a5, 2023-05-25, v0.15.0; += 1 per parameter) and "
                   "DecoupledAdamW.adamw (a Python loop over the parameters: step = state_steps[i].item(), then "
                   "exp_avg.mul_(beta1).add_(grad), exp_avg_sq.mul_(beta2).addcmul_(grad, grad), "
                   "(exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps), param.addcdiv_); "
                   "composer/algorithms/gradient_clipping/gradient_clipping.py _apply_gradient_clipping: "
                   "FullyShardedDataParallel.clip_grad_norm_ on the root, whose _get_grad_norm takes "
                   "torch.linalg.vector_norm of each gradient and whose loop runs grad.detach().mul_(clip_coef_clamped) "
                   "(PyTorch torch/distributed/fsdp/fully_sharded_data_parallel.py). Composer before v0.15.0 (the "
                   "A100 40GB table, Precision 'bf16') kept the step an int: 2 launches fewer, not told apart")};
  // Bytes per shard parameter (fp32): mul_ 8, add_ 12, mul_ 8, addcmul_ 12, sqrt 8, div 8,
  // add_ 8, addcdiv_ 16 = 80 against fused Adam's 28 (30 less the 16-bit copy, which FSDP
  // makes at the next gather): 52 more, 13 passes; the clipping's norm (read 4) and mul_
  // (read and write 8): 3 passes. 16 in all.
  e.step_grad_shard_passes = {
      16, composer("DecoupledAdamW.adamw's eight unfused passes (80 bytes per fp32 parameter against a fused Adam's "
                   "28: 13 passes of 4 bytes) and FSDP.clip_grad_norm_'s vector_norm (read) and mul_ (read and "
                   "write) of each sharded fp32 gradient (3)")};
  e.schedules_with_pp = {{}, no_pipeline};
  e.max_zero_stage_with_pp = {-1, no_pipeline};
  e.pp_holds_units_unsharded_until_last_backward = {false, no_pipeline};
  e.pipeline_split_edge_layers = {0, no_pipeline};
  e.default_chunks_per_stage = {0, no_pipeline};
  e.context_parallel = {false, no_pipeline};
  e.tp_comm_overlap = {false, std::string(kFoundry) + " llmfoundry/: no tensor parallelism (FSDP only)"};
  e.async_checkpoint = {false, composer("composer/utils/checkpoint.py save_checkpoint: torch.save / "
                                        "torch.distributed checkpoint, synchronously")};
  e.launch = {};  // `composer train/train.py <yaml>`: the run is configured by its YAML, not by launcher arguments
  return e;
}

// The same stack a year earlier, as the A100 40GB MPT table ran it (its precision column says
// 'bf16', Composer's name before v0.12): PyTorch before 2.0 has no use_orig_params, so FSDP1
// hands the optimizer one flat parameter per wrapped unit, and DecoupledAdamW's step is an int.
FrameworkEntry llm_foundry_2022() {
  constexpr const char* kComposer = "mosaicml/composer v0.11.1 (2022-11-15)";
  const auto composer = [&](const std::string& where) { return std::string(kComposer) + " " + where; };
  FrameworkEntry e = llm_foundry();
  e.id = Framework::llm_foundry_2022;
  e.name = "llm-foundry-2022";
  e.versions = std::string(kComposer) +
               " on PyTorch 1.13 FSDP1 (no use_orig_params: FullyShardedDataParallel flattens each wrapped unit's "
               "parameters into one FlatParameter); MosaicML's MPT benchmark yamls of 2022-23 "
               "(llm-foundry @ 300cc5c58 scripts/train/yamls/mosaic_gpt/*.yaml: decoupled_adamw, weight_decay 0, "
               "gradient_clipping norm 1.0)";
  e.optimizer_host_ops_per_tensor = {
      10, composer("composer/optim/decoupled_weight_decay.py DecoupledAdamW: state['step'] = 0, an int (+= 1 on "
                   "the host, no .item()), then the same eight unfused Adam kernels per parameter "
                   "(exp_avg.mul_(beta1).add_(grad), exp_avg_sq.mul_(beta2).addcmul_(grad, grad), "
                   "(exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps), param.addcdiv_); "
                   "FullyShardedDataParallel.clip_grad_norm_'s norm and mul_ of each flat gradient (2)")};
  e.optimizer_tensors_are_flat_units = {
      true, "PyTorch 1.13 torch/distributed/fsdp/fully_sharded_data_parallel.py: each FSDP instance's parameters "
            "are one FlatParameter (flat_param), which model.parameters() and so the optimizer see; llm-foundry's "
            "MPT wraps each block (fsdp_wrap_fn: isinstance(module, MPTBlock)), the root the rest"};
  return e;
}

}  // namespace

const std::vector<FrameworkEntry>& framework_table() {
  static const std::vector<FrameworkEntry> table = {megatron_core(),  megatron_lm(),   deepspeed(),
                                                      fsdp(),           mindspeed(),     deepspeed_2021(),
                                                      bigscience_megatron_deepspeed(), nemo(),
                                                      mindformers(),   bmtrain(),       llm_foundry(),
                                                      llm_foundry_2022()};
  return table;
}

namespace {

// Every table entry with a non-standard FSDP policy's bytes in place of its standard ones
// (entries without the policies unchanged), built once: framework_for runs per plan in the
// analytical tier, where copying an entry (its sources and launch table) would dominate.
std::vector<FrameworkEntry> entries_with_policy(FsdpMixedPrecision policy) {
  std::vector<FrameworkEntry> out = framework_table();
  for (FrameworkEntry& e : out) {
    if (!e.fsdp_mixed_precision.value) continue;
    const Sourced<MixedPrecisionBytes>& bytes = policy == FsdpMixedPrecision::pure ? e.fsdp_pure : e.fsdp_full;
    e.grad_reduce_bytes = {bytes.value.grad_reduce, bytes.source};
    e.sharded_grad_pass_bytes_per_param = {bytes.value.grad_pass, bytes.source};
    e.unsharded_grad_bytes_per_param = {bytes.value.unsharded_grad, bytes.source};
    e.sharded_param_gather_bytes = {bytes.value.param_gather, bytes.source};
  }
  return out;
}

}  // namespace

const FrameworkEntry& framework_for(const ParallelPlan& plan) {
  if (plan.fsdp_mixed_precision == FsdpMixedPrecision::standard) return framework_entry(plan.framework);
  static const std::vector<FrameworkEntry> pure = entries_with_policy(FsdpMixedPrecision::pure);
  static const std::vector<FrameworkEntry> full = entries_with_policy(FsdpMixedPrecision::full);
  for (const FrameworkEntry& e : plan.fsdp_mixed_precision == FsdpMixedPrecision::pure ? pure : full)
    if (e.id == plan.framework) return e;
  throw SimError("framework_for: no entry for a framework value");
}

bool runs_torch_context_parallel(Framework framework) {
  return framework_entry(framework).context_parallel_impl.value == CpImplementation::torch_experimental;
}

HeldUnits pipeline_held_units(const ParallelPlan& plan, const FrameworkEntry& framework) {
  HeldUnits out;
  out.held = plan.pipeline_model_parallel_size > 1 && plan.zero_stage >= 2 && !plan.use_distributed_optimizer &&
             framework.pp_holds_units_unsharded_until_last_backward.value;
  out.reduced_per_chunk = out.held && !framework.grad_reduce_after_pipeline.value;
  return out;
}

bool has_root_unit(const FrameworkEntry& framework) {
  return framework.zero3_gather_unit.value == GatherUnit::layer && framework.root_unit_outside_layers.value;
}

namespace {
// Megatron's rule (megatron/training/arguments.py): bf16 forces accumulate_allreduce_grads_in_fp32;
// with fp16 it is --accumulate-allreduce-grads-in-fp32 (off by default).
double megatron_grad_bytes(const ParallelPlan& plan) {
  return plan.precision == Precision::fp16 && !plan.accumulate_allreduce_grads_in_fp32 ? 2.0 : 4.0;
}
}  // namespace

double grad_buffer_bytes_per_param(const FrameworkEntry& framework, const ParallelPlan& plan) {
  if (framework.grad_buffer_bytes.value > 0) return framework.grad_buffer_bytes.value;
  return megatron_grad_bytes(plan);
}

double bf16_grad_fold_bytes(const FrameworkEntry& framework, const ParallelPlan& plan) {
  return plan.precision == Precision::bf16 && plan.zero_stage == 0 && !plan.use_distributed_optimizer
             ? framework.bf16_grad_fold_bytes_per_param.value
             : 0.0;
}

double autograd_grad_accumulation_share(const FrameworkEntry& framework, const ParallelPlan& plan) {
  if (!framework.grad_accumulates_in_autograd.value || framework.main_grad_accumulation.value) return 0;
  if (plan.zero_stage >= 3 || bf16_grad_fold_bytes(framework, plan) > 0) return 0;
  const int m = plan.num_microbatches();
  if (m <= 1) return 0;
  const double kept = plan.zero_stage == 2 ? 1.0 / std::max(1, plan.data_parallel_size) : 1.0;
  return kept * (m - 1) / m;
}

double grad_reduce_bytes_per_param(const FrameworkEntry& framework, const ParallelPlan& plan) {
  if (framework.grad_reduce_bytes.value > 0) return framework.grad_reduce_bytes.value;
  return megatron_grad_bytes(plan);
}

OptimizerStepBytes optimizer_step_bytes(const FrameworkEntry& framework, double shard_params, double local_params,
                                        double grad_bytes_per_param, int dp_total) {
  // Adam: fp32 master, m and v read and written (24), the fp32 gradient read (4), the 16-bit
  // parameter written (2).
  constexpr double kAdamBytesPerParam = 30.0;
  OptimizerStepBytes b;
  b.shard = shard_params * (kAdamBytesPerParam + 4.0 * framework.step_grad_shard_passes.value);
  const double buffer_passes =
      framework.step_grad_buffer_passes.value + (dp_total > 1 ? framework.grad_prescale_passes.value : 0.0);
  b.buffer = local_params * grad_bytes_per_param * buffer_passes;
  return b;
}

double optimizer_host_s(const FrameworkEntry& framework, double tensors, double per_kernel_s) {
  return tensors * framework.optimizer_host_ops_per_tensor.value * per_kernel_s;
}

const FrameworkEntry& framework_entry(Framework framework) {
  // The table lists the entries in the enum's order: one index, checked, and a scan otherwise
  // (the hot paths ask per plan, and an entry is kilobytes of sources apart from the next).
  const std::vector<FrameworkEntry>& table = framework_table();
  const auto at = static_cast<std::size_t>(framework);
  if (at < table.size() && table[at].id == framework) return table[at];
  for (const FrameworkEntry& e : table)
    if (e.id == framework) return e;
  throw SimError("framework_entry: no entry for a framework value");
}

const char* to_string(Framework framework) {
  switch (framework) {
    case Framework::megatron_core:
      return "megatron-core";
    case Framework::megatron_lm:
      return "megatron-lm";
    case Framework::deepspeed:
      return "deepspeed";
    case Framework::fsdp:
      return "fsdp";
    case Framework::mindspeed:
      return "mindspeed";
    case Framework::deepspeed_2021:
      return "deepspeed-2021";
    case Framework::bigscience_megatron_deepspeed:
      return "bigscience-megatron-deepspeed";
    case Framework::nemo:
      return "nemo";
    case Framework::mindformers:
      return "mindformers";
    case Framework::bmtrain:
      return "bmtrain";
    case Framework::llm_foundry:
      return "llm-foundry";
    case Framework::llm_foundry_2022:
      return "llm-foundry-2022";
  }
  return "?";
}

bool runs_on_deepspeed(Framework framework) {
  return framework == Framework::deepspeed || framework == Framework::deepspeed_2021 ||
         framework == Framework::bigscience_megatron_deepspeed;
}

std::optional<Framework> parse_framework(std::string_view name) {
  for (const FrameworkEntry& e : framework_table())
    if (e.name == name) return e.id;
  return std::nullopt;
}

std::string framework_choices() {
  std::string out;
  for (const FrameworkEntry& e : framework_table()) out += (out.empty() ? "" : "|") + e.name;
  return out;
}

std::vector<std::pair<std::string, std::string>> framework_sources() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const FrameworkEntry& e : framework_table()) {
    auto add = [&](const char* key, const std::string& source) { out.emplace_back(e.name + "." + key, source); };
    add("grad_bucket_params", e.grad_bucket_params.source);
    add("param_persistence_threshold", e.param_persistence_threshold.source);
    add("prefetch_bucket_params", e.prefetch_bucket_params.source);
    add("zero3_gather_unit", e.zero3_gather_unit.source);
    add("root_unit_outside_layers", e.root_unit_outside_layers.source);
    add("last_layer_kept_after_forward", e.last_layer_kept_after_forward.source);
    add("zero3_gathers_per_microbatch", e.zero3_gathers_per_microbatch.source);
    add("zero3_gathers_per_microbatch_with_pp", e.zero3_gathers_per_microbatch_with_pp.source);
    add("zero2_gathers_per_unit", e.zero2_gathers_per_unit.source);
    add("pp_holds_units_unsharded_until_last_backward", e.pp_holds_units_unsharded_until_last_backward.source);
    add("grad_reduce_bytes", e.grad_reduce_bytes.source);
    add("blocking_p2p", e.blocking_p2p.source);
    add("p2p_exchange_blocking", e.p2p_exchange_blocking.source);
    add("p2p_overlap_interleaved", e.p2p_overlap_interleaved.source);
    add("max_zero_stage_with_pp", e.max_zero_stage_with_pp.source);
    add("sharded_collectives_ring_only", e.sharded_collectives_ring_only.source);
    add("sharded_grad_pass_bytes_per_param", e.sharded_grad_pass_bytes_per_param.source);
    add("zero3_max_reuse_distance", e.zero3_max_reuse_distance.source);
    add("zero3_list_collectives", e.zero3_list_collectives.source);
    add("zero3_blocking_fetch", e.zero3_blocking_fetch.source);
    add("softmax_batch_per_block_from_heads", e.softmax_batch_per_block_from_heads.source);
    add("alibi_separate_bias_passes", e.alibi_separate_bias_passes.source);
    add("bf16_grad_fold_bytes_per_param", e.bf16_grad_fold_bytes_per_param.source);
    add("grad_reduce_after_pipeline", e.grad_reduce_after_pipeline.source);
    add("grad_buckets_first_stage_only", e.grad_buckets_first_stage_only.source);
    add("param_gather_waited_in_forward", e.param_gather_waited_in_forward.source);
    add("p2p_partitioned_over_tp", e.p2p_partitioned_over_tp.source);
    add("p2p_sends_attention_mask", e.p2p_sends_attention_mask.source);
    add("schedules_with_pp", e.schedules_with_pp.source);
    add("interleaved_microbatch_groups", e.interleaved_microbatch_groups.source);
    add("moe_overlap_extra_warmup", e.moe_overlap_extra_warmup.source);
    add("pipeline_split_edge_layers", e.pipeline_split_edge_layers.source);
    add("default_chunks_per_stage", e.default_chunks_per_stage.source);
    add("distributed_optimizer", e.distributed_optimizer.source);
    add("zero_stages", e.zero_stages.source);
    add("default_zero_stage", e.default_zero_stage.source);
    add("context_parallel", e.context_parallel.source);
    add("context_parallel_impl", e.context_parallel_impl.source);
    add("pipeline_keeps_microbatch_tensors", e.pipeline_keeps_microbatch_tensors.source);
    add("moe_expert_parallel_comm_overlap", e.moe_expert_parallel_comm_overlap.source);
    add("tp_comm_overlap", e.tp_comm_overlap.source);
    add("tp_overlap", e.tp_overlap.source);
    add("sp_input_regathered_for_weight_grad", e.sp_input_regathered_for_weight_grad.source);
    add("fp8_tp_all_gather", e.fp8_tp_all_gather.source);
    add("grad_buffer_bytes", e.grad_buffer_bytes.source);
    add("gradient_accumulation_fusion", e.gradient_accumulation_fusion.source);
    add("main_grad_accumulation", e.main_grad_accumulation.source);
    add("grad_accumulates_in_autograd", e.grad_accumulates_in_autograd.source);
    add("vocab_parallel", e.vocab_parallel.source);
    add("ascend_only", e.ascend_only.source);
    add("cuda_base", e.cuda_base.source);
    add("reduce_buffers_zero12_overlap", e.reduce_buffers_zero12_overlap.source);
    add("reduce_buffers_zero12", e.reduce_buffers_zero12.source);
    add("reduce_buffers_zero3", e.reduce_buffers_zero3.source);
    add("gathered_units_in_flight", e.gathered_units_in_flight.source);
    add("unsharded_grad_bytes_per_param", e.unsharded_grad_bytes_per_param.source);
    add("host_dispatch_per_kernel_s", e.host_dispatch_per_kernel_s.source);
    add("layers_graph_captured", e.layers_graph_captured.source);
    add("loss_check_syncs_host", e.loss_check_syncs_host.source);
    add("step_grad_buffer_passes", e.step_grad_buffer_passes.source);
    add("grad_prescale_passes", e.grad_prescale_passes.source);
    add("step_grad_shard_passes", e.step_grad_shard_passes.source);
    add("optimizer_host_ops_per_tensor", e.optimizer_host_ops_per_tensor.source);
    add("optimizer_tensors_are_flat_units", e.optimizer_tensors_are_flat_units.source);
    add("chained_optimizers_gather_all_buckets", e.chained_optimizers_gather_all_buckets.source);
    add("reuse_fp32_param_saved_bytes", e.reuse_fp32_param_saved_bytes.source);
    add("optimizer_offload", e.optimizer_offload.source);
    add("sharded_param_gather_bytes", e.sharded_param_gather_bytes.source);
    add("fsdp_pure", e.fsdp_pure.source);
    add("fsdp_full", e.fsdp_full.source);
    add("fsdp_mixed_precision", e.fsdp_mixed_precision.source);
    add("offload_grad_d2h_bytes_per_param", e.offload_grad_d2h_bytes_per_param.source);
    add("offload_param_h2d_bytes_per_param", e.offload_param_h2d_bytes_per_param.source);
    add("offload_cpu_optimizer_speed", e.offload_cpu_optimizer_speed.source);
    add("offload_grad_shard_to_host", e.offload_grad_shard_to_host.source);
    add("fp8_weights_cached_per_step", e.fp8_weights_cached_per_step.source);
    add("fp8_param_gather", e.fp8_param_gather.source);
    add("fp8_linear_inputs_kept_in_fp8", e.fp8_linear_inputs_kept_in_fp8.source);
    add("transformer_engine_linears", e.transformer_engine_linears.source);
    add("async_checkpoint", e.async_checkpoint.source);
    add("megatron_cross_entropy", e.megatron_cross_entropy.source);
    add("eager_layer_norm", e.eager_layer_norm.source);
    add("selective_recompute", e.selective_recompute.source);
    add("eager_model_ops", e.eager_model_ops.source);
    add("torch_compile", e.torch_compile.source);
    add("fp32_eager_cross_entropy", e.fp32_eager_cross_entropy.source);
  }
  return out;
}

}  // namespace trainsim
