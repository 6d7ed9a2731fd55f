# Sources of the graph module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pipeline_costs.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/task_graph.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/task_graph_bgl.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/step_chain.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tp_overlap.cpp)
