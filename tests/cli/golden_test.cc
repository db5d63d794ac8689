// Golden outputs of the real programs on files under tests/data. A deliberate change of an
// output format is recorded by running the tests with PE_UPDATE_GOLDEN=1, which rewrites
// the golden files instead of comparing (review the diff before committing it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/program.h"
#include "file_text.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

// Compares `actual` with tests/data/cli/NAME, or rewrites it under PE_UPDATE_GOLDEN=1.
void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = kData + "/cli/" + name;
  const char* update = std::getenv("PE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(actual, file_text(path))
      << "differs from " << path << " (PE_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(CliGolden, SchedPipelineReadmeExample) {
  const std::string dir = kData + "/pipeedge/example/";
  const ProgramResult r = run_program(
      sched_pipeline_program(), {"-M", dir + "models.yml", "-T", dir + "device_types.yml", "-D",
                                 kData + "/pipeedge/readme_c2000/devices.yml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("sched_pipeline_readme_c2000.yml", r.out);
}

TEST(CliGolden, SchedPipelineTinyModel) {
  const std::string dir = kData + "/robustness/pipeedge/";
  const ProgramResult r =
      run_program(sched_pipeline_program(), {"-m", "tiny", "-M", dir + "models.yml", "-T",
                                             dir + "device_types.yml", "-D", dir + "devices.yml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("sched_pipeline_tiny.yml", r.out);
}

TEST(CliGolden, PePlanChainCsv) {
  const ProgramResult r = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8:64:8",
                                   "--devices", "2,4", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("pe_plan_chain.csv", r.out);
}

}  // namespace
}  // namespace pe::testing
