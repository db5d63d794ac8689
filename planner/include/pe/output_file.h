// Writing result files (traces, charts, reports) so that readers never see half a file.
#pragma once

#include <atomic>
#include <string>

#include "pe/error.h"

namespace pe {

/// An output file could not be written. Not an input error: the message names the path
/// and the operating system's reason (e.g. "Permission denied").
class OutputError : public Error {
 public:
  /// `what` names the path and the reason.
  explicit OutputError(const std::string& what) : Error(what) {}
};

/// Writes `content` to `path` atomically: into a new temporary file in the same
/// directory, flushed to disk, then renamed over `path`. An existing regular file at
/// `path` keeps its permission bits; a new file gets 0666 minus the umask. A symbolic link
/// is followed: the file it names is replaced the same way, in that file's directory, and
/// the link stays a link. An existing character or block device, FIFO or socket is written
/// in place, as a shell redirection would (`/dev/null` stays a device). `/dev/stdout`,
/// `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` of an open descriptor are written
/// through that descriptor, at its offset, whatever file it is open on. On any failure
/// (missing or unwritable directory, `path` is a directory, disk full, a device that
/// refuses the write) throws OutputError naming `path`; a temporary file is removed,
/// leaving a replaced file as it was.
///
/// `cancel`, when not null, is read before each MiB written, before the flush and before the
/// rename: once it is true the temporary file is removed, the file at `path` stays as it
/// was, and CancelledError is thrown (a device or descriptor written in place keeps what
/// it already got). While a temporary file exists its name is registered for
/// remove_temporary_files().
void write_file_atomically(const std::string& path, const std::string& content,
                           const std::atomic<bool>* cancel = nullptr);

/// Removes the temporary files of the write_file_atomically calls in progress, in any
/// thread, so that a program ending at once (a second Ctrl-C) leaves none behind. It is
/// async-signal-safe (atomics and unlink(2) only): call it from a signal handler just before
/// _exit(). The writes it interrupts fail if the program goes on. Up to 64 writes at once
/// are registered; a temporary file of more (or of a name of 4096 bytes or more) is not.
void remove_temporary_files() noexcept;

/// Checks, without writing, the faults write_file_atomically would meet first, so that a
/// long computation need not run for nothing: throws OutputError naming `path` when it is
/// empty, ends in '/', is a directory, or when the directory it would be created in does
/// not exist or is not a directory. Permissions and disk space are left to the write.
void check_output_path(const std::string& path);

}  // namespace pe
