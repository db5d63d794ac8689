# libFuzzer targets (fuzz/): importers and command-line parsers under ASan + UBSan.
# Needs clang; .ci/fuzz.sh configures a build with it and runs every target for a while.
option(PE_BUILD_FUZZ "Build libFuzzer targets (clang)" OFF)
if(PE_BUILD_FUZZ)
  add_subdirectory(fuzz)
endif()
