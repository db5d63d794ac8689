// Runs every row of the table in docs/bad-inputs.md against the real programs, so the
// table cannot drift from what the programs answer. A row looks like
//   | G1 | `pe-plan --profile $DATA/x.txt --pbs 8` | 1 | `x.txt:1: forward_compute_time` |
// The command is split at spaces ('' is an empty argument; NAME=VALUE words before the
// program set environment variables); $DATA is tests/data and $OUT a scratch folder. The
// program must exit with the given code and print every `quoted` part of the answer
// column (on stdout or stderr).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/program.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

struct Row {
  std::string id;
  std::string command;
  int exit_code = -1;
  std::vector<std::string> answers;
};

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  return parts;
}

std::string trim(const std::string& text) {
  const std::size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// The `quoted` spans of a table cell.
std::vector<std::string> code_spans(const std::string& cell) {
  std::vector<std::string> spans;
  for (std::size_t open = cell.find('`'); open != std::string::npos;) {
    const std::size_t close = cell.find('`', open + 1);
    if (close == std::string::npos) break;
    spans.push_back(cell.substr(open + 1, close - open - 1));
    open = cell.find('`', close + 1);
  }
  return spans;
}

// A table row whose second cell is a command, or nothing.
std::optional<Row> parse_row(const std::string& line) {
  if (line.rfind("| ", 0) != 0) return std::nullopt;
  const std::vector<std::string> cells = split(line, '|');
  if (cells.size() < 5) return std::nullopt;
  const std::vector<std::string> command = code_spans(cells[2]);
  const std::string exit_code = trim(cells[3]);
  if (command.size() != 1 || exit_code.empty() ||
      exit_code.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return Row{trim(cells[1]), command[0], std::stoi(exit_code), code_spans(cells[4])};
}

std::vector<Row> table_rows() {
  std::ifstream in(std::string(PE_TEST_SOURCE_DIR) + "/docs/bad-inputs.md");
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);)
    if (std::optional<Row> row = parse_row(line)) rows.push_back(*row);
  return rows;
}

std::string expand(std::string word, const std::string& out_dir) {
  const std::pair<std::string, std::string> names[] = {{"$DATA", PE_TEST_DATA_DIR},
                                                       {"$OUT", out_dir}};
  for (const auto& [name, value] : names)
    for (std::size_t at = word.find(name); at != std::string::npos; at = word.find(name, at))
      word.replace(at, name.size(), value), at += value.size();
  return word == "''" ? "" : word;
}

ProgramResult run_row(const Row& row, const std::string& out_dir) {
  Environment env;
  std::vector<std::string> words = split(row.command, ' ');
  std::size_t program = 0;
  while (program < words.size() && words[program].find('=') != std::string::npos) {
    const std::size_t eq = words[program].find('=');
    env.emplace_back(words[program].substr(0, eq), expand(words[program].substr(eq + 1), out_dir));
    ++program;
  }
  if (program >= words.size()) throw std::runtime_error("no program in " + row.command);
  std::vector<std::string> args;
  for (std::size_t k = program + 1; k < words.size(); ++k)
    if (!words[k].empty()) args.push_back(expand(words[k], out_dir));
  const std::string binary =
      words[program] == "pe-plan" ? pe_plan_program() : sched_pipeline_program();
  return run_program(binary, args, env);
}

// The rows that plan at scale: seconds each in release, minutes under the sanitizers, which
// leave them out (.ci/sanitize.sh) with the other searches at scale.
const std::set<std::string> kAtScale{"A12", "A14", "A15"};

// Runs the rows whose id is (`at_scale`) or is not in kAtScale.
void check_rows(bool at_scale) {
  const std::vector<Row> rows = table_rows();
  ASSERT_GE(rows.size(), 40u) << "docs/bad-inputs.md lost its table";
  for (const std::string& id : kAtScale)
    ASSERT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.id == id; }))
        << id << " is no longer a row of docs/bad-inputs.md";
  const std::string out_dir =
      (std::filesystem::temp_directory_path() / ("pe-bad-inputs-" + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(out_dir);
  for (const Row& row : rows) {
    if (kAtScale.count(row.id) != static_cast<std::size_t>(at_scale)) continue;
    SCOPED_TRACE(row.id + ": " + row.command);
    const ProgramResult r = run_row(row, out_dir);
    EXPECT_EQ(r.exit_code, row.exit_code) << r.err;
    for (const std::string& answer : row.answers)
      EXPECT_THAT(r.out + r.err, ::testing::HasSubstr(expand(answer, out_dir)));
  }
  std::filesystem::remove_all(out_dir);
}

TEST(BadInputTable, EveryRowGetsTheDocumentedAnswer) { check_rows(false); }

TEST(BadInputTable, EveryRowAtScaleGetsTheDocumentedAnswer) { check_rows(true); }

}  // namespace
}  // namespace pe::testing
