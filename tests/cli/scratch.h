// A fresh scratch folder per test for CLI tests that write files, removed at the end.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace pe::testing {

/// Fixture base: `dir()` is an empty folder named after the process and the test.
class ScratchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("pe-" + std::string(test->test_suite_name()) + "-" + std::to_string(::getpid()) + "-" +
            test->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  /// `name` inside the folder.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  const std::filesystem::path& dir() const { return dir_; }
  /// A copy of `source` in the folder, as `name`.
  std::string copy(const std::string& source, const std::string& name) const {
    std::filesystem::copy_file(source, path(name));
    return path(name);
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace pe::testing
