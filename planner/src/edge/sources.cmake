# Sources of planner/src/edge (paths relative to this file): heterogeneous inference
# pipelines (PipeEdge sched-pipeline), their cost model, exact search and export.
target_sources(pe_planner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cost.cc
  ${CMAKE_CURRENT_LIST_DIR}/validate.cc
  ${CMAKE_CURRENT_LIST_DIR}/stage_tables.cc
  ${CMAKE_CURRENT_LIST_DIR}/bound_search.cc
  ${CMAKE_CURRENT_LIST_DIR}/bound_graph.cc
  ${CMAKE_CURRENT_LIST_DIR}/count_dp.cc
  ${CMAKE_CURRENT_LIST_DIR}/pick_schedule.cc
  ${CMAKE_CURRENT_LIST_DIR}/schedule.cc
  ${CMAKE_CURRENT_LIST_DIR}/export.cc
  ${CMAKE_CURRENT_LIST_DIR}/yaml_scalar.cc)
