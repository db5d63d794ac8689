// pe-plan --help: a fixed introduction and footer around the flags as declared.
#include <sstream>

#include "flags.h"
#include "options.h"

namespace pe::cli {
namespace {

constexpr std::size_t kDescriptionColumn = 24;

constexpr const char* kIntroduction =
    R"(Usage: pe-plan [OPTION]...
       pe-plan sched-pipeline [OPTION]...   (PipeEdge-compatible scheduler; -h for its options)

Plans hybrid data/pipeline parallel training: for every global batch size (GBS) it prints
plain data-parallel speedups and the fastest pipeline plan (stage cuts, devices per stage,
micro-batches, schedule). With no options it plans the bundled ResNet-50 profile for
GBS 32:4096:64 on 16 GPUs as 2 machines x 8.
)";

constexpr const char* kFooter =
    R"(
Environment: TBB_NUM_THREADS caps worker threads (results do not depend on it);
PE_PROFILES_DIR overrides where bundled profiles are found.
Progress: when stderr is a terminal and several batch sizes are planned, one line shows
the batch sizes done of all, the time so far and the slowest batch size so far.
Interrupting: Ctrl-C (SIGINT) or SIGTERM skips the batch sizes not yet started, prints no
report, writes no further file (one being written keeps its old content, and no temporary
file stays) and exits 130 or 143; a second signal stops at once.
Exit codes: 0 success (including "no plan fits"), 1 bad input file or an output
(file or standard output) that cannot be written, 2 bad usage, 128 + N on signal N.
)";

// "-h, --help" or "--gbs LIST".
std::string flag_synopsis(const CLI::Option& option) {
  std::string names;
  for (const std::string& name : option.get_snames()) names += "-" + name + ", ";
  for (const std::string& name : option.get_lnames()) names += "--" + name + ", ";
  names.resize(names.size() - 2);
  if (option.get_items_expected_max() > 0) names += " " + option.get_type_name();
  return names;
}

// "  --gbs LIST            first line of the description", further lines aligned below it.
std::string flag_help(const CLI::Option& option) {
  std::string text = "  " + flag_synopsis(option);
  text += text.size() < kDescriptionColumn ? std::string(kDescriptionColumn - text.size(), ' ')
                                           : "\n" + std::string(kDescriptionColumn, ' ');
  for (const char c : option.get_description()) {
    text += c;
    if (c == '\n') text += std::string(kDescriptionColumn, ' ');
  }
  return text + "\n";
}

}  // namespace

std::string help_text() {
  Options options;
  CLI::App app("pe-plan", "pe-plan");
  declare_flags(app, options);
  std::ostringstream help;
  help << kIntroduction;
  std::string group;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group() != group) help << "\n" << (group = option->get_group()) << ":\n";
    help << flag_help(*option);
  }
  help << kFooter;
  return help.str();
}

}  // namespace pe::cli
