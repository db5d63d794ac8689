// low_crossing_order (declared in pipedream_graph_dag.h): greedy Kahn's algorithm and the
// cycle report when it cannot place every operator.
#include "pipedream_graph_dag.h"

#include <algorithm>
#include <queue>

#include "pe/error.h"

namespace pe::detail::pipedream {
namespace {

using Vertex = std::size_t;

// A ready operator and the change in crossing bytes if it were placed next. `stamp`
// tells stale heap entries (the change was recomputed since) from current ones.
struct Candidate {
  Bytes change;
  Vertex vertex;
  unsigned stamp;
  bool operator>(const Candidate& other) const {
    return change != other.change ? change > other.change : vertex > other.vertex;
  }
};

class GreedyKahn {
 public:
  explicit GreedyKahn(const OperatorGraph& g)
      : g_(g), in_left_(count()), out_left_(count()), stamp_(count()), placed_(count()) {
    for (Vertex v = 0; v < count(); ++v) {
      in_left_[v] = boost::in_degree(v, g_.graph);
      out_left_[v] = boost::out_degree(v, g_.graph);
    }
  }

  // Places every operator it can; the result is short when the graph has a cycle.
  std::vector<Vertex> run() {
    for (Vertex v = 0; v < count(); ++v)
      if (in_left_[v] == 0) offer(v);
    while (!ready_.empty()) {
      const Candidate best = ready_.top();
      ready_.pop();
      if (!placed_[best.vertex] && best.stamp == stamp_[best.vertex]) place(best.vertex);
    }
    return order_;
  }

  // An unplaced operator on a cycle, with its predecessor on that cycle.
  Vertex unplaced_predecessor(Vertex v) const {
    for (auto [e, end] = boost::in_edges(v, g_.graph); e != end; ++e)
      if (!placed_[boost::source(*e, g_.graph)]) return boost::source(*e, g_.graph);
    return v;
  }
  bool placed(Vertex v) const { return placed_[v]; }

 private:
  std::size_t count() const { return g_.operators.size(); }

  // Crossing bytes gained by placing v: its own output if it feeds anything, minus the
  // outputs of predecessors whose last consumer it is.
  Bytes change(Vertex v) const {
    Bytes delta = out_left_[v] > 0 ? g_.operators[v].activation : 0.0;
    for (auto [e, end] = boost::in_edges(v, g_.graph); e != end; ++e) {
      const Vertex u = boost::source(*e, g_.graph);
      if (out_left_[u] == 1) delta -= g_.operators[u].activation;
    }
    return delta;
  }

  void offer(Vertex v) { ready_.push({change(v), v, ++stamp_[v]}); }

  void place(Vertex v) {
    placed_[v] = true;
    order_.push_back(v);
    for (auto [e, end] = boost::in_edges(v, g_.graph); e != end; ++e) {
      const Vertex u = boost::source(*e, g_.graph);
      if (--out_left_[u] == 1) reoffer_last_consumer(u);
    }
    for (auto [e, end] = boost::out_edges(v, g_.graph); e != end; ++e) {
      const Vertex w = boost::target(*e, g_.graph);
      if (--in_left_[w] == 0) offer(w);
    }
  }

  // u has one unplaced consumer left; if it is ready, placing it now frees u's output.
  void reoffer_last_consumer(Vertex u) {
    for (auto [e, end] = boost::out_edges(u, g_.graph); e != end; ++e) {
      const Vertex w = boost::target(*e, g_.graph);
      if (!placed_[w] && in_left_[w] == 0) offer(w);
    }
  }

  const OperatorGraph& g_;
  std::vector<std::size_t> in_left_;   // unplaced predecessors
  std::vector<std::size_t> out_left_;  // unplaced successors
  std::vector<unsigned> stamp_;
  std::vector<bool> placed_;
  std::vector<Vertex> order_;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> ready_;
};

// Walks back through unplaced predecessors (every unplaced operator has one) until a
// vertex repeats; returns the cycle in edge direction.
std::vector<Vertex> find_cycle(const GreedyKahn& kahn, std::size_t count) {
  Vertex v = 0;
  while (kahn.placed(v)) ++v;
  std::vector<std::size_t> seen_at(count, count);
  std::vector<Vertex> walk;
  while (seen_at[v] == count) {
    seen_at[v] = walk.size();
    walk.push_back(v);
    v = kahn.unplaced_predecessor(v);
  }
  std::vector<Vertex> cycle(walk.begin() + static_cast<std::ptrdiff_t>(seen_at[v]), walk.end());
  std::reverse(cycle.begin(), cycle.end());
  return cycle;
}

[[noreturn]] void throw_cycle(const OperatorGraph& g, const std::vector<Vertex>& cycle,
                              const std::string& file) {
  std::string path;
  long line = 0;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const Vertex next = cycle[(i + 1) % cycle.size()];
    const auto [edge, exists] = boost::edge(cycle[i], next, g.graph);
    if (exists) line = std::max(line, g.graph[edge].line);
    path += g.operators[cycle[i]].id + " -> ";
  }
  path += g.operators[cycle.front()].id;
  throw InputError(location(file, line), "the graph has a cycle " + path + ", expected a DAG");
}

}  // namespace

std::vector<std::size_t> low_crossing_order(const OperatorGraph& graph, const std::string& file) {
  GreedyKahn kahn(graph);
  std::vector<std::size_t> order = kahn.run();
  if (order.size() < graph.operators.size())
    throw_cycle(graph, find_cycle(kahn, graph.operators.size()), file);
  return order;
}

}  // namespace pe::detail::pipedream
