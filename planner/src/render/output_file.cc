#include "pe/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace pe {
namespace {

// Names of the temporary files that exist now, for remove_temporary_files() in a signal
// handler: fixed storage and lock-free atomics only.
constexpr int kSlots = 64;
constexpr std::size_t kNameBytes = 4096;
enum SlotState : int { kFree = 0, kFilling = 1, kRegistered = 2 };
struct TemporarySlot {
  std::atomic<int> state{kFree};
  char name[kNameBytes] = {};
};
static_assert(std::atomic<int>::is_always_lock_free);
TemporarySlot temporary_slots[kSlots];

// Registers an existing temporary file; returns its slot, or -1 when none is free.
int register_temporary(const std::string& name) {
  if (name.size() >= kNameBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!temporary_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(temporary_slots[i].name, name.c_str(), name.size() + 1);
    temporary_slots[i].state.store(kRegistered);
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0) temporary_slots[slot].state.store(kFree);
}

bool cancelled(const std::atomic<bool>* cancel) { return cancel && cancel->load(); }

[[noreturn]] void stop(const std::string& path) {
  throw CancelledError("writing '" + path + "' was cancelled; the file is as it was");
}

[[noreturn]] void fail(const std::string& path, const std::string& doing, int error) {
  throw OutputError("cannot write '" + path + "': " + doing + ": " +
                    std::generic_category().message(error));
}

// Directory part of `path` with a trailing '/', or "" for a bare file name.
std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// Creates a fresh temporary file next to `path`; returns its descriptor and name.
int create_temporary(const std::string& path, std::string& name) {
  static std::atomic<unsigned> counter{0};
  const std::string base = directory_of(path) + "." + path.substr(directory_of(path).size());
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) fail(path, "creating a temporary file", errno);
  }
  fail(path, "creating a temporary file", EEXIST);
}

// Writes everything, retrying short writes, in pieces of at most a MiB with `cancel` read
// before each; returns 0, the errno of the failure, or ECANCELED.
int write_all(int fd, const std::string& content, const std::atomic<bool>* cancel) {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  std::size_t done = 0;
  while (done < content.size()) {
    if (cancelled(cancel)) return ECANCELED;
    const ssize_t n = ::write(fd, content.data() + done, std::min(content.size() - done, kPiece));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// Gives the temporary file the permissions of the file it replaces, if there is one.
int keep_mode(int fd, const std::string& path) {
  struct stat existing {};
  if (::stat(path.c_str(), &existing) != 0 || !S_ISREG(existing.st_mode)) return 0;
  return ::fchmod(fd, existing.st_mode & 07777) == 0 ? 0 : errno;
}

// What went wrong, if anything: an errno value and the step that failed.
struct Failure {
  int error = 0;
  const char* doing = "";
};

Failure fill_temporary(int fd, const std::string& path, const std::string& content,
                       const std::atomic<bool>* cancel) {
  if (int error = write_all(fd, content, cancel)) return {error, "writing"};
  if (int error = keep_mode(fd, path)) return {error, "setting permissions"};
  if (cancelled(cancel)) return {ECANCELED, "writing"};
  if (::fsync(fd) != 0) return {errno, "flushing to disk"};
  return {};
}

// Replaces the regular file (or nothing) at `target` by a new file; errors name `shown`.
void replace_atomically(const std::string& target, const std::string& shown,
                        const std::string& content, const std::atomic<bool>* cancel) {
  std::string temporary;
  const int fd = create_temporary(target, temporary);
  const int slot = register_temporary(temporary);
  Failure failure = fill_temporary(fd, target, content, cancel);
  if (::close(fd) != 0 && failure.error == 0) failure = {errno, "closing"};
  if (failure.error == 0 && cancelled(cancel)) failure = {ECANCELED, "writing"};
  if (failure.error == 0 && ::rename(temporary.c_str(), target.c_str()) != 0)
    failure = {errno, "replacing the file"};
  if (failure.error != 0) ::unlink(temporary.c_str());
  unregister_temporary(slot);
  if (failure.error == ECANCELED) stop(shown);
  if (failure.error != 0) fail(shown, failure.doing, failure.error);
}

// Writes into an existing device, FIFO or socket in place, as a shell redirection would.
void write_in_place(const std::string& path, const std::string& content,
                    const std::atomic<bool>* cancel) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail(path, "opening", errno);
  Failure failure;
  if (int error = write_all(fd, content, cancel)) failure = {error, "writing"};
  if (::close(fd) != 0 && failure.error == 0) failure = {errno, "closing"};
  if (failure.error == ECANCELED) stop(path);
  if (failure.error != 0) fail(path, failure.doing, failure.error);
}

// The file a chain of symbolic links starting at `path` ends in, which need not exist.
std::string link_target(const std::string& path) {
  constexpr int kMaxLinks = 40;  // as Linux follows before ELOOP
  namespace fs = std::filesystem;
  fs::path at = path;
  for (int hops = 0; hops < kMaxLinks; ++hops) {
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(at, error))) return at.string();
    const fs::path next = fs::read_symlink(at, error);
    if (error) fail(path, "reading the symbolic link", error.value());
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  fail(path, "resolving the symbolic link", ELOOP);
}

