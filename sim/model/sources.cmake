# Sources of the model module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/workload.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/moe_dispatch.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/activation_storage.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cp_ring.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/model_check.cpp)
