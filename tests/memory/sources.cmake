# Tests of the memory module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/memory_model_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/zero_bubble_memory_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/moe_dispatch_memory_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/te_framework_memory_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/reuse_fp32_param_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/deepseek_memory_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/fp8_weights_memory_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pytorch_pipelining_memory_test.cpp)
