// Every `$ pe-plan ...` command shown in README.md is run, and the lines the README shows
// under it must be what the program prints: the lines before a "..." line are the first
// lines it prints, and each run of lines after one comes later in its output, in order. The
// README's examples cannot drift from what pe-plan says.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cli/program.h"
#include "file_text.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

struct Example {
  std::string command;  // after "$ "
  // The lines shown under it, in runs split at "..." lines; the first run may be empty.
  std::vector<std::vector<std::string>> runs;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A line that stands for lines left out: "..." (indented or not).
bool is_gap(const std::string& line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first != std::string::npos && line.compare(first, std::string::npos, "...") == 0;
}

// The fenced blocks of the README whose first line is "$ pe-plan ...".
std::vector<Example> readme_examples() {
  std::vector<Example> examples;
  bool in_block = false;
  Example* current = nullptr;
  for (const std::string& line : lines_of(file_text(PE_TEST_SOURCE_DIR "/README.md"))) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      current = nullptr;
      continue;
    }
    if (!in_block) continue;
    if (line.rfind("$ pe-plan ", 0) == 0) {
      examples.push_back({line.substr(2), {{}}});
      current = &examples.back();
    } else if (current && is_gap(line)) {
      current->runs.emplace_back();
    } else if (current) {
      current->runs.back().push_back(line);
    }
  }
  return examples;
}

// "FIRST,FIRST+STEP,...,LAST" for the README's `$(seq -s, FIRST LAST)` (step 1) and
// `$(seq -s, FIRST STEP LAST)`; `numbers` is what follows "$(seq -s, ".
std::string seq(const std::string& numbers) {
  std::istringstream in(numbers);
  std::vector<int> n;
  for (int value = 0; in >> value;) n.push_back(value);
  if (n.size() < 2 || n.size() > 3 || (n.size() == 3 && n[1] < 1))
    throw std::runtime_error("unsupported seq in README command: " + numbers);
  const int first = n.front(), step = n.size() == 3 ? n[1] : 1, last = n.back();
  std::string text;
  for (int i = first; i <= last; i += step) text += (i > first ? "," : "") + std::to_string(i);
  return text;
}

// The command's arguments after the program name: words split at spaces, "double quotes"
// kept together, `$(seq -s, FIRST [STEP] LAST)` expanded. Anything else a shell would do is
// refused.
std::vector<std::string> arguments(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, started = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == '"') {
      quoted = !quoted;
      started = true;
    } else if (c == ' ' && !quoted) {
      if (started) words.push_back(word);
      word.clear();
      started = false;
    } else if (c == '$' && !quoted) {
      const std::string prefix = "$(seq -s, ";
      const std::size_t close = command.find(')', i);
      if (command.compare(i, prefix.size(), prefix) != 0 || close == std::string::npos)
        throw std::runtime_error("unsupported shell construct in README command: " + command);
      word += seq(command.substr(i + prefix.size(), close - i - prefix.size()));
      started = true;
      i = close;
    } else {
      word += c;
      started = true;
    }
  }
  if (started) words.push_back(word);
  words.erase(words.begin());  // "pe-plan"
  return words;
}

// Where `run` stands in `printed` at `from` or later (at `from` only when `anchored`), or
// printed.size() when it does not.
std::size_t find_run(const std::vector<std::string>& printed, const std::vector<std::string>& run,
                     std::size_t from, bool anchored) {
  for (std::size_t at = from; at + run.size() <= printed.size(); ++at) {
    if (std::equal(run.begin(), run.end(), printed.begin() + static_cast<std::ptrdiff_t>(at)))
      return at;
    if (anchored) break;
  }
  return printed.size();
}

TEST(ReadmeCommands, PrintWhatTheReadmeShows) {
  const std::vector<Example> examples = readme_examples();
  ASSERT_GE(examples.size(), 2u) << "the README's `$ pe-plan` examples were not found";
  for (const Example& example : examples) {
    SCOPED_TRACE(example.command);
    const ProgramResult r = pe_plan(arguments(example.command));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> printed = lines_of(r.out);
    std::size_t next = 0, shown = 0;
    for (std::size_t k = 0; k < example.runs.size(); ++k) {
      const std::vector<std::string>& run = example.runs[k];
      shown += run.size();
      const std::size_t at = find_run(printed, run, next, k == 0);
      ASSERT_LT(at, printed.size()) << "the README shows, not found in order in the output:\n"
                                    << ::testing::PrintToString(run) << "\noutput:\n"
                                    << r.out;
      next = at + run.size();
    }
    EXPECT_GT(shown, 0u) << "no output shown under the command";
  }
}

}  // namespace
}  // namespace pe::testing
