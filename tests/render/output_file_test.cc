#include "pe/output_file.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "file_text.h"
#include "test_paths.h"

namespace pe {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using testing::file_text;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A fresh, empty directory under the build tree, removed at the end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(fs::path(PE_TEST_BINARY_DIR) / "scratch" /
              (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::permissions(path_, fs::perms::owner_all, ignored);
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path_), {}));
  }

 private:
  fs::path path_;
};

TEST(OutputFile, WritesContent) {
  ScratchDir dir("write");
  const fs::path file = dir.path() / "trace.json";
  write_file_atomically(file.string(), "[1, 2]\n");
  EXPECT_EQ(file_text(file), "[1, 2]\n");
  EXPECT_EQ(dir.entries(), 1u);  // no temporary file left
}

TEST(OutputFile, OverwritesAndKeepsPermissions) {
  ScratchDir dir("overwrite");
  const fs::path file = dir.path() / "chart.svg";
  write_file_atomically(file.string(), "a much longer first version");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_file_atomically(file.string(), "v2");
  EXPECT_EQ(file_text(file), "v2");
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(OutputFile, WritesEmptyAndBinaryContent) {
  ScratchDir dir("binary");
  const std::string bytes("\0\x01\xff", 3);
  write_file_atomically((dir.path() / "b").string(), bytes);
  write_file_atomically((dir.path() / "e").string(), "");
  EXPECT_EQ(file_text(dir.path() / "b"), bytes);
  EXPECT_EQ(file_text(dir.path() / "e"), "");
}

void expect_failure(const std::string& path, const std::string& reason) {
  EXPECT_THAT([&] { write_file_atomically(path, "content"); },
              ThrowsMessage<OutputError>(AllOf(HasSubstr(path), HasSubstr(reason))));
}

TEST(OutputFile, MissingDirectoryFails) {
  ScratchDir dir("missing");
  expect_failure((dir.path() / "no" / "such" / "dir" / "f.svg").string(), "No such file");
  EXPECT_EQ(dir.entries(), 0u);
}

// root ignores permission bits, so the test then uses /proc, where nobody creates files.
TEST(OutputFile, UnwritableDirectoryFails) {
  ScratchDir dir("readonly");
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  if (::geteuid() != 0) {
    expect_failure((dir.path() / "f.svg").string(), "Permission denied");
    fs::permissions(dir.path(), fs::perms::owner_all);
    EXPECT_EQ(dir.entries(), 0u);
  } else {
    EXPECT_THROW(write_file_atomically("/proc/pe-plan-output-test.svg", "x"), OutputError);
  }
}

TEST(OutputFile, DirectoryPathFailsAndLeavesNoTemporary) {
  ScratchDir dir("isdir");
  fs::create_directory(dir.path() / "target");
  fs::create_directory(dir.path() / "target" / "inside");  // a non-empty directory
  expect_failure((dir.path() / "target").string(), "replacing the file");
  EXPECT_EQ(dir.entries(), 1u);
  EXPECT_TRUE(fs::is_directory(dir.path() / "target" / "inside"));
  expect_failure((dir.path() / "target/").string(), "not a file name");
  EXPECT_THROW(write_file_atomically("", "x"), OutputError);
}

TEST(OutputFile, SymlinkStaysALinkAndItsTargetIsReplaced) {
  ScratchDir dir("symlink");
  fs::create_directory(dir.path() / "real");
  const fs::path real = dir.path() / "real" / "chart.svg", link = dir.path() / "link.svg";
  write_file_atomically(real.string(), "old");
  fs::permissions(real, fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(fs::path("real") / "chart.svg", link);  // relative, as `ln -s` makes
  write_file_atomically(link.string(), "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(fs::read_symlink(link), fs::path("real") / "chart.svg");
  EXPECT_EQ(file_text(real), "new");
  EXPECT_EQ(fs::status(real).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(dir.entries(), 2u);  // no temporary beside the link
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() / "real"), {}), 1);
}

TEST(OutputFile, DanglingSymlinkCreatesItsTarget) {
  ScratchDir dir("dangling");
  fs::create_symlink("made.json", dir.path() / "link.json");
  write_file_atomically((dir.path() / "link.json").string(), "{}");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir.path() / "link.json")));
  EXPECT_EQ(file_text(dir.path() / "made.json"), "{}");
}

TEST(OutputFile, SymlinkLoopFailsNamingThePath) {
  ScratchDir dir("loop");
  fs::create_symlink("b.svg", dir.path() / "a.svg");
  fs::create_symlink("a.svg", dir.path() / "b.svg");
  expect_failure((dir.path() / "a.svg").string(), "symbolic link");
  EXPECT_EQ(dir.entries(), 2u);
}

