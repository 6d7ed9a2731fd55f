# Tests of the config module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/schema_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/scenario_loader_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/input_safety_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/scenario_writer_test.cpp)
