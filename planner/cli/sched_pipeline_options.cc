#include "sched_pipeline_options.h"

#include <algorithm>
#include <array>

#include "pe/error.h"

namespace pe {
namespace {

/// One option: its short letter, long name and whether it takes a value.
struct OptionSpec {
  char letter;
  const char* name;
  bool takes_value;
};

/// Options without a short form have letter '\0' (and are looked up by name only).
constexpr std::array<OptionSpec, 10> kOptions = {{{'b', "batch-size", true},
                                                  {'i', "buffers-in", true},
                                                  {'o', "buffers-out", true},
                                                  {'d', "dtype", true},
                                                  {'m', "model-name", true},
                                                  {'M', "models-file", true},
                                                  {'T', "dev-types-file", true},
                                                  {'D', "dev-file", true},
                                                  {'h', "help", false},
                                                  {'\0', "search-memory-mb", true}}};

constexpr std::uint64_t kLargestNumber = 4294967295ULL;

const OptionSpec& by_letter(char letter) {
  for (const OptionSpec& spec : kOptions)
    if (spec.letter == letter && letter != '\0') return spec;
  throw UsageError(std::string("invalid option -- '") + letter + "'");
}

/// The option whose long name is `name` or, failing that, the only one it abbreviates.
const OptionSpec& by_name(const std::string& name) {
  const OptionSpec* found = nullptr;
  for (const OptionSpec& spec : kOptions) {
    const std::string full = spec.name;
    if (full == name) return spec;
    if (full.compare(0, name.size(), name) != 0) continue;
    if (found != nullptr) throw UsageError("option '--" + name + "' is ambiguous");
    found = &spec;
  }
  if (found == nullptr) throw UsageError("unrecognized option '--" + name + "'");
  return *found;
}

std::string label(const OptionSpec& spec) {
  if (spec.letter == '\0') return std::string("--") + spec.name;
  return std::string("-") + spec.letter + "/--" + spec.name;
}

std::uint64_t parse_number(const OptionSpec& spec, const std::string& text, std::uint64_t least) {
  const std::string expected = least > 0 ? "a positive integer" : "a non-negative integer";
  const std::size_t first = std::min(text.find_first_not_of('0'), text.size());
  const std::string significant = first == text.size() && !text.empty() ? "0" : text.substr(first);
  const bool digits =
      !text.empty() && significant.size() <= 10 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const std::uint64_t value = digits ? std::stoull(significant) : 0;
  if (!digits || value < least || value > kLargestNumber)
    throw UsageError(label(spec) + ": expected " + expected + " up to " +
                     std::to_string(kLargestNumber) + ", got '" + text + "'");
  return value;
}

void apply(const OptionSpec& spec, const std::string& value, SchedPipelineOptions& options) {
  switch (spec.letter) {
    case 'b':
      options.batch_size = parse_number(spec, value, 1);
      break;
    case 'i':
      options.buffers_in = parse_number(spec, value, 0);
      break;
    case 'o':
      options.buffers_out = parse_number(spec, value, 0);
      break;
    case 'd':
      options.dtype = value;
      break;
    case 'm':
      options.model_name = value;
      break;
    case 'M':
      options.models_file = value;
      break;
    case 'T':
      options.dev_types_file = value;
      break;
    case 'D':
      options.dev_file = value;
      break;
    case '\0':
      options.search_memory_mb = parse_number(spec, value, 1);
      break;
    default:
      options.help = true;
      break;
  }
}

/// Cursor over the arguments; `next_value` consumes the argument after an option.
struct Arguments {
  const std::vector<std::string>& items;
  std::size_t at = 0;

  std::string next_value(const std::string& shown) {
    if (at + 1 >= items.size()) throw UsageError("option requires an argument -- '" + shown + "'");
    return items[++at];
  }
};

void parse_long(Arguments& args, SchedPipelineOptions& options) {
  const std::string body = args.items[args.at].substr(2);
  const std::size_t equals = body.find('=');
  const OptionSpec& spec = by_name(body.substr(0, equals));
  if (!spec.takes_value) {
    if (equals != std::string::npos)
      throw UsageError(std::string("option '--") + spec.name + "' doesn't allow an argument");
    return apply(spec, "", options);
  }
  const std::string value =
      equals != std::string::npos ? body.substr(equals + 1) : args.next_value(spec.name);
  apply(spec, value, options);
}

/// A cluster of short options such as `-h` or `-b8`; a value option takes the rest.
void parse_short(Arguments& args, SchedPipelineOptions& options) {
  const std::string& item = args.items[args.at];
  for (std::size_t k = 1; k < item.size() && !options.help; ++k) {
    const OptionSpec& spec = by_letter(item[k]);
    if (!spec.takes_value) {
      apply(spec, "", options);
      continue;
    }
    const std::string value =
        k + 1 < item.size() ? item.substr(k + 1) : args.next_value(std::string(1, spec.letter));
    return apply(spec, value, options);
  }
}

}  // namespace

SchedPipelineOptions parse_sched_pipeline_options(const std::vector<std::string>& items) {
  SchedPipelineOptions options;
  Arguments args{items};
  for (; args.at < items.size() && !options.help; ++args.at) {
    const std::string& item = items[args.at];
    if (item == "--") {
      if (args.at + 1 < items.size())
        throw UsageError("unexpected argument '" + items[args.at + 1] +
                         "' (sched-pipeline takes only options)");
      break;
    }
    if (item.size() > 2 && item.compare(0, 2, "--") == 0)
      parse_long(args, options);
    else if (item.size() > 1 && item[0] == '-')
      parse_short(args, options);
    else
      throw UsageError("unexpected argument '" + item + "' (sched-pipeline takes only options)");
  }
  return options;
}

std::string sched_pipeline_usage() {
  return "Usage: sched-pipeline [OPTION]...\n"
         "\n"
         "Run the pipeline partition scheduling algorithm.\n"
         "\n"
         "Options:\n"
         "  -b, --batch-size=N         microbatch size (default=8)\n"
         "  -i, --buffers-in=N         input buffers count (default=2)\n"
         "  -o, --buffers-out=N        output buffers count (default=2)\n"
         "  -d, --dtype=NAME           data type (default=torch.float32)\n"
         "  -m, --model-name=NAME      model name (default=google/vit-base-patch16-224)\n"
         "  -M, --models-file=PATH     models YAML file (default=models.yml)\n"
         "  -T, --dev-types-file=PATH  device types YAML file (default=device_types.yml)\n"
         "  -D, --dev-file=PATH        devices YAML file (default=devices.yml)\n"
         "  -h, --help                 print this message and exit\n"
         "      --search-memory-mb=N   memory for the exact search's tables in MiB (default=64;\n"
         "                             pe-plan's addition: beyond it fewer hosts are searched\n"
         "                             and a warning says the schedule may not be optimal)\n";
}

}  // namespace pe
