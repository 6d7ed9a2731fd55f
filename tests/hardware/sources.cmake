# Tests of the hardware files.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/hardware_files_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/jean_zay_test.cpp)
