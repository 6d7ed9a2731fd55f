# Tests of the common module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/error_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/units_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/text_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/input_file_test.cpp)
