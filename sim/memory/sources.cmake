# Sources of the memory module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/memory_model.cpp)
