#!/usr/bin/env bash
# Installs, builds (tests, examples, benchmarks, the Python module), and runs the whole test
# suite with ctest (the Python tests included).
# Extra arguments go to cmake (CI passes -DPE_WERROR=ON).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/tools/setup.sh" -DPE_BUILD_TESTS=ON -DPE_BUILD_BENCH=ON -DPE_BUILD_EXAMPLES=ON \
  -DPE_BUILD_PYTHON=ON "$@"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
