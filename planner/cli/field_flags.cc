#include "field_flags.h"

#include <map>

namespace pe::cli {

std::string flag_for_field(const std::string& field) {
  static const std::map<std::string, std::string> flags{
      {"TrainingSettings::min_micro_batch", "--mbs"},
      {"TrainingSettings::optimizer_scaling", "--optimizer-scaling"},
      {"TrainingSettings::activation_bytes_per_sample", "--activation-bytes-per-sample"},
      {"SearchOptions::top", "--top"},
      {"parse_batch_sizes", "--gbs"},
      {"parse_machine_ends", "--devices"},
      {"cluster_from_machine_ends", "--devices"},
  };
  const auto it = flags.find(field);
  return it == flags.end() ? "" : it->second;
}

std::string usage_message(const UsageError& error) {
  std::string message = error.what();
  const std::string& field = error.field();
  const std::string flag = flag_for_field(field);
  if (field.empty() || flag.empty()) return message;
  for (std::size_t at = message.find(field); at != std::string::npos;
       at = message.find(field, at + flag.size()))
    message.replace(at, field.size(), flag);
  return message;
}

}  // namespace pe::cli
