#!/usr/bin/env bash
# Runs a build's GoogleTest binary (tests/pe_tests) one process per test suite, JOBS at a
# time, leaving out the tests whose full name (Suite.Test, as ctest names them) matches the
# extended regular expression EXCLUDE; then ctest runs the build's other tests (examples,
# the README's program, the umbrella header check), EXCLUDE left out there too. Exits
# non-zero when any test fails; a failing suite's output is printed.
#
# .ci/sanitize.sh uses it: under ASan a process takes about 0.13 s to start and to end (the
# shadow memory, the leak check), which over ctest's one process per test (about 545) was
# about a sixth of the sanitized test run; one per suite is about 110 (147 s -> 110 s).
#
# Usage: .ci/suites.sh BUILD JOBS EXCLUDE
set -euo pipefail
build=$1 jobs=$2 exclude=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=$build/tests/pe_tests
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# "Suite." lines, then "  Test" lines (a parameter's comment after "#" dropped).
names=$("$binary" --gtest_list_tests | sed 's/  *#.*//' |
  awk '/^[^ ].*\.$/ { suite = $1; next } /^  / && suite { print suite substr($0, 3) }' |
  { grep -Ev "$exclude" || true; })
# One gtest filter per suite: Suite.A:Suite.B:...
filters=$(awk '{ dot = index($0, "."); s = substr($0, 1, dot - 1)
                 if (s != prev) { if (line) print line; line = $0; prev = s } else line = line ":" $0 }
               END { if (line) print line }' <<<"$names")

run_suite() {
  local filter=$1 log
  log=$logs/$(printf '%s' "${filter%%.*}" | tr '/' '_').log
  local start=$SECONDS
  if timeout 1800 "$binary" --gtest_filter="$filter" >"$log" 2>&1; then
    echo "== suite ${filter%%.*}: $(grep -c '^\[       OK \]' "$log") tests, $((SECONDS - start)) s"
  else
    echo "== suite ${filter%%.*} FAILED:"
    cat "$log"
    return 1
  fi
}
export -f run_suite
export binary logs
# As ctest runs them (tests/CMakeLists.txt, gtest_discover_tests).
export PE_PLAN=$build/planner/cli/pe-plan
cd "$root/tests"
status=0
if [ -n "$filters" ]; then
  printf '%s\n' "$filters" | xargs -d '\n' -P "$jobs" -I{} bash -c 'run_suite "$1"' _ {} || status=1
fi
echo "== $(wc -l <<<"$names") tests in $(wc -l <<<"$filters") suites"

ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 900 -LE '^pe_tests$' \
  -E "$exclude" || status=1
exit $status
