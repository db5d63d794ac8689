#!/usr/bin/env bash
# Builds every target (library, programs, tests, benchmarks, examples) with the project's
# warnings (-Wall -Wextra -Wpedantic -Wshadow -Wconversion, the pe_warnings target) turned
# into errors. Exits non-zero on the first warning.
#
# Environment (all optional):
#   PE_WERROR_BUILD_DIR  build folder (default: build-ci-werror in the repository root)
#   PE_CXX               compiler (default: c++, i.e. GCC on Debian; clang++ works too)
#   PE_JOBS              parallel build jobs (default 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PE_WERROR_BUILD_DIR:-$root/build-ci-werror}
jobs=${PE_JOBS:-2}

echo "== werror: configure and build $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="${PE_CXX:-c++}" \
  -DCMAKE_BUILD_TYPE=Release -DPE_WERROR=ON -DPE_BUILD_TESTS=ON -DPE_BUILD_BENCH=ON \
  -DPE_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$build" -j "$jobs"
echo "== werror: built without warnings"
