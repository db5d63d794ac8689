#include "options.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>

#include "pe/error.h"
#include "pe/model.h"
#include "pe/settings.h"
#include "pe/units.h"

namespace pe::cli {
namespace {

// A whole decimal text read as a finite double (subnormals included; nan, inf and
// hexadecimal, which strtod would take, are not).
bool read_finite(const std::string& text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  if (text.find_first_of("xX") != std::string::npos) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

double parse_number(const std::string& flag, const std::string& text, bool positive) {
  double value = 0;
  if (!read_finite(text, value) || value < 0 || (positive && value == 0))
    throw UsageError(flag + ": expected a " + (positive ? "positive" : "non-negative") +
                     " number, got '" + text + "'");
  return value;
}

// A number from `low` to `high`, both given as text for the message.
double parse_in_range(const std::string& flag, const std::string& text, double low,
                      double high, const std::string& range) {
  double value = 0;
  if (!read_finite(text, value) || value < low || value > high)
    throw UsageError(flag + ": expected a number from " + range + ", got '" + text + "'");
  return value;
}

// A positive number of GB (or GB/s) whose bytes (x 1e9) are still a finite double.
double parse_gigabytes(const std::string& flag, const std::string& text, const char* unit) {
  const double value = parse_number(flag, text, true);
  if (!std::isfinite(value * kGB))
    throw UsageError(flag + ": expected a number of " + unit + " below 1.7e299, got '" + text +
                     "' (too large to convert to bytes)");
  return value;
}

// A bandwidth in GB/s of at least one byte per second (a subnormal one makes times inf).
double parse_bandwidth(const std::string& flag, const std::string& text) {
  const double value = parse_gigabytes(flag, text, "GB/s");
  if (value * kGB < 1)
    throw UsageError(flag + ": expected at least 1e-9 GB/s (one byte per second), got '" +
                     text + "'");
  return value;
}

int parse_int(const std::string& flag, const std::string& text) {
  double value = parse_number(flag, text, true);
  if (value != std::floor(value) || value > 1e9)
    throw UsageError(flag + ": expected a whole number, got '" + text + "'");
  return static_cast<int>(value);
}

// A whole number of search steps, 0 (unlimited) to 10^18.
std::uint64_t parse_effort(const std::string& text) {
  const std::string expected = "--search-effort: expected a whole number of steps from 0 "
                               "(unlimited) to 1e18, got '" + text + "'";
  double value = 0;
  try {
    value = parse_number("--search-effort", text, false);
  } catch (const UsageError&) {
    throw UsageError(expected);
  }
  if (value != std::floor(value) || value > 1e18) throw UsageError(expected);
  return static_cast<std::uint64_t>(value);
}

Format parse_format(const std::string& text) {
  if (text == "table") return Format::Table;
  if (text == "csv") return Format::Csv;
  if (text == "json") return Format::Json;
  throw UsageError("--format: expected table, csv or json, got '" + text + "'");
}

using Setter = std::function<void(Options&, const std::string&)>;

// The value of a flag that names a file; an empty one is bad usage.
std::string path_value(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + ": expected a file path, got ''");
  return text;
}

// A setter for an optional file-path flag.
Setter path_flag(const std::string& flag, std::optional<std::string> Options::*member) {
  return [flag, member](Options& o, const std::string& v) { o.*member = path_value(flag, v); };
}

const std::map<std::string, Setter>& value_flags() {
  static const std::map<std::string, Setter> flags{
      {"--profile", [](Options& o, const std::string& v) { o.profile = path_value("--profile", v); }},
      {"--pbs", [](Options& o, const std::string& v) { o.pbs = parse_in_range("--pbs", v, kMinProfileBatch, kMaxProfileBatch, "0.001 to 2^30"); }},
      {"--gbs", [](Options& o, const std::string& v) { o.gbs = v; }},
      {"--devices", [](Options& o, const std::string& v) { o.devices = v; }},
      {"--cluster", path_flag("--cluster", &Options::cluster_file)},
      {"--intra-bw", [](Options& o, const std::string& v) { o.intra_bw = parse_bandwidth("--intra-bw", v); }},
      {"--inter-bw", [](Options& o, const std::string& v) { o.inter_bw = parse_bandwidth("--inter-bw", v); }},
      {"--inter-p2p-bw", [](Options& o, const std::string& v) { o.inter_p2p_bw = parse_bandwidth("--inter-p2p-bw", v); }},
      {"--memory-gb", [](Options& o, const std::string& v) { o.memory_gb = parse_gigabytes("--memory-gb", v, "GB"); }},
      {"--mbs", [](Options& o, const std::string& v) { o.mbs = parse_int("--mbs", v); }},
      {"--optimizer-scaling", [](Options& o, const std::string& v) { o.optimizer_scaling = parse_in_range("--optimizer-scaling", v, 1, kMaxOptimizerScaling, "1 to 1e6"); }},
      {"--activation-bytes-per-sample", [](Options& o, const std::string& v) { o.activation_bytes_per_sample = parse_in_range("--activation-bytes-per-sample", v, 0, kMaxModelBytes, "0 to 1e18"); }},
      {"--schedule", [](Options& o, const std::string& v) {
         if (v != "1f1b" && v != "gpipe" && v != "best")
           throw UsageError("--schedule: expected 1f1b, gpipe or best, got '" + v + "'");
         o.schedule = v;
       }},
      {"--top", [](Options& o, const std::string& v) { o.top = parse_int("--top", v); }},
      {"--search-effort", [](Options& o, const std::string& v) { o.search_effort = parse_effort(v); }},
      {"--format", [](Options& o, const std::string& v) { o.format = parse_format(v); }},
      {"--trace", path_flag("--trace", &Options::trace)},
      {"--svg", path_flag("--svg", &Options::svg)},
      {"--plot", path_flag("--plot", &Options::plot)},
      {"--fill", path_flag("--fill", &Options::fill)},
      {"--export-sched", path_flag("--export-sched", &Options::export_sched)},
      {"--hosts", [](Options& o, const std::string& v) { o.hosts = v; }},
      {"--plan-gbs", [](Options& o, const std::string& v) { o.plan_gbs = parse_int("--plan-gbs", v); }},
  };
  return flags;
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  Options options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    if (flag == "-h" || flag == "--help") { options.help = true; continue; }
    if (flag == "--version") { options.version = true; continue; }
    const std::size_t eq = flag.find('=');
    const bool inline_value = flag.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) value = flag.substr(eq + 1), flag = flag.substr(0, eq);
    auto it = value_flags().find(flag);
    if (it == value_flags().end())
      throw UsageError("unknown option '" + args[i] + "' (see pe-plan --help)");
    if (!inline_value) {
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value (see pe-plan --help)");
      value = args[++i];
    }
    it->second(options, value);
  }
  if (options.devices && options.cluster_file)
    throw UsageError("give either --devices or --cluster, not both");
  return options;
}

}  // namespace pe::cli
