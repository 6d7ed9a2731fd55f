# Tests of the framework module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/framework_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/framework_ordering_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/zero3_mechanism_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bigscience_rows_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/deepspeed_pipe_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/launch_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/framework_memory_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/uneven_launch_test.cpp)
