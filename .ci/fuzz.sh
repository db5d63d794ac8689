#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, then runs each target for a bounded time, starting from the
# seed corpus in fuzz/corpus/ and the test data. Exits non-zero when a target crashes,
# leaks, hangs (an input taking longer than PE_FUZZ_TIMEOUT seconds), runs out of memory or
# trips a sanitizer; the failing input is kept under $BUILD/fuzz-artifacts/.
#
# Environment (all optional):
#   PE_FUZZ_BUILD_DIR  build folder (default: build-ci-fuzz in the repository root); a
#                      folder already configured with PE_BUILD_FUZZ=ON (such as the one
#                      .ci/sanitize.sh makes with PE_SANITIZE_FUZZ=ON) is reused as it is
#   PE_FUZZ_SECONDS    seconds per target (default 20; 8 targets)
#   PE_FUZZ_SEED       libFuzzer's random seed (default 1, so that a CI run explores the
#                      same inputs, as far as its time allows, as any run before it and
#                      passes or fails the same way; 0 = a new random seed each run, for
#                      exploring beyond that)
#   PE_FUZZ_TIMEOUT    seconds one input may take (default 10)
#   PE_FUZZ_TARGETS    space-separated subset of targets to run (default: all)
#   PE_JOBS            parallel build jobs, and targets fuzzed at once (default 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PE_FUZZ_BUILD_DIR:-$root/build-ci-fuzz}
seconds=${PE_FUZZ_SECONDS:-20}
timeout=${PE_FUZZ_TIMEOUT:-10}
seed=${PE_FUZZ_SEED:-1}
jobs=${PE_JOBS:-2}
all_targets="fuzz_pipedream_graph fuzz_pipeedge_models fuzz_pipeedge_device_types
  fuzz_pipeedge_devices fuzz_cluster_yaml fuzz_work_yaml fuzz_pe_plan_cli fuzz_sched_pipeline_cli"
targets=${PE_FUZZ_TARGETS:-$all_targets}

echo "== fuzz: configure and build $build"
# -O1 with line tables: quick to build, fast enough to fuzz, readable reports.
grep -q '^PE_BUILD_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DPE_BUILD_FUZZ=ON -DPE_BUILD_TESTS=OFF -DPE_BUILD_BENCH=OFF -DPE_BUILD_EXAMPLES=OFF \
  -DPE_SANITIZE=address,undefined >/dev/null
cmake --build "$build" -j "$jobs" --target pe_fuzz

# Extra seed folders and the dictionary of each target.
seeds_of() {
  case "$1" in
    fuzz_pipedream_graph) echo "$root/tests/data/graphs $root/tests/data/robustness/graphs" ;;
    fuzz_cluster_yaml) echo "$root/tests/data/robustness/cluster" ;;
    fuzz_work_yaml) echo "$root/tests/data/work $root/tests/data/robustness/work" ;;
    *) echo "" ;;
  esac
}
dict_of() {
  case "$1" in
    fuzz_pipedream_graph) echo "$root/fuzz/dict/graph.dict" ;;
    fuzz_pe_plan_cli | fuzz_sched_pipeline_cli) echo "" ;;
    *) echo "$root/fuzz/dict/yaml.dict" ;;
  esac
}

# The first report in a target's log (sanitizer, libFuzzer or contract) and the input.
report() {
  grep -m1 -A40 -E "==[0-9]+==ERROR|ERROR: libFuzzer|runtime error:|fuzz contract violated" "$1" \
    | cut -c1-240 || tail -n 40 "$1"
  grep -E "Test unit written|^Base64:" "$1" || true
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Runs one target; its log and exit status go to $work/TARGET.log and .rc.
fuzz_target() {
  local target=$1 corpus="$work/$1" dict rc=0
  mkdir -p "$corpus"
  dict=$(dict_of "$target")
  # shellcheck disable=SC2046  # seed folders are split on purpose
  "$build/fuzz/$target" -seed="$seed" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
    ${dict:+-dict="$dict"} "$corpus" "$root/fuzz/corpus/$target" $(seeds_of "$target") \
    >"$work/$target.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$target.rc"
}

# Each target is one process on one core: PE_JOBS of them run at once.
for target in $targets; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  fuzz_target "$target" &
done
wait

failed=()
for target in $targets; do
  if [ "$(cat "$work/$target.rc" 2>/dev/null)" = 0 ]; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$')
    echo "== fuzz: $target ok, ${runs:-?} inputs in ${seconds}s"
  else
    echo "== fuzz: $target FAILED:"
    report "$work/$target.log"
    failed+=("$target")
  fi
done

if ((${#failed[@]})); then
  echo "== fuzz: failures in ${failed[*]}; inputs kept in $artifacts" >&2
  exit 1
fi
echo "== fuzz: all targets ran ${seconds}s without a finding"
