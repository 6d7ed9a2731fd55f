# Sources of the validation module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/measured_run.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/validation.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fit_registry.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/calibrate.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/confidence.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/named_model.cpp)