TEST(OutputFile, SymlinkToADirectoryFails) {
  ScratchDir dir("linkdir");
  fs::create_directory(dir.path() / "target");
  fs::create_directory(dir.path() / "target" / "inside");
  fs::create_directory_symlink("target", dir.path() / "link");
  expect_failure((dir.path() / "link").string(), "replacing the file");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir.path() / "link")));
  EXPECT_TRUE(fs::is_directory(dir.path() / "target" / "inside"));
}

// A FIFO is written into, not replaced: the reader on the other end gets the content.
TEST(OutputFile, FifoIsWrittenInPlace) {
  ScratchDir dir("fifo");
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so the writer never waits
  ASSERT_GE(reader, 0);
  write_file_atomically(fifo.string(), "through the pipe");
  char buffer[64] = {};
  const ssize_t got = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, static_cast<std::size_t>(std::max<ssize_t>(got, 0))),
            "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(dir.entries(), 1u);
}

// Writing to /dev/null (even as root) leaves it the character device it was.
TEST(OutputFile, DevNullStaysADevice) {
  if (!fs::is_character_file("/dev/null")) GTEST_SKIP() << "/dev/null is not a device here";
  write_file_atomically("/dev/null", "discarded");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

// `--svg /dev/stdout > out.txt`: the file behind an open descriptor is written through the
// descriptor at its offset (after what is already there), not replaced by a new file.
TEST(OutputFile, OpenDescriptorIsWrittenThroughAtItsOffset) {
  ScratchDir dir("descriptor");
  const fs::path file = dir.path() / "out.txt";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "table\n", 6), 6);
  struct stat before {};
  ASSERT_EQ(::stat(file.c_str(), &before), 0);
  for (const std::string& name :
       {"/dev/fd/" + std::to_string(fd), "/proc/self/fd/" + std::to_string(fd)}) {
    if (!fs::exists(name)) continue;  // no /dev/fd or /proc here
    write_file_atomically(name, "chart\n");
  }
  ASSERT_EQ(::write(fd, "end\n", 4), 4);
  ::close(fd);
  struct stat after {};
  ASSERT_EQ(::stat(file.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);  // the same file, not a replacement
  const std::string text = file_text(file);
  EXPECT_TRUE(text == "table\nchart\nchart\nend\n" || text == "table\nchart\nend\n") << text;
  EXPECT_EQ(dir.entries(), 1u);
}

// A descriptor number that is not open is just a path that cannot be written.
TEST(OutputFile, ClosedDescriptorPathFails) {
  EXPECT_THROW(write_file_atomically("/dev/fd/999999", "x"), OutputError);
}

// A cancelled write leaves the old file and no temporary file, and says so.
TEST(OutputFile, CancelledWriteLeavesTheOldFileAndNoTemporary) {
  ScratchDir dir("cancel");
  const fs::path file = dir.path() / "trace.json";
  write_file_atomically(file.string(), "old\n");
  const std::atomic<bool> cancel{true};
  EXPECT_THAT([&] { write_file_atomically(file.string(), std::string(3 << 20, 'x'), &cancel); },
              ThrowsMessage<CancelledError>(HasSubstr("was cancelled")));
  EXPECT_EQ(file_text(file), "old\n");
  EXPECT_EQ(dir.entries(), 1u);
  // Also a new file: nothing is created.
  EXPECT_THROW(write_file_atomically((dir.path() / "new.svg").string(), "x", &cancel),
               CancelledError);
  EXPECT_EQ(dir.entries(), 1u);
}

// A flag that stays false changes nothing; CancelledError is a pe::Error.
TEST(OutputFile, UnsetCancelFlagWritesEverything) {
  ScratchDir dir("no-cancel");
  const fs::path file = dir.path() / "big.json";
  const std::atomic<bool> cancel{false};
  const std::string content(5 << 20, 'y');  // several pieces of a MiB
  write_file_atomically(file.string(), content, &cancel);
  EXPECT_EQ(file_text(file), content);
  EXPECT_EQ(dir.entries(), 1u);
  static_assert(std::is_base_of_v<Error, CancelledError>);
}

// With no write in progress there is nothing to remove; the call is safe at any time.
TEST(OutputFile, RemoveTemporaryFilesTouchesNothingElse) {
  ScratchDir dir("remove-temporaries");
  const fs::path file = dir.path() / "kept.txt";
  write_file_atomically(file.string(), "kept\n");
  remove_temporary_files();
  EXPECT_EQ(file_text(file), "kept\n");
  EXPECT_EQ(dir.entries(), 1u);
}

}  // namespace
}  // namespace pe
