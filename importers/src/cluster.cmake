target_sources(pe_importers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/yaml_input.cc
  ${CMAKE_CURRENT_LIST_DIR}/yaml_document.cc
  ${CMAKE_CURRENT_LIST_DIR}/cluster_yaml.cc)
