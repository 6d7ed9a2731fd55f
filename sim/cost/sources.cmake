# Sources of the cost module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cost_model.cpp)
