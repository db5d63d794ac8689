# Test sources of render: traces, SVG charts and atomic output files.
target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/chrome_trace_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/gantt_svg_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sweep_svg_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/output_file_test.cc)
