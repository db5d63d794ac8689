# Sources of the pipeedge importer: PipeEdge sched-pipeline's models.yml,
# device_types.yml and devices.yml.
target_sources(pe_importers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pipeedge_yaml.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipeedge_models.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipeedge_device_types.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipeedge_devices.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipeedge.cc)
