# Sources of the work-list (bubble filling) importer.
target_sources(pe_importers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/work_yaml.cc)
