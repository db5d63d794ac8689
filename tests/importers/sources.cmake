# Test sources of importers.
target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pipedream_graph_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/profile_catalog_test.cc)
