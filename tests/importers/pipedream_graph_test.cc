#include "pe/importers/pipedream_graph.h"
#include "importers/graph_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "pe/error.h"
#include "test_paths.h"

namespace pe {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::ThrowsMessage;

const std::string kGraphs = std::string(PE_TEST_DATA_DIR) + "/graphs/";
const std::string kMetadata =
    "forward_compute_time=1, backward_compute_time=2, activation_size=3, parameter_size=4";

std::string node(const std::string& id, const std::string& metadata = kMetadata) {
  return id + " -- op " + id + " -- " + metadata + "\n";
}

using testing::graph_edge;
using testing::state_names;

std::vector<double> crossings(const ModelProfile& model) {
  std::vector<double> result;
  for (const CutState& s : model.states) result.push_back(s.crossing);
  return result;
}

// The message of the InputError that parsing `text` as "bad.txt" throws ("" when none).
std::string error_of(const std::string& text) {
  try {
    parse_pipedream_graph(text, "bad.txt", 1);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Parsing must fail with a message starting at `where` ("bad.txt:LINE:") that contains
// every string of `details`.
void expect_error(const std::string& text, const std::string& where,
                  const std::vector<std::string>& details) {
  std::vector<::testing::Matcher<std::string>> each{StartsWith(where)};
  for (const std::string& detail : details) each.push_back(HasSubstr(detail));
  EXPECT_THAT([&] { parse_pipedream_graph(text, "bad.txt", 1); },
              ThrowsMessage<InputError>(::testing::AllOfArray(each)));
}

TEST(PipedreamGraph, ChainGivesOneStatePerLayer) {
  // chain.txt: Input0 -> Conv2d -> ReLU -> Linear; the Input source is dropped. Sums by
  // hand: forward 1.5, 2.0, 4.0 ms; backward 3.0, 3.25, 7.25 ms; activations 1000, 2000,
  // 2010; parameters 40, 40, 440; each layer's output crosses the cut after it.
  const ModelProfile m = import_pipedream_graph(kGraphs + "chain.txt", 32);
  EXPECT_EQ(m.name, "chain");
  EXPECT_EQ(m.profile_batch_size, 32);
  EXPECT_EQ(m.operator_count, 3u);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(state_names(m), (std::vector<std::string>{"Conv2d(3, 8)", "ReLU", "Linear(8, 2)"}));
  const std::vector<double> forward{1.5e-3, 2.0e-3, 4.0e-3}, backward{3e-3, 3.25e-3, 7.25e-3};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(m.states[i].forward, forward[i]) << i;
    EXPECT_DOUBLE_EQ(m.states[i].backward, backward[i]) << i;
  }
  EXPECT_EQ(m.states[1].activation, 2000);
  EXPECT_EQ(m.whole().activation, 2010);
  EXPECT_EQ(m.states[1].parameters, 40);
  EXPECT_EQ(m.whole().parameters, 440);
  EXPECT_EQ(crossings(m), (std::vector<double>{1000, 1000, 0}));
}

TEST(PipedreamGraph, ResidualBlockPrefersTheCheaperBranchFirst) {
  // residual.txt: x(400) feeds big(300) and small(100), both feed add(200). After x both
  // branches are ready; placing small leaves x + small = 500 bytes crossing, big would leave
  // x + big = 700, so small goes first although big is earlier in the file. Then big frees
  // x: big + small = 400 cross. add is the sink: 0.
  const ModelProfile m = import_pipedream_graph(kGraphs + "residual.txt", 8, 0);
  EXPECT_EQ(m.cut_limit, 0u);
  EXPECT_STREQ(m.states_cover(), "chain");
  EXPECT_EQ(state_names(m), (std::vector<std::string>{"Conv2d stem", "Conv2d downsample",
                                                      "Conv2d main branch", "Add"}));
  EXPECT_EQ(crossings(m), (std::vector<double>{400, 500, 400, 0}));
  EXPECT_DOUBLE_EQ(m.states[2].forward, 5.5e-3);  // 1.0 + 0.5 + 4.0 ms
  EXPECT_EQ(m.states[1].parameters, 30);          // 10 + 20
  EXPECT_EQ(m.whole().activation, 1000);
}

TEST(PipedreamGraph, EveryCutOfAResidualBlockWithTheOrderAsSpine) {
  // The cuts of x -> {big, small} -> add: {x}, {x, small}, {x, big}, {x, big, small}, all,
  // sorted by size, then by their members' positions in the order x, small, big, add. The
  // prefixes of that order are states 0, 1, 3 and 4.
  const ModelProfile m = import_pipedream_graph(kGraphs + "residual.txt", 8);
  EXPECT_STREQ(m.states_cover(), "every cut");
  EXPECT_EQ(state_names(m),
            (std::vector<std::string>{"Conv2d stem", "Conv2d downsample", "Conv2d main branch",
                                      "Conv2d main branch", "Add"}));
  EXPECT_EQ(crossings(m), (std::vector<double>{400, 500, 700, 400, 0}));
  EXPECT_EQ(m.spine, (std::vector<std::uint32_t>{0, 1, 3, 4}));
  EXPECT_EQ(m.later[1], (std::vector<std::uint32_t>{3, 4}));
  EXPECT_EQ(m.later[2], (std::vector<std::uint32_t>{3, 4}));
  EXPECT_FALSE(m.nested(1, 2));
  EXPECT_DOUBLE_EQ(m.states[2].forward, 5e-3);  // stem 1.0 + main branch 4.0 ms
  // Over the limit, the order's prefixes again, and the model says so.
  const ModelProfile limited = import_pipedream_graph(kGraphs + "residual.txt", 8, 4);
  EXPECT_EQ(limited.size(), 4u);
  EXPECT_EQ(limited.cut_limit, 4u);
  EXPECT_STREQ(limited.states_cover(), "one order");
}

TEST(PipedreamGraph, StageIdsAreIgnored) {
  const std::string with = node("a", kMetadata + " -- stage_id=0") +
                           node("b", kMetadata + " -- stage_id=12") + graph_edge("a", "b");
  const std::string without = node("a") + node("b") + graph_edge("a", "b");
  const ModelProfile m = parse_pipedream_graph(with, "g.txt", 1);
  EXPECT_EQ(state_names(m), state_names(parse_pipedream_graph(without, "g.txt", 1)));
  EXPECT_EQ(crossings(m), (std::vector<double>{3, 0}));
}

TEST(PipedreamGraph, TiesGoToTheEarlierLine) {
  // p and q have equal outputs, so either order leaves the same bytes crossing.
  const std::string p_first = node("x") + node("p") + node("q") + node("j") + graph_edge("x", "p") +
                              graph_edge("x", "q") + graph_edge("p", "j") + graph_edge("q", "j");
  const std::string q_first = node("x") + node("q") + node("p") + node("j") + graph_edge("x", "p") +
                              graph_edge("x", "q") + graph_edge("p", "j") + graph_edge("q", "j");
  EXPECT_EQ(state_names(parse_pipedream_graph(p_first, "g.txt", 1, 0)),
            (std::vector<std::string>{"op x", "op p", "op q", "op j"}));
  EXPECT_EQ(state_names(parse_pipedream_graph(q_first, "g.txt", 1, 0)),
            (std::vector<std::string>{"op x", "op q", "op p", "op j"}));
}

TEST(PipedreamGraph, RemovesInputSourcesAndGetitemSinks) {
  // inputs_and_sinks.txt: Input0/Input1 are sources (dropped, their cost does not count);
  // __getitem__(0) is a sink (dropped) but __getitem__(1) feeds Linear (kept); InputNorm
  // is not a source (kept). LSTM's list activation [200; 50] sums to 250.
  const ModelProfile m = import_pipedream_graph(kGraphs + "inputs_and_sinks.txt", 64);
  EXPECT_EQ(m.operator_count, 5u);
  EXPECT_EQ(state_names(m), (std::vector<std::string>{"Embedding", "LSTM", "__getitem__(1)",
                                                      "Linear", "InputNorm"}));
  EXPECT_EQ(crossings(m), (std::vector<double>{100, 250, 80, 10, 0}));
  EXPECT_DOUBLE_EQ(m.whole().forward, 7e-3);    // 1 + 3 + 0 + 2 + 1 ms, no Input
  EXPECT_DOUBLE_EQ(m.whole().backward, 13e-3);  // 2 + 6 + 0 + 4 + 1 ms
  EXPECT_EQ(m.states[1].activation, 350);       // 100 + 250
  EXPECT_EQ(m.whole().activation, 450);         // 100 + 250 + 80 + 10 + 10
  EXPECT_EQ(m.whole().parameters, 224);         // 64 + 128 + 32
}

TEST(PipedreamGraph, ListActivationsAreSummed) {
  const ModelProfile m = parse_pipedream_graph(
      node("a",
           "forward_compute_time=1, backward_compute_time=1, activation_size=[1.5; 2; 4e1], "
           "parameter_size=0") +
          node("b") + graph_edge("a", "b"),
      "g.txt", 1);
  EXPECT_DOUBLE_EQ(m.states[0].activation, 43.5);
  EXPECT_DOUBLE_EQ(m.states[0].crossing, 43.5);
}

TEST(PipedreamGraph, MultiSourceMultiSinkGraph) {
  // Sources a and c, sinks b and d (a->b, c->d, a->d): every operator is a state, each
  // output stops crossing once its consumers are placed.
  const ModelProfile m =
      parse_pipedream_graph(node("a") + node("b") + node("c") + node("d") + graph_edge("a", "b") +
                                graph_edge("c", "d") + graph_edge("a", "d"),
                            "g.txt", 1, 0);
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(crossings(m).back(), 0);
  EXPECT_EQ(m.whole().parameters, 16);
}

// Parts that no edge joins would cost nothing to cut between: a missing edge line is an
// error at the first node (in file order) that the first node does not reach.
TEST(PipedreamGraph, DisconnectedPartsAreAnErrorAtTheFirstUnreachedNode) {
  for (const std::string& text :
       {node("a") + node("b") + node("c") + node("d") + graph_edge("a", "b") + graph_edge("c", "d"),
        node("a") + node("b") + node("c") + graph_edge("a", "b") + graph_edge("d", "b") +
            node("d")}) {
    EXPECT_THAT(
        [&] { parse_pipedream_graph(text, "g.txt", 1); },
        ThrowsMessage<InputError>(HasSubstr("g.txt:3: node 'c' is not connected to node 'a'")))
        << text;
  }
  // Removing an Input source that feeds two parts leaves them apart: also an error.
  EXPECT_THROW(parse_pipedream_graph("i -- Input0 -- " + kMetadata + "\n" + node("a") + node("b") +
                                         graph_edge("i", "a") + graph_edge("i", "b"),
                                     "g.txt", 1),
               InputError);
}

TEST(PipedreamGraph, MetadataKeysMayComeInAnyOrder) {
  const ModelProfile m = parse_pipedream_graph(
      "a -- op -- parameter_size=4, activation_size=3, backward_compute_time=2, "
      "forward_compute_time=1\n",
      "g.txt", 1);
  EXPECT_DOUBLE_EQ(m.whole().forward, 1e-3);
  EXPECT_DOUBLE_EQ(m.whole().backward, 2e-3);
  EXPECT_EQ(m.whole().parameters, 4);
}

TEST(PipedreamGraph, WindowsLineEndingsAndTrailingBlanks) {
  const std::string unix_text = node("a") + node("b") + graph_edge("a", "b");
  const std::string windows_text =
      "a -- op a -- " + kMetadata + " \r\n\r\nb -- op b -- " + kMetadata + "\r\n \t a -- b\r\n";
  const ModelProfile a = parse_pipedream_graph(unix_text, "g.txt", 1);
  const ModelProfile b = parse_pipedream_graph(windows_text, "g.txt", 1);
  EXPECT_EQ(state_names(a), state_names(b));
  EXPECT_EQ(crossings(a), crossings(b));
}

TEST(PipedreamGraph, DuplicateEdgesAreIgnored) {
  const std::string once = node("a") + node("b") + graph_edge("a", "b");
  const ModelProfile m = parse_pipedream_graph(once + graph_edge("a", "b"), "g.txt", 1);
  EXPECT_EQ(crossings(m), crossings(parse_pipedream_graph(once, "g.txt", 1)));
}

TEST(PipedreamGraph, EdgesMayComeBeforeNodes) {
  const ModelProfile m =
      parse_pipedream_graph(graph_edge("b", "a") + node("a") + node("b"), "g.txt", 1);
  EXPECT_EQ(state_names(m), (std::vector<std::string>{"op b", "op a"}));
}

TEST(PipedreamGraph, LongDescriptionsAreShortened) {
  const std::string description(200, 'x');
  const ModelProfile m =
      parse_pipedream_graph("a -- " + description + " -- " + kMetadata + "\n", "g.txt", 1);
  EXPECT_LE(m.states[0].name.size(), 60u);
  EXPECT_EQ(m.states[0].name.substr(0, 10), description.substr(0, 10));
}

TEST(PipedreamGraph, RejectsBadNumber) {
  expect_error(node("a") + node("b",
                                "forward_compute_time=1x, backward_compute_time=2, "
                                "activation_size=3, parameter_size=4"),
               "bad.txt:2:", {"forward_compute_time", "'1x'", "number"});
}

TEST(PipedreamGraph, RejectsNan) {
  expect_error(node("a",
                    "forward_compute_time=1, backward_compute_time=nan, "
                    "activation_size=3, parameter_size=4"),
               "bad.txt:1:", {"backward_compute_time", "'nan'"});
}

TEST(PipedreamGraph, RejectsInfinity) {
  expect_error(node("a") + "\n" +
                   node("b",
                        "forward_compute_time=1, backward_compute_time=2, "
                        "activation_size=3, parameter_size=inf"),
               "bad.txt:3:", {"parameter_size", "'inf'"});
}

TEST(PipedreamGraph, RejectsNegativeValue) {
  expect_error(node("a",
                    "forward_compute_time=-1, backward_compute_time=2, "
                    "activation_size=3, parameter_size=4"),
               "bad.txt:1:", {"forward_compute_time", "'-1'", "non-negative"});
}

TEST(PipedreamGraph, RejectsBadListItem) {
  expect_error(node("a",
                    "forward_compute_time=1, backward_compute_time=2, "
                    "activation_size=[3; x], parameter_size=4"),
               "bad.txt:1:", {"activation_size", "'x'"});
  expect_error(node("a",
                    "forward_compute_time=1, backward_compute_time=2, "
                    "activation_size=[3; 4, parameter_size=4"),
               "bad.txt:1:", {"activation_size", "'[3; 4'"});
}

TEST(PipedreamGraph, RejectsWrongNodeTokenCount) {
  expect_error(node("a") + "b -- op b\n", "bad.txt:2:", {"got 2 fields"});
  expect_error("a -- op -- x -- " + kMetadata + " -- stage_id=1\n", "bad.txt:1:", {"got 5 fields"});
}

TEST(PipedreamGraph, RejectsWrongEdgeTokenCount) {
  expect_error(node("a") + node("b") + "\ta -- b -- c\n", "bad.txt:3:", {"'a -- b -- c'"});
  expect_error(node("a") + "\ta\n", "bad.txt:2:", {"SRC_ID -- DST_ID"});
  expect_error(node("a") + " " + node("b"),
               "bad.txt:2:", {"(an indented line)", "a node line must not be indented"});
}

TEST(PipedreamGraph, RejectsUnknownMetadataKey) {
  expect_error(node("a",
                    "forward_compute_time=1, backward_time=2, activation_size=3, "
                    "parameter_size=4"),
               "bad.txt:1:", {"unknown metadata key 'backward_time'"});
}

TEST(PipedreamGraph, RejectsMissingMetadataKey) {
  expect_error(node("a", "forward_compute_time=1, backward_compute_time=2, activation_size=3"),
               "bad.txt:1:", {"missing metadata key 'parameter_size'"});
}

TEST(PipedreamGraph, RejectsRepeatedMetadataKey) {
  expect_error(node("a", kMetadata + ", parameter_size=4"),
               "bad.txt:1:", {"parameter_size", "twice"});
}

TEST(PipedreamGraph, RejectsMetadataWithoutEquals) {
  expect_error(node("a", "forward_compute_time 1"), "bad.txt:1:", {"key=value"});
}

TEST(PipedreamGraph, RejectsBadStageId) {
  expect_error(node("a", kMetadata + " -- stage_id=one"),
               "bad.txt:1:", {"stage_id", "'stage_id=one'"});
  expect_error(node("a", kMetadata + " -- stage=1"), "bad.txt:1:", {"'stage=1'"});
}

TEST(PipedreamGraph, RejectsUnknownNodeInEdge) {
  expect_error(node("a") + node("b") + graph_edge("a", "b") + graph_edge("b", "zz"),
               "bad.txt:4:", {"unknown node 'zz'"});
}

TEST(PipedreamGraph, RejectsDuplicateNodeId) {
  expect_error(node("a") + node("b") + node("a"),
               "bad.txt:3:", {"duplicate node id 'a'", "line 1"});
}

TEST(PipedreamGraph, RejectsCycle) {
  const std::string message = error_of(node("a") + node("b") + node("c") + graph_edge("a", "b") +
                                       graph_edge("b", "c") + graph_edge("c", "b"));
  EXPECT_THAT(message, StartsWith("bad.txt:6:"));  // the edge closing b -> c -> b
  EXPECT_THAT(message, AllOf(HasSubstr("cycle"), HasSubstr("b -> c"), HasSubstr("c -> b")));
}

TEST(PipedreamGraph, RejectsSelfLoop) {
  expect_error(node("a") + node("b") + graph_edge("a", "b") + graph_edge("b", "b"),
               "bad.txt:4:", {"b -> b"});
}

TEST(PipedreamGraph, RejectsEmptyFile) {
  expect_error("", "bad.txt:", {"no node lines"});
  expect_error("\n  \n\t\n", "bad.txt:", {"no node lines"});
}

TEST(PipedreamGraph, RejectsGraphWithOnlyInputs) {
  expect_error("a -- Input0 -- " + kMetadata + "\n", "bad.txt:", {"no operators"});
}

TEST(PipedreamGraph, RejectsNonPositiveBatchSize) {
  EXPECT_THROW(parse_pipedream_graph(node("a"), "g.txt", 0), InputError);
  EXPECT_THROW(parse_pipedream_graph(node("a"), "g.txt", -2), InputError);
}

TEST(PipedreamGraph, RejectsTotalsThatOverflow) {
  const std::string huge =
      "forward_compute_time=1e308, backward_compute_time=0, "
      "activation_size=0, parameter_size=1e308";
  EXPECT_THROW(parse_pipedream_graph(node("a", huge) + node("b", huge) + node("c", huge) +
                                         graph_edge("a", "b") + graph_edge("b", "c"),
                                     "g.txt", 1),
               InputError);
}

TEST(PipedreamGraph, RejectsUnreadableFile) {
  const std::string missing = kGraphs + "no-such-graph.txt";
  EXPECT_THAT([&] { import_pipedream_graph(missing, 1); },
              ThrowsMessage<InputError>(HasSubstr(missing)));
  EXPECT_THROW(import_pipedream_graph(kGraphs, 1), InputError);  // a directory
}

}  // namespace
}  // namespace pe
