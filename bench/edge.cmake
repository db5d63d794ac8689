# Heterogeneous pipeline benchmarks: bm_edge (BM_EdgeSchedule_*), the sched-pipeline search
# on synthetic edge clusters. See docs/sched-pipeline.md for numbers and commands.
add_executable(bm_edge ${CMAKE_CURRENT_LIST_DIR}/bm_edge.cc)
target_link_libraries(bm_edge PRIVATE benchmark::benchmark pe::planner
  $<BUILD_INTERFACE:pe_warnings>)
