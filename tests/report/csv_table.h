// A small RFC 4180 CSV reader for tests: quoted fields, doubled quotes, commas and line
// breaks inside quotes. Each row maps the header's column names to its fields.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace pe::testing {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

/// The records of `text`; each record ends at an unquoted '\n'.
inline std::vector<std::vector<std::string>> csv_records(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
      field += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == ',') {
      record.push_back(field);
      field.clear();
    } else if (!quoted && c == '\n') {
      record.push_back(field);
      records.push_back(record);
      record.clear();
      field.clear();
    } else {
      field += c;
    }
  }
  if (quoted) throw std::runtime_error("CSV ends inside a quoted field");
  if (!field.empty() || !record.empty()) throw std::runtime_error("CSV does not end in '\\n'");
  return records;
}

/// The header and rows of `text`; a row with another field count than the header throws.
inline CsvTable read_csv(const std::string& text) {
  const std::vector<std::vector<std::string>> records = csv_records(text);
  if (records.empty()) throw std::runtime_error("CSV without a header");
  CsvTable table{records[0], {}};
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.header.size())
      throw std::runtime_error("CSV row " + std::to_string(r) + " has " +
                               std::to_string(records[r].size()) + " fields, the header " +
                               std::to_string(table.header.size()));
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < table.header.size(); ++c) row[table.header[c]] = records[r][c];
    table.rows.push_back(row);
  }
  return table;
}

}  // namespace pe::testing
