# Sources of the schedule module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/schedule.cpp ${CMAKE_CURRENT_LIST_DIR}/schedule_table.cpp ${CMAKE_CURRENT_LIST_DIR}/dualpipe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layer_split.cpp ${CMAKE_CURRENT_LIST_DIR}/zb_auto.cpp)
