// Writing result files (traces, charts, reports) so that readers never see half a file.
#pragma once

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
void write_file_atomically(const std::string& path, const std::string& content);

/// Checks, without writing, the faults write_file_atomically would meet first, so that a
/// long computation need not run for nothing: throws OutputError naming `path` when it is
/// empty, ends in '/', is a directory, or when the directory it would be created in does
/// not exist or is not a directory. Permissions and disk space are left to the write.
void check_output_path(const std::string& path);

}  // namespace pe
