# Tests of the validation module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/measured_run_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/accuracy_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fit_registry_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cross_validation_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/calibrate_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/confidence_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/out_of_sample_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/llm_foundry_test.cpp)
