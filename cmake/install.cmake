# Installation and the CMake package `pe`.
#
# `cmake --install BUILD --prefix PREFIX` lays out:
#   PREFIX/include/pe/...            public headers of pe::planner, pe::pipeedge, pe::importers
#   PREFIX/lib/libpe_*.a             the three libraries (static unless BUILD_SHARED_LIBS)
#   PREFIX/bin/pe-plan, sched-pipeline
#   PREFIX/share/pe/profiles/        the bundled profiles and their catalogue
#   PREFIX/lib/cmake/pe/             peConfig.cmake, peConfigVersion.cmake, peTargets*.cmake,
#                                    pe_profiles_directory.cc.in (see peConfig.cmake.in)
# so that a project can `find_package(pe CONFIG REQUIRED)` and link `pe::planner`,
# `pe::pipeedge` and `pe::importers`. The command-line front ends (pe_plan_cli, pe_sched_pipeline_cli) and
# pe_warnings are build-time only and are not exported.

include(CMakePackageConfigHelpers)

set(PE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/pe" CACHE STRING
    "Where peConfig.cmake is installed, relative to the prefix")
set(PE_INSTALL_PROFILES_DIR "${CMAKE_INSTALL_DATADIR}/pe/profiles")

install(TARGETS pe_planner pe_pipeedge pe_importers EXPORT peTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS pe-plan sched-pipeline RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Both include trees merge under include/pe (planner: pe/*.h, importers: pe/importers/*.h).
foreach(tree planner/include importers/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${tree}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
endforeach()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${PE_INSTALL_PROFILES_DIR})

install(EXPORT peTargets NAMESPACE pe:: FILE peTargets.cmake
        DESTINATION ${PE_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/peConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/peConfig.cmake
  INSTALL_DESTINATION ${PE_INSTALL_CMAKEDIR}
  PATH_VARS PE_INSTALL_PROFILES_DIR)
# 0.x releases may change the API between minor versions.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/peConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/peConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/peConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/pe_profiles_directory.cc.in
        DESTINATION ${PE_INSTALL_CMAKEDIR})

# The Python package pe (PE_BUILD_PYTHON): PREFIX/lib/python3/dist-packages/pe/, Debian's
# path for /usr/bin/python3's packages when PREFIX is /usr; for another prefix, add
# PREFIX/lib/python3/dist-packages to PYTHONPATH. _install_paths.py tells the installed
# package where the installed profiles are, relative to itself.
if(PE_BUILD_PYTHON)
  set(PE_INSTALL_PYTHONDIR "lib/python3/dist-packages" CACHE STRING
      "Where the Python package pe is installed, relative to the prefix")
  install(TARGETS pe_python LIBRARY DESTINATION ${PE_INSTALL_PYTHONDIR}/pe)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/pe/ DESTINATION ${PE_INSTALL_PYTHONDIR}/pe
          FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
  file(RELATIVE_PATH pe_profiles_from_package "/prefix/${PE_INSTALL_PYTHONDIR}/pe"
       "/prefix/${PE_INSTALL_PROFILES_DIR}")
  file(WRITE ${PROJECT_BINARY_DIR}/python/_install_paths.py
       "# Written by cmake/install.cmake: the installed profiles, relative to this folder.\n"
       "PROFILES = \"${pe_profiles_from_package}\"\n")
  install(FILES ${PROJECT_BINARY_DIR}/python/_install_paths.py
          DESTINATION ${PE_INSTALL_PYTHONDIR}/pe)
endif()
