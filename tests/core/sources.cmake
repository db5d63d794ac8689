target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cluster_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/model_test.cc)
