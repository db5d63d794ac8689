# Test sources of render: traces, SVG charts and atomic output files.
target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/output_file_test.cc)
