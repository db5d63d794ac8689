#include "pe/error.h"

namespace pe {

std::string location(const std::string& file, long line) {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line);
}

}  // namespace pe
