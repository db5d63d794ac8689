#include "standard_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace pe::cli {

int finish_standard_output(int status, const char* program) {
  errno = 0;
  std::cout.flush();
  bool written = static_cast<bool>(std::cout);
  int error = errno;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) written = false;
  if (error == 0) error = errno;
  if (written) return status;
  std::cerr << program
            << ": cannot write standard output: " << (error ? std::strerror(error) : "write error")
            << "\n";
  return status == 0 ? 1 : status;
}

}  // namespace pe::cli
