# Sources of the common module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/error.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/units.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/text.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/input_file.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/version.cpp)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/version.cpp PROPERTIES
  COMPILE_DEFINITIONS TRAINSIM_VERSION="${PROJECT_VERSION}")
