#include "core/whole_number.h"

#include <stdexcept>

namespace pe::detail {

std::optional<long> whole_number(const std::string& text, long max) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size() || value < 1 || value > max) return std::nullopt;
  return value;
}

}  // namespace pe::detail
