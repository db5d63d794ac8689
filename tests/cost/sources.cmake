target_sources(pe_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/baselines_test.cc)
