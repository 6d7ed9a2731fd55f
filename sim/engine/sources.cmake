# Sources of the engine module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/engine.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/variability.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tp_lockstep.cpp)
