target_sources(pe_planner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/format.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_report.cc
  ${CMAKE_CURRENT_LIST_DIR}/csv_report.cc
  ${CMAKE_CURRENT_LIST_DIR}/json_report.cc
  ${CMAKE_CURRENT_LIST_DIR}/bubble_report.cc)
