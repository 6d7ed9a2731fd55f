# Tests of the plan module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/plan_check_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/framework_plan_check_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/uneven_pipeline_check_test.cpp)
