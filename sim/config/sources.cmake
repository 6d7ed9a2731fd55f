# Sources of the config module.
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/schema.cpp)
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/scenario_loader.cpp)
# Default search root for a scenario's model: and hardware: files (the repo's models/ and hardware/).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/scenario_loader.cpp PROPERTIES
  COMPILE_DEFINITIONS "TRAINSIM_DATA_DIR=\"${PROJECT_SOURCE_DIR}\"")
target_sources(trainsim_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/yaml_file.cpp)
