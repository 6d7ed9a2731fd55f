# Command-line tests of the network model (issue 19): collectives across servers as NCCL offers them.
# All-gather across 2 and 1024 H100 servers: a ring both times (NCCL offers no other), its
# latency growing with the ranks.
trainsim_cli_test(collective_all_gather_across_servers_is_a_ring 0
  "\"devices\": 16,[^}]*\"algorithm\": \"ring\".*\"devices\": 8192,[^}]*\"algorithm\": \"ring\""
  collective --hardware hardware/h100-80gb.yaml --op all_gather --devices 16,8192 --sizes 1MiB --json -)
# All-reduce of 1 GiB on 8192 H100: the double binary tree, busbw 313 GB/s (published NVLSTree
# scan: ~308, tests/cost/data/multinode_busbw.yaml).
trainsim_cli_test(collective_all_reduce_8192_is_the_tree 0
  "\"devices\": 8192,[^}]*\"busbw_gbps\": 31[0-9]\\.[0-9]*,[^}]*\"algorithm\": \"double_binary_tree\""
  collective --hardware hardware/h100-80gb.yaml --op all_reduce --devices 8192 --sizes 1GiB --json -)
