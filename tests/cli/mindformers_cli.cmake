# plan.framework mindformers (issue 14): its scenario runs and fits, the same plan under MindSpeed
# does not fit (Megatron's fp32 gradients), and what MindFormers does not run is refused with
# exit 2 and one line naming what would be valid.
set(mf scenarios/llama2-7b-910b3-8-mindformers.yaml)
trainsim_cli_test(mindformers_scenario_fits 0 "memory peak 54\\.4 GiB of 64\\.0 GiB HBM"
  run ${mf})
trainsim_cli_test(mindformers_plan_under_mindspeed_does_not_fit 0 "DOES NOT FIT.*largest part: gradients 25\\.1 GiB"
  run ${mf} --set plan.framework=mindspeed)
trainsim_cli_test(mindformers_zero1_is_its_optimizer_parallelism 2
  "^--set: plan\\.zero_stage: 1 is not a ZeRO stage in mindformers \\(it has 0\\); valid: zero_stage 0 with use_distributed_optimizer: true \\(its optimizer-state sharding\\), or framework megatron-core"
  run ${mf} --set plan.use_distributed_optimizer=false --set plan.zero_stage=1)
trainsim_cli_test(mindformers_refuses_optimizer_offload 2
  "^--set: plan\\.offload_optimizer: cpu, but there is no optimizer-only CPU offload in mindformers; valid: none, or framework megatron-core"
  run ${mf} --set plan.offload_optimizer=cpu)
trainsim_cli_test(mindformers_refuses_fsdp_policies 2
  "^--set: plan\\.fsdp_mixed_precision: pure, but there are no FSDP mixed-precision policies in mindformers; valid: default, or framework fsdp"
  run ${mf} --set plan.fsdp_mixed_precision=pure)
trainsim_cli_test(mindformers_refuses_zb_v 2
  "^--set: plan\\.schedule: zb-v with PP > 1 is not a schedule in mindformers \\(it runs gpipe, 1f1b or interleaved\\); valid: schedule gpipe, 1f1b or interleaved, or PP 1"
  run ${mf} --set plan.pipeline_model_parallel_size=2 --set plan.schedule=zb-v)
