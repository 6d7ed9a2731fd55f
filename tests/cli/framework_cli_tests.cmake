# plan.framework (issue 14): the choices are listed, and DeepSpeed's ZeRO-2 with PP is refused.
trainsim_cli_test(framework_choices_are_listed 2 "plan.framework.*megatron-core.*deepspeed.*fsdp"
  run scenarios/default.yaml --set plan.framework=jax)
trainsim_cli_test(deepspeed_zero2_with_pp_is_refused 2 "ZeRO-2 cannot be combined with pipeline parallelism in deepspeed"
  run scenarios/gpt3-175b-a100-1024.yaml --set plan.framework=deepspeed --set plan.use_distributed_optimizer=false --set plan.zero_stage=2)
trainsim_cli_test(fsdp_zero3_with_pp_runs 0 "step time"
  run scenarios/gpt3-175b-a100-1024.yaml --set plan.framework=fsdp --set plan.use_distributed_optimizer=false --set plan.zero_stage=3)
# EP all-to-all overlap (framework.hpp moe_expert_parallel_comm_overlap): refused on a framework
# without it, one line naming the key and the frameworks that have it.
trainsim_cli_test(ep_overlap_refused_on_fsdp_naming_the_frameworks_with_it 2
  "^--set: plan\\.overlap_moe_expert_parallel_comm: true, but there is no expert-parallel all-to-all overlap in fsdp; valid: false, or framework megatron-core or mindspeed"
  run scenarios/mixtral-8x7b-a100-64.yaml --set plan.schedule=interleaved --set plan.framework=fsdp
  --set plan.use_distributed_optimizer=false --set plan.overlap_moe_expert_parallel_comm=true)
# plan.torch_compile is torchtitan's (framework fsdp): elsewhere a refusal naming who has it.
trainsim_cli_test(torch_compile_on_megatron_core_is_refused 2
  "plan.torch_compile: true, but there is no torch.compile of the model in megatron-core; valid: false, or framework fsdp"
  run scenarios/llama3-8b-h100-8.yaml --set plan.framework=megatron-core --set plan.torch_compile=true)
