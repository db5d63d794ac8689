// Error channels. Every exception the library throws derives from pe::Error. Bad input
// throws InputError (exit code 1 in the CLI), bad usage throws UsageError (exit code 2).
// "No plan fits" is not an error: it is a normal result.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace pe {

/// The base of every exception the pe libraries throw: catch it to catch them all.
class Error : public std::runtime_error {
 public:
  /// `what` is the whole message.
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// `text` with control characters other than newline and tab (bytes 0x00-0x1f and 0x7f)
/// written as "\xHH", so that names read from a file cannot drive the terminal.
std::string escape_controls(const std::string& text);

/// Malformed or inconsistent input data. The message names the file, the line (when known)
/// and the key, the value seen and what was expected. Control characters in it (from
/// names in the input) are escaped (escape_controls).
class InputError : public Error {
 public:
  /// `where` is "file", "file:line" or "file:line: key"; `what` says what is wrong.
  InputError(const std::string& where, const std::string& what)
      : Error(escape_controls(where.empty() ? what : where + ": " + what)) {}
};

/// An API call (or command line) that asks for something meaningless: a setting out of
/// range, text that does not parse. The message says what was expected. When the fault
/// lies in one setting or argument, field() names it as the message does, e.g.
/// "TrainingSettings::min_micro_batch", "SearchOptions::top" or "parse_batch_sizes" (the
/// text given to that function), so that a front end can name its own spelling of it.
class UsageError : public Error {
 public:
  /// `what` says what was expected; no field.
  explicit UsageError(const std::string& what) : Error(what) {}
  /// `field` is the API field or function at fault; `what`, the whole message, names it.
  UsageError(std::string field, const std::string& what) : Error(what), field_(std::move(field)) {}

  /// The API field or function at fault, as named in the message; empty when none.
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

/// An operation stopped early because its caller asked it to (a cancel flag was set, e.g.
/// by a signal handler). Not a fault of the input or the usage; what it had begun is undone.
class CancelledError : public Error {
 public:
  /// `what` says what stopped.
  explicit CancelledError(const std::string& what) : Error(what) {}
};

/// "file:line" for error messages; line 0 means "the whole file".
std::string location(const std::string& file, long line);

}  // namespace pe
