// Reads a whole file, for tests that compare what a program or a function wrote.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pe::testing {

/// The bytes of the file at `path`; empty when it cannot be opened.
inline std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace pe::testing
