// Whole numbers in user text ("512", "16"): the one reader behind parse_batch_sizes and
// parse_machine_ends.
#pragma once

#include <optional>
#include <string>

namespace pe::detail {

/// The value of `text` when it is a whole decimal number from 1 to `max` and nothing else
/// (no sign but an optional leading '-', which fails the range, no spaces around it, no
/// trailing characters); nullopt otherwise.
std::optional<long> whole_number(const std::string& text, long max);

}  // namespace pe::detail
