target_sources(pe_planner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cost_model.cc
  ${CMAKE_CURRENT_LIST_DIR}/baselines.cc)
