target_sources(pe_planner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/layout.cc
  ${CMAKE_CURRENT_LIST_DIR}/evaluate.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipeline_dp.cc
  ${CMAKE_CURRENT_LIST_DIR}/hybrid_search.cc
  ${CMAKE_CURRENT_LIST_DIR}/planner.cc
  ${CMAKE_CURRENT_LIST_DIR}/batch_sizes.cc)
