# Tests of the report module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/memory_report_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/collective_table_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/report_test.cpp)
