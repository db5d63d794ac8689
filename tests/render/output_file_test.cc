#include "pe/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_paths.h"

namespace pe {
namespace {

namespace fs = std::filesystem;

// A fresh, empty directory under the build tree, removed at the end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(fs::path(PE_TEST_BINARY_DIR) / "scratch" / (name + "-" + std::to_string(::getpid()))) {
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

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OutputFile, WritesContent) {
  ScratchDir dir("write");
  const fs::path file = dir.path() / "trace.json";
  write_file_atomically(file.string(), "[1, 2]\n");
  EXPECT_EQ(read(file), "[1, 2]\n");
  EXPECT_EQ(dir.entries(), 1u);  // no temporary file left
}

TEST(OutputFile, OverwritesAndKeepsPermissions) {
  ScratchDir dir("overwrite");
  const fs::path file = dir.path() / "chart.svg";
  write_file_atomically(file.string(), "a much longer first version");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_file_atomically(file.string(), "v2");
  EXPECT_EQ(read(file), "v2");
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(OutputFile, WritesEmptyAndBinaryContent) {
  ScratchDir dir("binary");
  const std::string bytes("\0\x01\xff", 3);
  write_file_atomically((dir.path() / "b").string(), bytes);
  write_file_atomically((dir.path() / "e").string(), "");
  EXPECT_EQ(read(dir.path() / "b"), bytes);
  EXPECT_EQ(read(dir.path() / "e"), "");
}

void expect_failure(const std::string& path, const std::string& reason) {
  try {
    write_file_atomically(path, "content");
    ADD_FAILURE() << "wrote " << path;
  } catch (const OutputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
  }
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

}  // namespace
}  // namespace pe
