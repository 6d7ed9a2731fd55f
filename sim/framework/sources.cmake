# Sources of the framework module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/framework.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/launch.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/communicator.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/offload.cpp)
