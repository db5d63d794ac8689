// Small text-formatting helpers shared by the reporters.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pe::detail::format {

/// Fixed-point number with `digits` decimals.
std::string fixed(double value, int digits);
/// A JSON number (finite values with up to 17 significant digits, else null).
std::string json_number(double value);
/// A JSON string literal with escapes.
std::string json_string(const std::string& text);
/// Pads or truncates on the left to `width` characters.
std::string right(const std::string& text, std::size_t width);
/// Pads on the right to `width` characters.
std::string left(const std::string& text, std::size_t width);

/// `n` and the noun, plural unless n is 1: counted(1, "GPU") is "1 GPU", else "N GPUs".
std::string counted(long long n, const std::string& noun);

/// Lays out rows of cells right-aligned in columns, each as wide as its entry of
/// `min_widths` or one wider than its widest cell, whichever is more, so that cells never
/// touch. A row may have fewer cells than there are columns. Returns one line per row,
/// without newlines.
std::vector<std::string> right_columns(const std::vector<std::vector<std::string>>& rows,
                                       const std::vector<std::size_t>& min_widths);

}  // namespace pe::detail::format
