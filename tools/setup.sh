#!/usr/bin/env bash
# Installs what pe-plan needs from Debian (when missing) and builds it in build/.
# Usage: tools/setup.sh [extra cmake arguments]   (BUILD_DIR overrides the build folder)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
packages="cmake ninja-build g++ libtbb-dev libboost-graph-dev libyaml-cpp-dev nlohmann-json3-dev
  libcli11-dev libfmt-dev libgtest-dev
  libgmock-dev libbenchmark-dev librsvg2-bin
  python3-dev pybind11-dev python3-numpy python3-pytest python3-torch"
missing=""
for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "== installing:$missing"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
