#!/usr/bin/env bash
# Installs, builds, and plans the bundled default: ResNet-50, GBS 32:4096:64, 2 x 8 GPUs.
# Extra arguments go to pe-plan (e.g. --format csv). Only the plan goes to stdout: what the
# installation and the build print goes to stderr, so `tools/plan-default.sh > plan.txt` or
# `tools/plan-default.sh --format csv | ...` get the plan alone.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh" -DPE_BUILD_TESTS=OFF -DPE_BUILD_BENCH=OFF -DPE_BUILD_EXAMPLES=OFF >&2
exec "${BUILD_DIR:-$root/build}/planner/cli/pe-plan" "$@"
