# Sources of the metrics module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/step_metrics.cpp)
