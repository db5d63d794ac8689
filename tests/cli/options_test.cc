// pe-plan's command line: exact flag names, "--flag=value", the last of repeated flags, any
// argument after a value flag taken as its value, and --help listing every flag.
#include "options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pe/error.h"

namespace pe::cli {
namespace {

using ::testing::HasSubstr;

// The message of the UsageError parse_options throws for `args` ("" when none).
std::string usage_error(const std::vector<std::string>& args) {
  try {
    parse_options(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(PePlanOptions, ValuesMayFollowTheFlagOrAnEqualsSign) {
  const Options o = parse_options({"--gbs=8,16", "--mbs", "2", "--profile=chain", "--top=3"});
  EXPECT_EQ(o.gbs, "8,16");
  EXPECT_EQ(o.mbs, 2);
  EXPECT_EQ(o.profile, "chain");
  EXPECT_EQ(o.top, 3);
  EXPECT_FALSE(o.help);
}

TEST(PePlanOptions, TheLastOfARepeatedFlagWinsButEachIsChecked) {
  EXPECT_EQ(parse_options({"--top", "2", "--top", "5"}).top, 5);
  EXPECT_EQ(usage_error({"--top", "0", "--top", "5"}),
            "--top: expected a positive number, got '0'");
}

TEST(PePlanOptions, TheArgumentAfterAValueFlagIsItsValue) {
  EXPECT_EQ(parse_options({"--hosts", "--gbs=8"}).hosts, "--gbs=8");
  EXPECT_EQ(parse_options({"--gbs", "-1"}).gbs, "-1");  // refused later, by parse_batch_sizes
  EXPECT_EQ(usage_error({"--fill="}), "--fill: expected a file path, got ''");
}

TEST(PePlanOptions, FlagsAreExactNamesOrUniquePrefixesOfLongOnes) {
  for (const char* arg : {"--", "-", "-hx", "--help=1", "--version=", "extra", "-x", "--gbx"})
    EXPECT_EQ(usage_error({arg}), "unknown option '" + std::string(arg) + "' (see pe-plan --help)");
  // As getopt_long (and sched-pipeline) take them: a unique prefix names its flag.
  EXPECT_EQ(parse_options({"--gb", "8"}).gbs, "8");
  EXPECT_EQ(parse_options({"--prof=vgg19"}).profile, "vgg19");
  EXPECT_EQ(usage_error({"--gb"}), "--gbs needs a value (see pe-plan --help)");
  // An exact name wins over the longer names it is a prefix of.
  EXPECT_EQ(parse_options({"--plan", "0-1:1"}).plan, "0-1:1");
  EXPECT_EQ(parse_options({"--plan", "0-1:1", "--plan-first-device", "0"}).plan_first_device, 0);
  EXPECT_EQ(usage_error({"--pl", "x"}),
            "option '--pl' is ambiguous: --plan, --plan-copies, --plan-first-device, "
            "--plan-copy-stride, --plan-gbs, --plot (see pe-plan --help)");
}

TEST(PePlanOptions, SearchLimitsAndStraight) {
  const Options none = parse_options({});
  EXPECT_EQ(none.max_stage_width, 0);
  EXPECT_EQ(none.max_copies, 0);
  const Options limited = parse_options({"--max-stage-width", "3", "--max-copies=2"});
  EXPECT_EQ(limited.max_stage_width, 3);
  EXPECT_EQ(limited.max_copies, 2);
  const Options straight = parse_options({"--straight"});
  EXPECT_EQ(straight.max_stage_width, 1);
  EXPECT_EQ(straight.max_copies, 1);
  EXPECT_EQ(parse_options({"--straight", "--max-copies", "1"}).max_copies, 1);
  EXPECT_EQ(usage_error({"--max-stage-width", "1.5"}),
            "--max-stage-width: expected a whole number from 0 (no limit) to 1000000, got '1.5'");
  EXPECT_EQ(usage_error({"--max-copies", "2", "--straight"}).rfind("--straight means", 0), 0u);
  EXPECT_EQ(parse_options({"--export-graph", "out"}).export_graph, "out");
  EXPECT_EQ(usage_error({"--export-graph", ""}), "--export-graph: expected a file path, got ''");
}

TEST(PePlanOptions, ErrorsComeInCommandLineOrder) {
  EXPECT_THAT(usage_error({"--bogus", "--top", "0"}), HasSubstr("unknown option '--bogus'"));
  EXPECT_THAT(usage_error({"--top", "0", "--bogus"}), HasSubstr("--top: expected"));
  EXPECT_EQ(usage_error({"--top", "0", "--gbs"}), "--top: expected a positive number, got '0'");
  EXPECT_EQ(usage_error({"--top", "2", "--gbs"}), "--gbs needs a value (see pe-plan --help)");
}

TEST(PePlanOptions, HexadecimalAndNonFiniteNumbersAreRefused) {
  EXPECT_EQ(usage_error({"--intra-bw", "0x10"}),
            "--intra-bw: expected a positive number, got '0x10'");
  EXPECT_EQ(usage_error({"--memory-gb", "inf"}),
            "--memory-gb: expected a positive number, got 'inf'");
}

TEST(PePlanOptions, DevicesAndClusterExcludeEachOther) {
  EXPECT_EQ(usage_error({"--devices", "4", "--cluster", "c.yml"}),
            "give either --devices or --cluster, not both");
}

TEST(PePlanOptions, HelpListsEveryFlagOnce) {
  const std::string help = help_text();
  for (const char* flag : {"--profile NAME|PATH",
                           "--pbs N",
                           "--mbs N",
                           "--optimizer-scaling X",
                           "--activation-bytes-per-sample B",
                           "--devices ENDS",
                           "--cluster FILE",
                           "--intra-bw GBPS",
                           "--inter-bw GBPS",
                           "--inter-p2p-bw GBPS",
                           "--memory-gb GB",
                           "--gbs LIST",
                           "--schedule S",
                           "--top K",
                           "--search-effort N",
                           "--search-memory-mb N",
                           "--max-stage-width N",
                           "--max-copies N",
                           "--straight",
                           "--format F",
                           "--plan-gbs N",
                           "--trace FILE",
                           "--svg FILE",
                           "--plot FILE",
                           "--fill FILE",
                           "--export-sched FILE",
                           "--hosts H1,H2,...",
                           "--export-graph DIR",
                           "-h, --help",
                           "--version"}) {
    const std::size_t at = help.find("  " + std::string(flag));
    ASSERT_NE(at, std::string::npos) << flag << "\n" << help;
    EXPECT_EQ(help.find("  " + std::string(flag) + " ", at + 1), std::string::npos) << flag;
  }
  EXPECT_THAT(help, HasSubstr("Model:\n  --profile NAME|PATH   bundled profile name"));
  EXPECT_THAT(help, HasSubstr("Exit codes: 0 success"));
}

}  // namespace
}  // namespace pe::cli
