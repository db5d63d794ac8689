// pe-plan --model: a transformer from its configuration, planned like a profile, with the
// model FLOP/s per GPU and MFU of the plan shown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/program.h"
#include "cli/scratch.h"
#include "pe/importers/transformer_yaml.h"
#include "pe/transformer.h"

namespace pe::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ModelFlag, PlansABundledTransformerOnItsGpusMemory) {
  const ProgramResult r = pe_plan({"--model", "llama2-7b", "--devices", "8,16", "--gbs", "64"});
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
      pe_plan({"--model", "gpt3-350m", "--devices", "8", "--gbs", "32", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json plan = nlohmann::json::parse(json.out).at("points").at(0).at("plans").at(0);
  const double time = plan.at("iteration_time_s").get<double>();
  const ProgramResult table = pe_plan({"--model", "gpt3-350m", "--devices", "8", "--gbs", "32"});
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
  EXPECT_NEAR(plan.at("mfu").get<double>(), mfu, 1e-9 * mfu);
  EXPECT_NEAR(plan.at("model_flops_per_gpu").get<double>(), mfu * in.gpu.peak_flops,
              1e-9 * mfu * in.gpu.peak_flops);
  // A graph.txt profile does not know its FLOPs.
  const ProgramResult profile = pe_plan({"--profile", "vgg19", "--gbs", "64", "--format", "json"});
  ASSERT_EQ(profile.exit_code, 0) << profile.err;
  const nlohmann::json cnn =
      nlohmann::json::parse(profile.out).at("points").at(0).at("plans").at(0);
  EXPECT_TRUE(cnn.at("mfu").is_null());
}

TEST(ModelFlag, ConflictsAndUnknownNamesAreErrors) {
  const ProgramResult both = pe_plan({"--model", "llama2-7b", "--profile", "vgg19"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("--model and --profile both name a model"));
  const ProgramResult pbs = pe_plan({"--model", "llama2-7b", "--pbs", "4"});
  EXPECT_EQ(pbs.exit_code, 2);
  EXPECT_THAT(pbs.err, HasSubstr("--pbs applies to --profile"));
  const ProgramResult unknown = pe_plan({"--model", "gpt5"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no bundled transformer of that name"));
  EXPECT_THAT(unknown.err, HasSubstr("llama2-70b"));
}

TEST(ModelFlag, StatesListTheLayers) {
  const ProgramResult r = pe_plan({"--model", "gpt3-350m", "--states"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("gpt3-350m: 26 states"));
  EXPECT_THAT(r.out, HasSubstr("layer 24"));
}

ProgramResult plan_70b(std::vector<std::string> extra) {
  std::vector<std::string> args{"--model", "llama2-70b", "--devices", "8,16,24,32",
                                "--gbs",   "256",        "--format",  "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return pe_plan(args);
}

// The stages of the best plan of the only point.
nlohmann::json best_stages(const ProgramResult& r) {
  return nlohmann::json::parse(r.out).at("points").at(0).at("plans").at(0).at("stages");
}

TEST(ModelFlag, TheFlagsBoundEachStagesSplitAndRecomputation) {
  const ProgramResult free = plan_70b({"--memory-gb", "40"});
  ASSERT_EQ(free.exit_code, 0) << free.err;
  bool split = false, recomputed = false;
  for (const nlohmann::json& s : best_stages(free)) {
    split |= s.at("tensor_parallel").get<int>() > 1;
    recomputed |= s.at("recompute").get<bool>();
  }
  EXPECT_TRUE(split);  // 70B does not fit 32 GPUs of 40 GB unsplit
  EXPECT_TRUE(recomputed);
  const ProgramResult capped =
      plan_70b({"--memory-gb", "40", "--tensor-parallel", "2", "--no-recompute"});
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  const nlohmann::json point = nlohmann::json::parse(capped.out).at("points").at(0);
  for (const nlohmann::json& plan : point.at("plans"))
    for (const nlohmann::json& s : plan.at("stages")) {
      EXPECT_LE(s.at("tensor_parallel").get<int>(), 2);
      EXPECT_FALSE(s.at("recompute").get<bool>());
    }
  const ProgramResult off = plan_70b({"--tensor-parallel", "1"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  for (const nlohmann::json& s : best_stages(off)) EXPECT_EQ(s.at("tensor_parallel").get<int>(), 1);
}

TEST(ModelFlag, ShardingLowersTheMemoryOfTheSamePlan) {
  // Only the given plan matters here: the search gets little effort.
  const std::vector<std::string> plan{"--plan", "0-40:16t4;41-81:16t4", "--microbatches",
                                      "32",     "--search-effort",      "1000"};
  std::vector<double> weights;
  for (const char* zero : {"0", "1", "2", "3"}) {
    std::vector<std::string> args = plan;
    args.insert(args.end(), {"--zero", zero});
    const ProgramResult r = plan_70b(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json given = nlohmann::json::parse(r.out).at("given_plan");
    weights.push_back(given.at("stages").at(0).at("weight_memory_bytes").get<double>());
  }
  EXPECT_GT(weights[0], weights[1]);
  EXPECT_GT(weights[1], weights[2]);
  EXPECT_GT(weights[2], weights[3]);
}

TEST(ModelFlag, BadSplitsAndSettingsNameTheFlag) {
  auto error_of = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"--gbs", "64"});
    const ProgramResult r = pe_plan(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    return r.err;
  };
  EXPECT_THAT(error_of({"--model", "llama2-7b", "--devices", "4,8", "--plan", "0-10:2;11-33:6t3"}),
              HasSubstr("--plan: stage 1: splits its operators 3 ways, expected a degree up to 4 "
                        "that divides the model's heads"));
  EXPECT_THAT(error_of({"--model", "llama2-7b", "--devices", "3,8", "--plan", "0-10:2;11-33:2t2"}),
              HasSubstr("spans two machines"));
  EXPECT_THAT(error_of({"--model", "llama2-7b", "--plan", "0-33:16t3"}),
              HasSubstr("expected a degree dividing the width"));
  EXPECT_THAT(error_of({"--profile", "vgg19", "--plan", "0-24:16r"}),
              HasSubstr("recomputes, but the model cannot"));
  EXPECT_THAT(error_of({"--profile", "vgg19", "--plan", "0-24:16t2"}),
              HasSubstr("the model cannot be split"));
  EXPECT_THAT(error_of({"--model", "llama2-7b", "--tensor-parallel", "3"}),
              HasSubstr("--tensor-parallel is 3, which does not divide 32, the heads"));
  EXPECT_THAT(error_of({"--profile", "vgg19", "--tensor-parallel", "2"}),
              HasSubstr("but the model 'vgg19' cannot be split"));
  EXPECT_THAT(error_of({"--model", "llama2-7b", "--zero", "4"}),
              HasSubstr("--zero must be 0, 1, 2 or 3"));
  EXPECT_THAT(error_of({"--model", "llama2-7b", "--tp-efficiency", "0"}),
              HasSubstr("--tp-efficiency"));
}

TEST(ModelFlag, NoPlanFitsNamesTheLayerAtItsSmallest) {
  const ProgramResult r =
      pe_plan({"--model", "llama2-70b", "--devices", "8", "--memory-gb", "1", "--gbs", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("no plan fits: state 1 alone needs"));
  EXPECT_THAT(r.out, HasSubstr("split 8 ways, recomputed"));
}

using ModelFlagFiles = ScratchTest;

TEST_F(ModelFlagFiles, MachinesOfTwoGpuTypesRunEachStageAtItsSlowestGpu) {
  const std::string cluster = path("mixed.yml");
  std::ofstream(cluster) << "machines:\n"
                            "  - count: 2\n    gpus: 8\n    gpu: H100-80GB\n"
                            "  - count: 2\n    gpus: 8\n    gpu: A100-80GB\n"
                            "bandwidth_GBps: {intra: 450, inter_allreduce: 50, inter_p2p: 50}\n";
  const std::vector<std::string> args{"--model", "llama2-7b", "--cluster", cluster, "--gbs", "128"};
  const ProgramResult table = pe_plan(args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("32 GPUs on 4 machines, 16 H100-80GB, 16 A100-80GB"));
  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  const ProgramResult json = pe_plan(json_args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report.at("context").at("model_gpu"), "H100-80GB");
  EXPECT_EQ(report.at("context").at("machine_gpu_types").size(), 4u);
  for (const nlohmann::json& stage : report.at("points").at(0).at("plans").at(0).at("stages")) {
    const std::string gpu = stage.at("gpu").get<std::string>();
    EXPECT_TRUE(gpu == "H100-80GB" || gpu == "A100-80GB") << gpu;
    EXPECT_LE(stage.at("peak_memory_bytes").get<double>(),
              stage.at("device_memory_bytes").get<double>());
  }
}

}  // namespace
}  // namespace pe::testing
