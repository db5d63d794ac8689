# Sources of planner/src/render: trace and chart renderers, atomic output files.
target_sources(pe_planner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/svg.cc
  ${CMAKE_CURRENT_LIST_DIR}/chrome_trace.cc
  ${CMAKE_CURRENT_LIST_DIR}/gantt_svg.cc
  ${CMAKE_CURRENT_LIST_DIR}/sweep_svg.cc
  ${CMAKE_CURRENT_LIST_DIR}/output_file.cc)
