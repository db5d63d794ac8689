# Test sources of simulate: simulator, bubbles, bubble filling and the work-list importer.
target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/simulate_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/simulate_property_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/bubbles_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_property_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_scale_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/work_yaml_test.cc)
