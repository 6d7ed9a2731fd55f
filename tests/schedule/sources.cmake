# Tests of the schedule module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/schedule_test.cpp ${CMAKE_CURRENT_LIST_DIR}/schedule_table_test.cpp ${CMAKE_CURRENT_LIST_DIR}/zero_bubble_test.cpp ${CMAKE_CURRENT_LIST_DIR}/schedule_names_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dualpipe_test.cpp ${CMAKE_CURRENT_LIST_DIR}/search_schedules_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layer_split_test.cpp ${CMAKE_CURRENT_LIST_DIR}/post_validation_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/zb_auto_test.cpp ${CMAKE_CURRENT_LIST_DIR}/zb_pass_times_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/paper_bubble_rates_test.cpp)
