# Test sources of robustness: numeric safety (NaN, infinity, overflow, zero and extreme
# sizes) and one regression test per fuzz finding (tests/data/robustness/fuzz/).
target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/numeric_model_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/numeric_cluster_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/numeric_batch_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/numeric_edge_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/importer_robustness_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/yaml_input_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_regression_test.cc)