// The descriptor a path names directly (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N), when it is open in this process; -1 otherwise.
int open_descriptor(const std::string& path) {
  int fd = -1;
  if (path == "/dev/stdout")
    fd = 1;
  else if (path == "/dev/stderr")
    fd = 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.rfind(prefix, 0) != 0) continue;
    const std::string digits = path.substr(prefix.size());
    if (digits.empty() || digits.size() > 6 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      return -1;
    fd = std::stoi(digits);
  }
  return fd >= 0 && ::fcntl(fd, F_GETFD) != -1 ? fd : -1;
}

bool is_special(const struct stat& info) {
  return S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) || S_ISFIFO(info.st_mode) ||
         S_ISSOCK(info.st_mode);
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw OutputError("cannot write '" + path + "': " + why);
}

}  // namespace

void check_output_path(const std::string& path) {
  if (path.empty() || path.back() == '/') refuse(path, "not a file name");
  if (open_descriptor(path) >= 0) return;
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) refuse(path, std::generic_category().message(EISDIR));
    return;
  }
  // A new file (or a dangling link's target): its directory must exist.
  std::string directory = directory_of(link_target(path));
  if (directory.empty()) directory = "./";
  if (::stat(directory.c_str(), &info) != 0)
    refuse(path, "directory '" + directory + "': " + std::generic_category().message(errno));
  if (!S_ISDIR(info.st_mode)) refuse(path, "'" + directory + "' is not a directory");
}

void write_file_atomically(const std::string& path, const std::string& content,
                           const std::atomic<bool>* cancel) {
  if (path.empty() || path.back() == '/') fail(path, "not a file name", EISDIR);
  if (cancelled(cancel)) stop(path);
  // An open descriptor is written through, at its own offset, as `>&N` would: replacing
  // the file behind `> out.txt` would leave the descriptor on the old one.
  if (const int fd = open_descriptor(path); fd >= 0) {
    const int error = write_all(fd, content, cancel);
    if (error == ECANCELED) stop(path);
    if (error != 0) fail(path, "writing", error);
    return;
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return replace_atomically(path, path, content, cancel);
  const bool link = S_ISLNK(info.st_mode);
  // The kernel follows links (also /proc's, as /dev/stdout is) to see what they name.
  if (link && ::stat(path.c_str(), &info) != 0) info.st_mode = 0;
  if (is_special(info)) return write_in_place(path, content, cancel);
  // Replace the file a link names, in its own directory, and leave the link alone.
  replace_atomically(link ? link_target(path) : path, path, content, cancel);
}

void remove_temporary_files() noexcept {
  for (TemporarySlot& slot : temporary_slots)
    if (slot.state.load() == kRegistered) ::unlink(slot.name);
}

}  // namespace pe
