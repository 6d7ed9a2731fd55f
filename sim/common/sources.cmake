# Sources of the common module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/error.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/units.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/text.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/input_file.cpp)
