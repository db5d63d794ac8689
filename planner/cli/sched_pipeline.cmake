# sched-pipeline: drop-in replacement for PipeEdge's scheduler. The CLI lives in a static
# library so that `pe-plan sched-pipeline` and the tests call the same function.
add_library(pe_sched_pipeline_cli STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sched_pipeline_cli.cc
  ${CMAKE_CURRENT_LIST_DIR}/sched_pipeline_options.cc)
target_include_directories(pe_sched_pipeline_cli PUBLIC
  $<BUILD_INTERFACE:${CMAKE_CURRENT_LIST_DIR}>)
target_link_libraries(pe_sched_pipeline_cli PUBLIC pe::planner pe::importers
  PRIVATE $<BUILD_INTERFACE:pe_warnings>)

add_executable(sched-pipeline ${CMAKE_CURRENT_LIST_DIR}/sched_pipeline_main.cc)
target_link_libraries(sched-pipeline PRIVATE pe_sched_pipeline_cli $<BUILD_INTERFACE:pe_warnings>)
