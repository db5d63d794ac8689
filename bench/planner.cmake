add_executable(bm_planner ${CMAKE_CURRENT_LIST_DIR}/bm_planner.cc)
target_link_libraries(bm_planner PRIVATE pe::planner pe::importers benchmark::benchmark TBB::tbb
  $<BUILD_INTERFACE:pe_warnings>)
