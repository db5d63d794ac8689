# Test sources of cli: the real pe-plan and sched-pipeline binaries (exit codes, the
# bad-input table of docs/bad-inputs.md, golden outputs, thread-count determinism).
target_sources(pe_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/program.cc
  ${CMAKE_CURRENT_LIST_DIR}/exit_code_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/bad_inputs_doc_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/golden_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/determinism_test.cc)
add_dependencies(pe_tests pe-plan sched-pipeline)
