# Optimizer offload (plan.offload_optimizer: cpu, issue 14) from the command line: the shipped
# scenario runs and reports host memory; a framework without optimizer offload is exit 2 naming
# the key and the frameworks that have it; an unknown value is exit 2 with the valid ones.
trainsim_cli_test(offload_scenario_reports_host_memory 0
  "offloaded to host memory \\(optimizer state; DeepSpeed ZeRO 2-3: its fp32 gradient partition too\\), GiB per device: stage 0: 24\\.2"
  memory scenarios/llama2-13b-a100-40gb-8-zero-offload.yaml)
trainsim_cli_test(offload_refused_on_fsdp_naming_the_key 2
  "plan.offload_optimizer: cpu, but there is no optimizer-only CPU offload in fsdp; valid: none, or framework megatron-core, deepspeed"
  run scenarios/llama2-13b-a100-40gb-8-zero-offload.yaml --set plan.framework=fsdp)
trainsim_cli_test(offload_unknown_device_lists_the_valid_ones 2
  "plan.offload_optimizer.*none.*cpu"
  run scenarios/llama2-13b-a100-40gb-8-zero-offload.yaml --set plan.offload_optimizer=nvme)
