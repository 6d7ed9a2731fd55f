# Sources of the schedule module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/schedule.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/layer_split.cpp)
