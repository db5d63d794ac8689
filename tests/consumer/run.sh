#!/usr/bin/env bash
# Checks the installed package the way a user meets it:
#   1. installs BUILD_DIR into a temporary prefix and checks the layout;
#   2. builds tests/consumer against it with find_package(pe) and runs it;
#   3. runs the installed pe-plan and sched-pipeline from another working directory with
#      PE_PROFILES_DIR unset, and pe-plan again with the source tree hidden (when the
#      system lets an unprivileged user do that with `unshare`).
# Usage: tests/consumer/run.sh BUILD_DIR     (the build must be complete)
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

[[ $# -eq 1 && -f "$1/CMakeCache.txt" ]] || fail "usage: $0 BUILD_DIR (a configured, built tree)"
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
unset PE_PROFILES_DIR

cache() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt"; }

# Prints $1 and fails unless it matches the extended regular expression $2.
expect() {
  printf '%s\n' "$1"
  grep -Eq -- "$2" <<<"$1" || fail "output does not match /$2/"
}

install_package() {
  cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" ||
    { cat "$work/install.log"; fail "cmake --install"; }
  for f in include/pe/pe.h include/pe/planner.h include/pe/importers/pipeedge.h \
           bin/pe-plan bin/sched-pipeline share/pe/profiles/catalog.yml \
           share/pe/profiles/pipedream/resnet50/graph.txt; do
    [[ -e "$prefix/$f" ]] || fail "not installed: $f"
  done
  config=$(find "$prefix" -name peConfig.cmake -path '*/cmake/pe/*' | head -n 1)
  [[ -n "$config" ]] || fail "peConfig.cmake not installed"
  [[ -f "$(dirname "$config")/peConfigVersion.cmake" ]] || fail "peConfigVersion.cmake missing"
  ! grep -rq -- "$source_dir/" "$(dirname "$config")" ||
    fail "installed CMake files name the source tree"
  echo "installed into $prefix"
}

build_consumer() {
  local flags=() sanitize
  sanitize=$(cache PE_SANITIZE)
  [[ -z "$sanitize" ]] || flags+=("-DCMAKE_CXX_FLAGS=-fsanitize=$sanitize"
                                  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitize")
  cmake -S "$here" -B "$work/consumer" -G "$(cache CMAKE_GENERATOR)" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$(cache CMAKE_CXX_COMPILER)" \
        -DCMAKE_BUILD_TYPE=Release "${flags[@]}" >"$work/consumer.log" 2>&1 &&
    cmake --build "$work/consumer" -j2 >>"$work/consumer.log" 2>&1 ||
    { cat "$work/consumer.log"; fail "consumer configure/build"; }
  expect "$("$work/consumer/consumer")" '^best plan: [0-9]+-[0-9]+:[0-9]+(;[0-9]+-[0-9]+:[0-9]+)* '
}

# The installed programs, run from an empty directory outside both trees.
run_programs() {
  mkdir -p "$work/elsewhere"
  cd "$work/elsewhere"
  plan_output=$("$prefix/bin/pe-plan" --gbs 512) || fail "installed pe-plan --gbs 512"
  expect "$plan_output" '[0-9]+-[0-9]+:[0-9]+'
  grep -q resnet50 <<<"$plan_output" || fail "pe-plan output does not name resnet50"
  [[ "$(PE_PROFILES_DIR="$prefix/share/pe/profiles" "$prefix/bin/pe-plan" --gbs 512)" == \
     "$plan_output" ]] || fail "the installed profiles plan differently from the default lookup"
  local example="$source_dir/tests/data/pipeedge/example"
  expect "$("$prefix/bin/sched-pipeline" -M "$example/models.yml" \
            -T "$example/device_types.yml" -D "$example/devices.yml" 2>/dev/null)" \
         '^- mb-0: \[1, [0-9]+\]'
}

# pe-plan again with the source tree out of sight (an empty file system mounted over it),
# so that only the installed profiles can be found. Needs unprivileged user and mount
# namespaces; skipped without them.
run_without_source_tree() {
  if [[ "$work/" == "$source_dir/"* ]] ||
     ! unshare --user --map-root-user --mount true 2>/dev/null; then
    echo "note: cannot hide $source_dir here; the installed profiles were checked above"
    return
  fi
  local output
  output=$(unshare --user --map-root-user --mount bash -c \
    'mount -t tmpfs none "$1" && cd "$2" && "$3" --gbs 512' _ \
    "$source_dir" "$work/elsewhere" "$prefix/bin/pe-plan" 2>&1) ||
    fail "installed pe-plan found no profiles without the source tree (the installed" \
         "lookup must not depend on the prefix BUILD_DIR was configured with): $output"
  [[ "$output" == "$plan_output" ]] || fail "without the source tree pe-plan plans differently"
  echo "installed pe-plan works with $source_dir hidden"
}

install_package
build_consumer
run_programs
run_without_source_tree
echo "PASS"
