# Sources of planner/src/render: trace and chart renderers, atomic output files.
target_sources(pe_planner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/output_file.cc)
