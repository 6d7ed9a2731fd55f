# Megatron's uneven pipeline split in the launch table (issue 16): Llama 3 405B's 126 layers
# on 16 stages, the embedding and the loss counted as layers, print as Megatron's own flags
# (names checked in NVIDIA/Megatron-LM d98e8a64 arguments.py and transformer_config.py).
set(_uneven_search search scenarios/llama3-405b-h100-16384.yaml --devices 16384 --top 1
    --keep tp,pp,cp,ep,mbs,schedule,sp,optimizer,recompute --launch megatron)
trainsim_cli_test(launch_megatron_writes_the_account_for_split 0
  "--pipeline-model-parallel-size 16 \\\\\n +--account-for-embedding-in-pipeline-split \\\\\n +--account-for-loss-in-pipeline-split \\\\\n"
  ${_uneven_search})
# Interleaved, as Llama 3 ran: one layer per chunk, 8 virtual stages per rank.
trainsim_cli_test(launch_megatron_writes_virtual_stages_with_the_split 0
  "--pipeline-model-parallel-size 16 \\\\\n +--num-virtual-stages-per-pipeline-rank 8 \\\\\n +--account-for-embedding-in-pipeline-split"
  ${_uneven_search} --set plan.schedule=interleaved)
# (The first / last stage counts: tests/framework/uneven_launch_test.cpp; search clears them,
# a candidate's stages split evenly.)
# A launcher without the keys refuses them rather than print an even split of 126 layers.
trainsim_cli_test(launch_torchtitan_refuses_the_account_for_split 2
  "plan.account_for_embedding_in_pipeline_split = true cannot be expressed in torchtitan's arguments: no argument in the table.*--launch megatron"
  search scenarios/llama3-405b-h100-16384.yaml --devices 16384 --top 1 --framework megatron-core
  --keep tp,pp,cp,ep,mbs,schedule,sp,optimizer,recompute --launch torchtitan)
