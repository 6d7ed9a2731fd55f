# Tests of the report module.
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/memory_report_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/collective_table_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/report_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/html_report_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pass_names_test.cpp)
# The HTML report rendered in headless Chromium; skipped (exit 77) when Chromium is absent.
add_test(NAME report.html_browser
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/html_browser_test.sh $<TARGET_FILE:trainsim> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/html_browser)
set_tests_properties(report.html_browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 400)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/line_chart_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/axis_ticks_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/trace_ranks_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/op_table_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/output_file_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bubble_figures_test.cpp)
target_sources(trainsim_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/network_collectives_test.cpp)
