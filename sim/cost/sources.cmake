# Sources of the cost module.
target_sources(trainsim_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cost_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_shape.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collective.cpp
  ${CMAKE_CURRENT_LIST_DIR}/link_sharing.cpp
  ${CMAKE_CURRENT_LIST_DIR}/placement.cpp)
