#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer (any finding aborts
# the process) and runs the whole test suite. Exits non-zero on a build error, a failing
# test or a sanitizer report.
#
# Environment (all optional):
#   PE_SANITIZE_BUILD_DIR  build folder (default: build-ci-asan in the repository root)
#   PE_CXX                 compiler (default: clang++, which needs about 40% less CPU time
#                          than GCC for this build; c++ works too)
#   PE_JOBS                parallel build and test jobs (default 2)
#   PE_SANITIZE_FUZZ       ON also builds the libFuzzer targets in the same tree, with the
#                          libraries coverage-instrumented, so .ci/fuzz.sh can reuse it
#                          (default OFF; needs clang)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PE_SANITIZE_BUILD_DIR:-$root/build-ci-asan}
jobs=${PE_JOBS:-2}

echo "== sanitize: configure and build $build"
# -O1 keeps the instrumented tests fast, -g1 (line tables) keeps the build fast and the
# reports readable. Examples and benchmarks are left to the release build of CI.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="${PE_CXX:-clang++}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DPE_SANITIZE=address,undefined -DPE_BUILD_TESTS=ON -DPE_BUILD_BENCH=OFF \
  -DPE_BUILD_EXAMPLES=OFF -DPE_BUILD_FUZZ="${PE_SANITIZE_FUZZ:-OFF}" >/dev/null
cmake --build "$build" -j "$jobs"
if [ "${PE_SANITIZE_FUZZ:-OFF}" = ON ]; then cmake --build "$build" -j "$jobs" --target pe_fuzz; fi

