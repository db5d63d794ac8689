# Test sources of report: the text, CSV and JSON reporters.
target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/report_test.cc)
