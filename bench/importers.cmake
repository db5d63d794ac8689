# Importer benchmarks: bm_importers (BM_PipedreamGraph_Import/<profile>).
add_executable(bm_importers ${CMAKE_CURRENT_LIST_DIR}/bm_importers.cc)
target_link_libraries(bm_importers PRIVATE benchmark::benchmark pe::importers
  $<BUILD_INTERFACE:pe_warnings>)
