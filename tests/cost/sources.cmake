# Tests of the cost module.
target_sources(trainsim_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention_kernel_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/attention_head_dim_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/b200_kernel_sweep_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collective_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cost_model_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fp8_recipe_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_alignment_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_shape_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_hardware_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fork_softmax_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/link_sharing_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/multinode_busbw_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/placement_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spine_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/weight_grad_accumulation_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/attention_work_test.cpp)
