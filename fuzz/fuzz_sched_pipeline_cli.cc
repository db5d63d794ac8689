// Fuzzes sched-pipeline's command line. The first byte picks a mode:
//  - even: sched_pipeline_main with arguments drawn from a vocabulary of valid and invalid
//    options and values (files are the bundled examples or test files); the exit code must
//    be 0 or 1, errors must leave a message, and no "internal error" may escape;
//  - odd: the raw bytes, split at NULs, go to parse_sched_pipeline_options, which may only
//    answer with UsageError.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_support.h"
#include "pe/error.h"
#include "sched_pipeline_cli.h"
#include "sched_pipeline_options.h"

namespace {

using pe::fuzz::FlagVocabulary;
using pe::fuzz::source_path;

std::vector<std::string> counts() {
  return {"8", "1", "2", "0", "-1", "8abc", "4294967295", "4294967296", "18446744073709551616", ""};
}

std::vector<std::string> files(const std::string& name) {
  return {source_path("tests/data/pipeedge/example/" + name),
          source_path("tests/data/robustness/pipeedge/" + name), source_path("tests"),
          source_path("tests/data/robustness/pipeedge/no-such-" + name)};
}

const std::vector<FlagVocabulary>& vocabulary() {
  static const std::vector<FlagVocabulary> all{
      {"-b", counts()},
      {"--batch-size", counts()},
      {"--batch", counts()},
      {"-i", counts()},
      {"-o", counts()},
      {"--buffers", counts()},
      {"-d", {"torch.float32", "torch.float16", ""}},
      {"-m",
       {"google/vit-base-patch16-224", "google/vit-large-patch16-224", "DummyModel", "tiny", "nope",
        ""}},
      {"-M", files("models.yml")},
      {"-T", files("device_types.yml")},
      {"-D", files("devices.yml")},
      {"--dev-file", files("devices.yml")},
      {"-h", {}},
      {"", {"-x", "--unknown", "-", "--", "positional", "-b", "-b8", "-i2", "--help=1"}},
  };
  return all;
}

void run_vocabulary(pe::fuzz::ByteReader& in) {
  std::vector<std::string> args{"sched-pipeline"};
  for (std::string& arg : pe::fuzz::vocabulary_args(in, vocabulary(), 10))
    args.push_back(std::move(arg));
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  const int code = pe::sched_pipeline_main(static_cast<int>(args.size()), argv.data(), out, err);
  pe::fuzz::require(code == 0 || code == 1, "exit code other than 0 or 1");
  pe::fuzz::require(code == 0 || !err.str().empty(), "an error without a message");
  pe::fuzz::require(err.str().find("internal error") == std::string::npos,
                    "an unexpected exception escaped");
}

void run_raw(pe::fuzz::ByteReader& in) {
  try {
    pe::parse_sched_pipeline_options(pe::fuzz::split_args(in.rest()));
  } catch (const pe::UsageError&) {
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
