add_executable(pe-plan ${CMAKE_CURRENT_LIST_DIR}/pe_plan_main.cc)
target_link_libraries(pe-plan PRIVATE pe::planner pe::importers $<BUILD_INTERFACE:pe_warnings>)
