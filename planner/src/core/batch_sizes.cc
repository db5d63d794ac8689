#include "pe/planner.h"

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/whole_number.h"
#include "pe/error.h"

namespace pe {
namespace {

constexpr long kMaxBatch = 1L << 30;

// The function whose argument is at fault (UsageError::field).
const std::string kField = "parse_batch_sizes";

int parse_positive(const std::string& item, const std::string& whole) {
  const std::optional<long> value = detail::whole_number(item, kMaxBatch);
  if (!value)
    throw UsageError(kField, kField + ": '" + item + "' in '" + whole +
                                 "' is not a batch size (a whole number from 1 to 2^30)");
  return static_cast<int>(*value);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

std::vector<int> parse_range(const std::vector<std::string>& parts, const std::string& text) {
  const int first = parse_positive(parts[0], text), last = parse_positive(parts[1], text),
            step = parse_positive(parts[2], text);
  if (last < first)
    throw UsageError(kField, kField + ": range '" + text + "' ends before it starts");
  if ((last - first) / step > 100000)
    throw UsageError(kField, kField + ": range '" + text +
                                 "' is too long, expected at most "
                                 "100001 batch sizes ((LAST - FIRST) / STEP <= 100000)");
  std::vector<int> sizes{first};
  for (long v = (first / step + 1) * static_cast<long>(step); v <= last; v += step)
    sizes.push_back(static_cast<int>(v));
  return sizes;
}

}  // namespace

std::vector<int> parse_batch_sizes(const std::string& text) {
  std::vector<std::string> parts = split(text, ':');
  if (parts.size() == 3) return parse_range(parts, text);
  if (parts.size() != 1)
    throw UsageError(kField,
                     kField + ": expected N, N,M,... or FIRST:LAST:STEP, got '" + text + "'");
  std::vector<int> sizes;
  for (const std::string& item : split(text, ',')) sizes.push_back(parse_positive(item, text));
  if (sizes.empty()) throw UsageError(kField, kField + ": no batch size given");
  return sizes;
}

}  // namespace pe
