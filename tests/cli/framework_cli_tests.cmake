# plan.framework (issue 14): the choices are listed, and DeepSpeed's ZeRO-2 with PP is refused.
trainsim_cli_test(framework_choices_are_listed 2 "plan.framework.*megatron-core.*deepspeed.*fsdp"
  run scenarios/default.yaml --set plan.framework=jax)
trainsim_cli_test(deepspeed_zero2_with_pp_is_refused 2 "ZeRO-2 cannot be combined with pipeline parallelism in deepspeed"
  run scenarios/gpt3-175b-a100-1024.yaml --set plan.framework=deepspeed --set plan.use_distributed_optimizer=false --set plan.zero_stage=2)
trainsim_cli_test(fsdp_zero3_with_pp_runs 0 "step time"
  run scenarios/gpt3-175b-a100-1024.yaml --set plan.framework=fsdp --set plan.use_distributed_optimizer=false --set plan.zero_stage=3)
