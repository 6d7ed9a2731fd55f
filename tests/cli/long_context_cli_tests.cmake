# Long context (issue 17): sliding windows, packed documents, the context-parallel variants.
trainsim_cli_test(long_context_mistral_32k_runs 0 "mistral-7b-910b3-32k on 8 x Ascend-910B3.*step time"
  run scenarios/mistral-7b-910b3-32k.yaml)
trainsim_cli_test(long_context_mistral_explain_names_the_window_layers 0
  "where the step goes.*attention_core \\(dense_sliding_window\\)"
  explain scenarios/mistral-7b-910b3-32k.yaml)
trainsim_cli_test(long_context_packed_32k_runs 0 "llama2-7b-910b3-32k-packed.*step time"
  run scenarios/llama2-7b-910b3-32k-packed.yaml)
trainsim_cli_test(long_context_packed_explain 0 "where the step goes.*attention_core"
  explain scenarios/llama2-7b-910b3-32k-packed.yaml)
trainsim_cli_test(long_context_405b_128k_all_gather_runs 0 "TP8 PP16 DP8 CP16.*step time"
  run scenarios/llama3-405b-h100-16384-128k.yaml)
trainsim_cli_test(long_context_405b_all_gather_ops 0 "cp_all_gather_kv +all_gather +cp forward.*cp_reduce_scatter_dkv +reduce_scatter +cp backward"
  ops scenarios/llama3-405b-h100-16384-128k.yaml)
trainsim_cli_test(long_context_cp_variants_side_by_side 0
  "cp_comm_type +step_s.* a2a +[0-9.]+ .*3 combinations, 3 simulated"
  sweep scenarios/llama3-8b-h100-64-128k-cp.yaml --grid plan.cp_comm_type=p2p,all_gather,a2a)
trainsim_cli_test(long_context_ulysses_refuses_one_kv_head_per_rank 2
  "plan.cp_comm_type: cp_comm_type a2a with CP 16: .*\\(16 query, 1 key/value\\); valid: p2p or all_gather"
  run scenarios/llama3-405b-h100-16384-128k.yaml --set plan.cp_comm_type=a2a)
trainsim_cli_test(long_context_ring_refuses_a_window 2
  "plan.cp_comm_type: cp_comm_type p2p with CP 2: the ring does not run sliding-window attention.*valid: all_gather or a2a"
  run scenarios/mistral-7b-910b3-32k.yaml --set plan.context_parallel_size=2 --set plan.cp_comm_type=p2p)
trainsim_cli_test(long_context_bad_cp_comm_type_names_the_key 2
  "plan.cp_comm_type: 'ring' is not a valid value; valid: p2p, all_gather, a2a"
  run scenarios/default.yaml --set plan.cp_comm_type=ring)
trainsim_cli_test(long_context_bad_document_length_names_the_key 2
  "data.document_lengths: 0 is out of range; valid: integer in \\[1, 100000000\\]"
  run scenarios/default.yaml --set data.document_lengths=[0])
trainsim_cli_test(long_context_weights_need_one_per_length 2 "data.document_weights: 1 weights for 2 document lengths"
  run scenarios/default.yaml --set data.document_lengths=[512,4096] --set data.document_weights=[1])
trainsim_cli_test(long_context_gemma2_alternates_and_warns 0
  "dense_sliding_window x 21:.*dense x 21:.*warning: .*attn_logit_softcapping is set.*warning: .*final_logit_softcapping is set"
  ops tests/config/data/gemma2_scenario.yaml)
