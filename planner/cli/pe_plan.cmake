add_library(pe_plan_cli STATIC
  ${CMAKE_CURRENT_LIST_DIR}/options.cc
  ${CMAKE_CURRENT_LIST_DIR}/help.cc
  ${CMAKE_CURRENT_LIST_DIR}/outputs.cc
  ${CMAKE_CURRENT_LIST_DIR}/run.cc)
target_include_directories(pe_plan_cli PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(pe_plan_cli PRIVATE PE_VERSION="${PROJECT_VERSION}")
target_link_libraries(pe_plan_cli PUBLIC pe::planner pe::importers PRIVATE $<BUILD_INTERFACE:pe_warnings>)

add_executable(pe-plan ${CMAKE_CURRENT_LIST_DIR}/pe_plan_main.cc)
target_link_libraries(pe-plan PRIVATE pe_plan_cli pe_sched_pipeline_cli TBB::tbb
  $<BUILD_INTERFACE:pe_warnings>)
