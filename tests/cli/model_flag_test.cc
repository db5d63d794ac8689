// pe-plan --model: a transformer from its configuration, planned like a profile, with the
// model FLOP/s per GPU and MFU of the plan shown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/program.h"
#include "pe/importers/transformer_yaml.h"
#include "pe/transformer.h"

namespace pe::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ModelFlag, PlansABundledTransformerOnItsGpusMemory) {
  const ProgramResult r =
      run_program(pe_plan_program(), {"--model", "llama2-7b", "--devices", "8,16", "--gbs", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("llama2-7b: 34 states, profile batch 1 | 16 GPUs on 2 machines, "
                                "80.0 GB each"));
  EXPECT_THAT(r.out, HasSubstr("MFU"));
  EXPECT_THAT(r.out, HasSubstr("of H100-80GB's 989 TFLOP/s peak"));
  const ProgramResult set = run_program(
      pe_plan_program(),
      {"--model", "llama2-7b", "--devices", "8,16", "--gbs", "64", "--memory-gb", "40"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_THAT(set.out, HasSubstr("40.0 GB each"));
}

TEST(ModelFlag, TheMfuIsTheModelFlopsOfTheIterationOverThePeak) {
  const ProgramResult json =
      run_program(pe_plan_program(),
                  {"--model", "gpt3-350m", "--devices", "8", "--gbs", "32", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json plan = nlohmann::json::parse(json.out).at("points").at(0).at("plans").at(0);
  const double time = plan.at("iteration_time_s").get<double>();
  const ProgramResult table =
      run_program(pe_plan_program(), {"--model", "gpt3-350m", "--devices", "8", "--gbs", "32"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const TransformerInput in = load_transformer_yaml(find_transformer("gpt3-350m"));
  int devices = 0;
  for (const nlohmann::json& stage : plan.at("stages")) devices += stage.at("width").get<int>();
  devices *= plan.at("pipeline_replicas").get<int>();
  const double mfu =
      transformer_training_flops(in.config) * 32 / time / devices / in.gpu.peak_flops;
  char expected[32];
  std::snprintf(expected, sizeof expected, "MFU %.1f%%", 100 * mfu);
  EXPECT_THAT(table.out, HasSubstr(expected));
}

TEST(ModelFlag, ConflictsAndUnknownNamesAreErrors) {
  const ProgramResult both =
      run_program(pe_plan_program(), {"--model", "llama2-7b", "--profile", "vgg19"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("--model and --profile both name a model"));
  const ProgramResult pbs = run_program(pe_plan_program(), {"--model", "llama2-7b", "--pbs", "4"});
  EXPECT_EQ(pbs.exit_code, 2);
  EXPECT_THAT(pbs.err, HasSubstr("--pbs applies to --profile"));
  const ProgramResult unknown = run_program(pe_plan_program(), {"--model", "gpt5"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no bundled transformer of that name"));
  EXPECT_THAT(unknown.err, HasSubstr("llama2-70b"));
}

TEST(ModelFlag, StatesListTheLayers) {
  const ProgramResult r = run_program(pe_plan_program(), {"--model", "gpt3-350m", "--states"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("gpt3-350m: 26 states"));
  EXPECT_THAT(r.out, HasSubstr("layer 24"));
}

}  // namespace
}  // namespace pe::testing
