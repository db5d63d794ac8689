// Small text-formatting helpers shared by the reporters.
#pragma once

#include <string>

namespace pe::format {

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

}  // namespace pe::format
