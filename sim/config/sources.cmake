# Sources of the config module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/scenario_loader.cpp)
