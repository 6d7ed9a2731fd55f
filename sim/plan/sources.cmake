# Sources of the plan module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/parallel_plan.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/plan_check.cpp)
