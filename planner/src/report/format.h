// Small text-formatting helpers shared by the reporters and renderers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pe/plan.h"

namespace pe::detail::format {

/// `value` with `digits` decimals, locale-independent. A value that rounds to zero prints
/// without a sign ("0.00", never "-0.00"); a value that is not finite prints as "-".
std::string fixed(double value, int digits);
/// Appends fixed(value, digits) to `out` without temporaries.
void append_fixed(std::string& out, double value, int digits);
/// A JSON number, also used by the CSV: finite values with 17 significant digits (they
/// read back exactly), others as null.
std::string json_number(double value);
/// An optimality gap for people: "exact" for 0, else "<=X%" with X rounded up to 0.1, so
/// the claim stays true.
std::string gap_text(double gap);
/// One CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or
/// a line break; as it is otherwise.
std::string csv_field(const std::string& text);
/// `bytes` in GB with 3 significant digits: "12.3 GB".
std::string gigabytes(Bytes bytes);
/// Pads or truncates on the left to `width` characters.
std::string right(const std::string& text, std::size_t width);
/// Pads on the right to `width` characters.
std::string left(const std::string& text, std::size_t width);

/// `n` and the noun, plural unless n is 1: counted(1, "GPU") is "1 GPU", else "N GPUs".
/// Nouns whose plural is not noun + "s" give it: counted(n, "micro-batch", "micro-batches").
std::string counted(long long n, std::string_view noun, std::string_view plural = {});

/// The name of stage `stage`: its entry of `names`, or "stage N" when that is missing or
/// empty.
std::string stage_label(const std::vector<std::string>& names, int stage);

/// Lays out rows of cells right-aligned in columns, each as wide as its entry of
/// `min_widths` or one wider than its widest cell, whichever is more, so that cells never
/// touch. A row may have fewer cells than there are columns. Returns one line per row,
/// without newlines.
std::vector<std::string> right_columns(const std::vector<std::vector<std::string>>& rows,
                                       const std::vector<std::size_t>& min_widths);

/// The largest peak memory of the plan's stages (0 for a plan without stages).
Bytes peak_memory(const Plan& plan);

/// How json_line writes a JSON value.
struct JsonStyle {
  std::string_view comma;         ///< Between members and items, e.g. ", ".
  std::string_view colon;         ///< Between a key and its value, e.g. ": ".
  std::string (*number)(double);  ///< Floating-point numbers, non-finite ones included.
};

/// `value` as JSON text on one line, laid out by `style`. Strings are escaped by
/// nlohmann::json (bytes that are not UTF-8 become U+FFFD); integers print in full.
std::string json_line(const nlohmann::ordered_json& value, const JsonStyle& style);
/// Appends json_line(value, style) to `out`.
void append_json_line(std::string& out, const nlohmann::ordered_json& value,
                      const JsonStyle& style);

}  // namespace pe::detail::format
