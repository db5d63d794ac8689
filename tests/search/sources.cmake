target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/hybrid_search_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/evaluate_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/planner_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/never_worse_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/estimate_vs_simulation_test.cc)
