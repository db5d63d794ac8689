// A graph.txt with each node's stage_id set from a plan (pe-plan --export-graph).
#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "pe/error.h"
#include "pe/importers/pipedream_graph.h"
#include "pipedream_graph_dag.h"
#include "pipedream_graph_states.h"
#include "pipedream_graph_text.h"
#include "yaml_input.h"

namespace pe {
namespace {

namespace pd = detail::pipedream;

const std::string kField = "pipedream_graph_with_stages";

// The last state of each stage; throws UsageError when the plan's stages do not cover
// states 0..n-1 once, in order, each cut containing the one before.
std::vector<std::size_t> stage_ends(const Plan& plan, const pd::GraphStates& states) {
  const std::size_t n = states.states.size();
  std::vector<std::size_t> ends;
  std::size_t next = 0;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const PlanStage& st = plan.stages[s];
    if (st.first_state != next || st.last_state < st.first_state || st.last_state >= n)
      throw UsageError(kField,
                       kField + ": plan stage " + std::to_string(s) + " holds states " +
                           std::to_string(st.first_state) + "-" + std::to_string(st.last_state) +
                           ", expected the stages to cover the graph's " + std::to_string(n) +
                           " states in order from " + std::to_string(next));
    if (!ends.empty() && !states.cuts.empty() &&
        !pd::contained(states.cuts[ends.back()], states.cuts[st.last_state]))
      throw UsageError(kField, kField + ": plan stage " + std::to_string(s) + " ends at state " +
                                   std::to_string(st.last_state) +
                                   ", whose cut does not contain the previous stage's (state " +
                                   std::to_string(ends.back()) + ")");
    ends.push_back(st.last_state);
    next = st.last_state + 1;
  }
  if (next != n)
    throw UsageError(kField, kField + ": the plan's stages end at state " +
                                 std::to_string(next == 0 ? 0 : next - 1) + " but the graph has " +
                                 std::to_string(n) + " states");
  return ends;
}

// The stage of every node line, in file order. Operators get the stage whose states hold
// them; nodes the importer removes get a neighbour's: a model input its first consumer's
// (the lowest stage among them), a tracing sink its producer's (the highest); one with
// neither, stage 0.
std::vector<int> stage_of_nodes(const pd::GraphText& text, const pd::OperatorGraph& graph,
                                const std::vector<std::size_t>& operator_stage) {
  std::map<std::string, std::size_t> node_index;
  for (std::size_t i = 0; i < text.nodes.size(); ++i) node_index.emplace(text.nodes[i].id, i);
  std::vector<int> stage(text.nodes.size(), -1);
  for (std::size_t v = 0; v < operator_stage.size(); ++v)
    stage[node_index.at(graph.operators[v].id)] = static_cast<int>(operator_stage[v]);
  std::vector<int> removed = stage;  // the operators' stages only, for the neighbours
  for (const pd::EdgeLine& e : text.edges) {
    const std::size_t from = node_index.at(e.source), to = node_index.at(e.target);
    if (removed[from] < 0 && removed[to] >= 0)  // an input feeding an operator
      stage[from] = stage[from] < 0 ? removed[to] : std::min(stage[from], removed[to]);
    if (removed[to] < 0 && removed[from] >= 0)  // a sink fed by an operator
      stage[to] = std::max(stage[to], removed[from]);
  }
  for (int& s : stage) s = std::max(s, 0);
  return stage;
}

// A node line as written, with its stage_id field replaced or added.
std::string with_stage_id(std::string_view line, int stage) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
    line.remove_suffix(1);
  // Fields are separated by " -- "; a fourth one is the stage_id (read_graph_text checked it).
  std::size_t separators = 0, third = std::string_view::npos;
  for (std::size_t at = line.find(" -- "); at != std::string_view::npos;
       at = line.find(" -- ", at + 4))
    if (++separators == 3) third = at;
  const std::string_view fields = line.substr(0, third);
  return std::string(fields) + " -- stage_id=" + std::to_string(stage);
}

}  // namespace

std::string pipedream_graph_with_stages(const std::string& text, const std::string& file_label,
                                        const Plan& plan, std::size_t max_cuts) {
  const pd::GraphText lines = pd::read_graph_text(text, file_label);
  const pd::OperatorGraph graph = pd::build_operator_graph(lines, file_label);
  const pd::GraphStates states = pd::graph_states(graph, file_label, max_cuts);
  const std::vector<int> stage =
      stage_of_nodes(lines, graph, pd::first_end_holding(states, stage_ends(plan, states)));
  std::map<long, int> stage_at_line;
  for (std::size_t i = 0; i < lines.nodes.size(); ++i)
    stage_at_line.emplace(lines.nodes[i].line, stage[i]);
  std::string_view rest = text;
  if (rest.starts_with("\xEF\xBB\xBF")) rest.remove_prefix(3);  // as read_graph_text does
  std::string out;
  out.reserve(text.size() + 16 * lines.nodes.size());
  for (long number = 1; !rest.empty(); ++number) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    const auto node = stage_at_line.find(number);
    out += node == stage_at_line.end() ? std::string(line) : with_stage_id(line, node->second);
    out += '\n';
  }
  return out;
}

std::string pipedream_graph_file_with_stages(const std::string& path, const Plan& plan,
                                             std::size_t max_cuts) {
  return pipedream_graph_with_stages(detail::yaml_input::read_text(path), path, plan, max_cuts);
}

}  // namespace pe
