# Sources of planner/src/simulate: the schedule simulator, bubble report and bubble filling.
target_sources(pe_planner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/event.cc
  ${CMAKE_CURRENT_LIST_DIR}/event_index.cc
  ${CMAKE_CURRENT_LIST_DIR}/simulate.cc
  ${CMAKE_CURRENT_LIST_DIR}/bubbles.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_work.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_queue.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill.cc)
