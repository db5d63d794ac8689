// Test helper: renders an SVG with rsvg-convert and reads the PNG's size.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "pe/output_file.h"
#include "test_paths.h"

namespace pe::testing {

/// True when the rsvg-convert program (Debian package librsvg2-bin) is on the PATH.
inline bool have_rsvg_convert() {
  return std::system("command -v rsvg-convert > /dev/null 2>&1") == 0;
}

/// Width and height from a PNG's IHDR chunk; {-1, -1} when the file is not a PNG.
inline std::pair<long, long> png_size(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[24] = {};
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) return {-1, -1};
  const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (!std::equal(signature, signature + 8, header) ||
      std::string(reinterpret_cast<char*>(header + 12), 4) != "IHDR")
    return {-1, -1};
  auto big_endian = [&](int at) {
    return (long{header[at]} << 24) | (long{header[at + 1]} << 16) | (long{header[at + 2]} << 8) |
           long{header[at + 3]};
  };
  return {big_endian(16), big_endian(20)};
}

/// Writes `svg` under the build tree, converts it to PNG and returns the PNG's size
/// ({-1, -1} if the conversion failed).
inline std::pair<long, long> render_png(const std::string& svg, const std::string& name) {
  const auto dir = std::filesystem::path(PE_TEST_BINARY_DIR) / "scratch";
  std::filesystem::create_directories(dir);
  const std::string stem = (dir / (name + "-" + std::to_string(::getpid()))).string();
  write_file_atomically(stem + ".svg", svg);
  const std::string command = "rsvg-convert -o '" + stem + ".png' '" + stem + ".svg'";
  if (std::system(command.c_str()) != 0) return {-1, -1};
  const auto size = png_size(stem + ".png");
  std::filesystem::remove(stem + ".svg");
  std::filesystem::remove(stem + ".png");
  return size;
}

}  // namespace pe::testing
