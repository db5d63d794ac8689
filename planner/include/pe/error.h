// Error channels. Bad input throws InputError (exit code 1 in the CLI), bad usage throws
// UsageError (exit code 2). "No plan fits" is not an error: it is a normal result.
#pragma once

#include <stdexcept>
#include <string>

namespace pe {

/// Malformed or inconsistent input data. The message names the file, the line (when known)
/// and the key, the value seen and what was expected.
class InputError : public std::runtime_error {
 public:
  /// `where` is "file", "file:line" or "file:line: key"; `what` says what is wrong.
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what) {}
};

/// A command-line or API call that asks for something meaningless (unknown flag, a value
/// out of range). The message says what was expected.
class UsageError : public std::runtime_error {
 public:
  /// `what` says what was expected.
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

/// "file:line" for error messages; line 0 means "the whole file".
std::string location(const std::string& file, long line);

}  // namespace pe
