# Hierarchical context parallelism (issue 17): plan.cp_comm_type a2a+p2p with
# plan.hierarchical_context_parallel_sizes [a2a, p2p].
trainsim_cli_test(cp_hybrid_four_variants_side_by_side 0
  "cp_comm_type +step_s.* a2a\\+p2p +[0-9.]+ .*4 combinations, 4 simulated"
  sweep scenarios/llama3-8b-h100-64-128k-cp.yaml --grid plan.cp_comm_type=p2p,all_gather,a2a,a2a+p2p
  --set plan.hierarchical_context_parallel_sizes=[4,2])
trainsim_cli_test(cp_hybrid_ops_on_the_two_levels 0
  "cp_all_to_all_qkv +all_to_all +cp_inner forward.*cp_kv_exchange +send_recv +cp_outer forward"
  ops scenarios/llama3-8b-h100-64-128k-cp.yaml --set plan.cp_comm_type=a2a+p2p
  --set plan.hierarchical_context_parallel_sizes=[4,2])
trainsim_cli_test(cp_hybrid_needs_the_sizes 2
  "plan.hierarchical_context_parallel_sizes: cp_comm_type a2a\\+p2p with CP 8 needs \\[a2a size, p2p size\\] with product CP \\(8\\); valid: two sizes such as \\[8, 1\\]"
  run scenarios/llama3-8b-h100-64-128k-cp.yaml --set plan.cp_comm_type=a2a+p2p)
trainsim_cli_test(cp_hybrid_a2a_size_divides_the_heads 2
  "plan.hierarchical_context_parallel_sizes: cp_comm_type a2a\\+p2p with CP 16: the a2a size 2 does not divide the heads per TP rank \\(16 query, 1 key/value\\)"
  run scenarios/llama3-405b-h100-16384-128k.yaml --set plan.cp_comm_type=a2a+p2p
  --set plan.hierarchical_context_parallel_sizes=[2,8])
