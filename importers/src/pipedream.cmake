# The PipeDream/HPGO graph.txt importer and the catalogue of bundled profiles.
target_sources(pe_importers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pipedream_graph_text.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipedream_graph_dag.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipedream_graph_order.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipedream_graph.cc
  ${CMAKE_CURRENT_LIST_DIR}/profile_catalog.cc)