# Leak checks stay on; reports go to stderr of the suite whose test triggered them, and
# any report fails that suite (exit code from the sanitizer runtime).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "== sanitize: run the tests"
cd "$build"
# The property tests draw a tenth of their random instances (tests/random_trials.h): the
# same seeds, so the first tenth of what the release run draws.
export PE_TEST_TRIALS=0.1
# Left to the release build: the never-worse sweeps (45 profiles x 130 points, and HPGO's
# examples at default effort) are arithmetic over code the other tests already cover; the
# thread-count determinism sweeps rerun the same search; the terminal progress test needs a
# point that plans for seconds; the README's commands plan transformers on 256 and 512 GPUs, each
# seconds in release and a minute and more under ASan, through the same code the
# transformer tests cover; the relaxed-pass retry and greedy test plans GNMT-16 on 32 GPUs at
# the default effort (12 s in release, minutes under ASan) through the dynamic program the
# exhaustive tests cover. So are the searches at scale that check answers, not memory: a
# 10,000-layer chain, the more-devices sweep of three bundled profiles, the
# 70B transformer's flag bounds, a table row at GBS 2^30 and VGG-19 on 256 GPUs (each 1 to
# 10 s in release, 1 to 5 minutes under ASan), and the rows of docs/bad-inputs.md that plan
# at scale (a million GPUs, GBS 2^30). Under ASan these would take over two thirds of this
# step. Also left out: the library's own one-versus-two-threads sweep (as the CLI's), the
# closing passes' proofs on GNMT, GNMT-32 and DenseNet-121 (answers; close_gaps runs in the
# other planner tests; GNMT-32's takes 30 s under ASan), the prime batch size's plan (ResNet-50
# at GBS 4001, searched twice: 24 s), and a sweep a signal must not stop (it runs to its end:
# 35 s under ASan for code the other tests cover; the interrupted sweeps stay). And two
# exhaustive checks whose oracle enumerates every plan of 8 devices (20 s each under ASan):
# the stage-width and copy limits and the small transformer's variants, which the lighter
# exhaustive checks and the CLI's option tests run through the same code. And three more
# checks of time, not memory: GNMT-32's GPipe waves proof (11 s under ASan; an answer, like
# the other proofs), simplified GNMT-32's timed closing proof (8 s in release, an answer too)
# and the million chunks of bubble filling (24 s under ASan; the fill's memory is the fill
# tests' and its property test's, on fewer chunks). And the installed package's consumer
# (7 s under ASan): it checks the install and find_package, not memory.
# And the signal that lands while a 40 MB trace is written (25 s under ASan, nearly all of it
# building the trace): the other interrupt tests run the signal handling under ASan. And the
# dynamic program's memory-limit check on VGG-19's large rows (72 s under ASan, against 6 s in
# release): it checks where passes stop and that threads agree, answers; the planner's test of a
# pass memory limit runs the same stops under ASan in a fraction of a second. And the
# more-effort check over every bundled profile (three searches of each point and, where their
# gap is above 5 %, of its first machine: 11 s in release, three minutes under ASan): it checks
# answers, through the searches the other tests run.
# One process per suite, not per test (.ci/suites.sh says why).
bash "$root/.ci/suites.sh" "$build" "$jobs" \
  "^BundledProfiles/NeverWorse|^NeverWorseAtDefaultEffort|^PePlanDeterminism|^ProgressOnATerminal.TheTimeMoves|^ReadmeCommands.PrintWhatTheReadmeShows$|^NumericModel.TenThousandLayerChainThatNeedsAPipelinePlansInSeconds$|^MoreDevices.NeverSlowerOnBundledProfiles$|^MoreDevices.TheLargestClusterAFileTakesPlansAsItsFirstMachinesDo$|^ModelFlag.TheFlagsBoundEachStagesSplitAndRecomputation$|^Report.SweepTableColumnsNeverRunTogether$|^Planner.CoarsePassesFindWidePlansWhereExactPassesRunOut$|^Planner.GreedyPassesReachTheUnlimitedPlanAndTheBoundClearsThePartsFloorOnFourMachines$|^Planner.NarrowShapesThatRanOutStillGetTheirBalancedCuts$|^Planner.PassesBetweenRoundsProveNasnetOptimalAtGbs256$|^Planner.BlockPassesPlansPolishToNasnetsFasterPlanOnTwoMachines$|^Planner.BlockPassesProveNasnetOptimalOnSixteenSingleGpuMachines$|^Planner.RefiningPastAStallProvesNasnetOptimalOnSixteenSingleGpuMachines$|^Planner.TimedClosingWithTheRefiningEffortLeftProvesGnmt32Optimal$|^Planner.UntimedClosingWithTheRefiningEffortLeftProvesResnet101Optimal$|^Planner.RefiningPassesEnumerateTheirBandAndProveDensenetOptimalOnSixtyFourGpus$|^Planner.PolishedRefiningPlansAndWorstTermBucketsProveNasnetOptimalAtGbs32$|^Planner.TimedPassesGoOnWhileTheyRaiseTheirBoundAndStopBeforeOneThatCannotFit$|^Planner.StalledRefiningPassesGoOnWithTheStepsLeft$|^Planner.MergedPassesOfMoreFieldsGoOnWithTheStepsLeft$|^Planner.MergedPassesRaiseAWholeClustersShapePendingItsClosingPasses$|^Planner.ClosingPassesShortOfEffortResumeAfterTheRefiningPasses$|^Planner.PartsShapesTakeTheBoundOfTheirHolderOnceItsClosingPassesRaiseIt$|^Planner.NarrowPassesBeatTheFirstMachinesAndRelaxedPassesLiftTheShapesAtTheirFloor$|^BadInputTable.EveryRowAtScaleGetsTheDocumentedAnswer$|^Planner.SweepIsIdenticalForOneAndTwoThreads$|^Planner.ClosingPassesProveGnmtOptimalAtSmallBatches$|^Planner.ThirdClosingPassProvesGnmt32OptimalOnTwoMachines$|^Planner.PrimeBatchSizeFitsAsAccumulationAndGpipeAloneSaysWhy$|^Interrupt.AnIgnoredSignalStaysIgnored$|^HybridSearch.StageWidthAndCopyLimitsMatchExhaustiveEnumeration$|^StageVariantSearch.SmallTransformerMatchesExhaustiveEnumeration$|^Planner.GpipeWavesProveGnmtOptimalOnSingleGpuMachines$|^FillScale.AMillionChunksArePlacedBackToBack$|^Consumer.InstalledPackage$|^Interrupt.SigintWhileWritingALargeTraceKeepsTheOldFile$|^PipelineDp.APassStopsAtItsMemoryLimitOnAnyThreadCount$|^PointSearch.MoreEffortIsNeverWorseThanTheFirstEffort$"
echo "== sanitize: all tests passed under ASan + UBSan"
