# Test sources of edge: PipeEdge sched-pipeline compatibility (cost model, exact search,
# importers, CLI and export).
target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pipeedge_cost_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipeedge_import_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/edge_oracle.cc
  ${CMAKE_CURRENT_LIST_DIR}/edge_schedule_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/edge_schedule_oracle_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sched_pipeline_cli_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sched_export_test.cc)
target_link_libraries(pe_tests PRIVATE pe_sched_pipeline_cli)
