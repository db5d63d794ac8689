// Fuzzes pe-plan's command line. The first byte picks a mode:
//  - even: run_pe_plan with arguments drawn from a vocabulary of valid and invalid flags and
//    values (inputs are bundled or test files, outputs go to a scratch folder, sweeps stay
//    small); the exit code must be 0, 1 or 2 and errors must leave a message;
//  - odd: the raw bytes, split at NULs, go to parse_options, parse_batch_sizes and
//    parse_machine_ends, which may only answer with UsageError.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_support.h"
#include "options.h"
#include "pe/cluster.h"
#include "pe/error.h"
#include "pe/planner.h"
#include "run.h"

namespace {

using pe::fuzz::FlagVocabulary;
using pe::fuzz::source_path;

std::vector<std::string> numbers() {
  return {"1", "2", "25", "1e-9", "1e-300", "1e300", "0", "-1", "nan", "inf", "abc", ""};
}

// zero_time.txt stays the 7th profile: the finding pe_plan_zero_time_profile_hang.bin
// picks it by that index.
std::vector<FlagVocabulary> model_flags() {
  return {
      {"--profile",
       {source_path("tests/data/graphs/chain.txt"), source_path("tests/data/graphs/residual.txt"),
        "amb_issue_minimal", "alexnet", "no-such-profile", source_path("tests"),
        source_path("tests/data/robustness/graphs/zero_time.txt"),
        source_path("tests/data/robustness/graphs/nan_time.txt"),
        source_path("tests/data/robustness/graphs/some_zero_time.txt"),
        source_path("tests/data/robustness/graphs/denormal_time.txt"), ""}},
      {"--pbs", numbers()},
      {"--mbs", {"1", "3", "64", "0", "-2", "2.5", "1e9", "2147483648", "x"}},
      {"--optimizer-scaling", numbers()},
      {"--activation-bytes-per-sample", numbers()},
  };
}

std::vector<FlagVocabulary> cluster_flags() {
  return {
      {"--devices", {"1", "4", "2,4", "1,2,3", "8,16", "0", "4,4", "-1", "1000001", "a", "", "4,"}},
      {"--cluster",
       {source_path("tests/data/robustness/cluster/two_by_two.yml"),
        source_path("tests/data/robustness/cluster/zero_bandwidth.yml"),
        source_path("tests/data/robustness/cluster/missing.yml"), source_path("tests")}},
      {"--intra-bw", numbers()},
      {"--inter-bw", numbers()},
      {"--inter-p2p-bw", numbers()},
      {"--memory-gb", numbers()},
  };
}

std::vector<FlagVocabulary> search_flags() {
  return {
      {"--gbs",
       {"8", "64", "1", "3", "65536", "0", "-5", "1,2,3", "8:64:8", "64:8:8", "1:2", "8:64:0",
        "1073741825", "a,b", "8,", ",", ""}},
      {"--schedule", {"1f1b", "gpipe", "best", "2f2b", ""}},
      {"--top", {"1", "3", "0", "-1", "100000"}},
      {"--format", {"table", "csv", "json", "xml"}},
      {"--plan-gbs", {"8", "64", "7", "0"}},
      {"--search-effort", {"0", "1", "1000", "1e19", "-1"}},
  };
}

std::vector<FlagVocabulary> output_flags() {
  const std::string out = pe::fuzz::scratch_dir();
  const std::vector<std::string> files{out + "/a.out", out + "/no-such-dir/a.out", out};
  return {
      {"--trace", files},
      {"--svg", files},
      {"--plot", files},
      {"--export-sched", files},
      {"--fill",
       {source_path("tests/data/work/kfac.yml"), source_path("tests/data/work/cycle.yml"),
        out + "/missing.yml"}},
      {"--hosts", {"a,b,c,d", "a", "", "a,,b", "a,a"}},
      {"--help", {}},
      {"-h", {}},
      {"--version", {}},
      {"", {"--unknown", "-x", "", "--", "--=", "sched-pipeline", "--gbs", "=8"}},
  };
}

const std::vector<FlagVocabulary>& vocabulary() {
  static const std::vector<FlagVocabulary> all = [] {
    std::vector<FlagVocabulary> flags;
    for (const auto& part : {model_flags(), cluster_flags(), search_flags(), output_flags()})
      flags.insert(flags.end(), part.begin(), part.end());
    return flags;
  }();
  return all;
}

void run_vocabulary(pe::fuzz::ByteReader& in) {
  // Small defaults first; the fuzzed pairs may override them with vocabulary values.
  std::vector<std::string> args{
      "--profile", source_path("tests/data/graphs/chain.txt"), "--pbs", "8", "--gbs", "16"};
  for (std::string& arg : pe::fuzz::vocabulary_args(in, vocabulary(), 12))
    args.push_back(std::move(arg));
  std::ostringstream out, err;
  const int code = pe::cli::run_pe_plan(args, out, err);
  pe::fuzz::require(code >= 0 && code <= 2, "exit code outside 0..2");
  pe::fuzz::require(code == 0 || !err.str().empty(), "an error without a message");
}

template <typename Parse>
void expect_usage_error_or_value(Parse parse) {
  try {
    parse();
  } catch (const pe::UsageError&) {
  }
}

void run_raw(pe::fuzz::ByteReader& in) {
  const std::vector<std::string> args = pe::fuzz::split_args(in.rest());
  expect_usage_error_or_value([&] { pe::cli::parse_options(args); });
  for (const std::string& arg : args) {
    expect_usage_error_or_value([&] { pe::parse_batch_sizes(arg); });
    expect_usage_error_or_value([&] { pe::parse_machine_ends(arg); });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pe::fuzz::ByteReader in(data, size);
  if (in.byte() % 2 == 0)
    run_vocabulary(in);
  else
    run_raw(in);
  return 0;
}
