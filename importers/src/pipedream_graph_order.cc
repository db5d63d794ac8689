// low_crossing_order (declared in pipedream_graph_dag.h): greedy Kahn's algorithm and the
// cycle report when it cannot place every operator.
//
// O((n + e) log n) for n operators and e edges: each operator's change is kept up to date
// (`freed_`, the bytes its placement would release) instead of being summed over its
// in-edges at every offer, each edge triggers at most one re-offer, and an operator's
// last unplaced consumer is looked up once per operator. Activation sizes are whole
// numbers of bytes in practice, so the running sums are exact and the order is the one
// the sum over in-edges gives.
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
      : g_(g),
        in_left_(count()),
        out_left_(count()),
        freed_(count()),
        stamp_(count()),
        placed_(count()) {
    for (Vertex v = 0; v < count(); ++v) {
      in_left_[v] = boost::in_degree(v, g_.graph);
      out_left_[v] = boost::out_degree(v, g_.graph);
    }
    for (Vertex u = 0; u < count(); ++u)
      if (out_left_[u] == 1) freed_[last_consumer(u)] -= g_.operators[u].activation;
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
  // outputs of predecessors whose last consumer it is (`freed_[v]`, kept up to date).
  Bytes change(Vertex v) const {
    return (out_left_[v] > 0 ? g_.operators[v].activation : 0.0) + freed_[v];
  }

  // The one unplaced consumer of u (u has exactly one).
  Vertex last_consumer(Vertex u) const {
    for (auto [e, end] = boost::out_edges(u, g_.graph); e != end; ++e)
      if (!placed_[boost::target(*e, g_.graph)]) return boost::target(*e, g_.graph);
    return u;
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

  // u has one unplaced consumer left: placing it frees u's output; re-offered if ready.
  void reoffer_last_consumer(Vertex u) {
    const Vertex w = last_consumer(u);
    freed_[w] -= g_.operators[u].activation;
    if (in_left_[w] == 0) offer(w);
  }

  const OperatorGraph& g_;
  std::vector<std::size_t> in_left_;   // unplaced predecessors
  std::vector<std::size_t> out_left_;  // unplaced successors
  std::vector<Bytes> freed_;           // minus the outputs v alone still needs
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

// The line of the cycle's latest edge line.
long cycle_line(const OperatorGraph& g, const std::vector<Vertex>& cycle) {
  long line = 0;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const auto [edge, exists] = boost::edge(cycle[i], cycle[(i + 1) % cycle.size()], g.graph);
    if (exists) line = std::max(line, g.graph[edge].line);
  }
  return line;
}

// "a -> b -> a"; a long cycle is named by its first kShown nodes and its length, so that
// the message stays short however large the cycle.
std::string cycle_path(const OperatorGraph& g, const std::vector<Vertex>& cycle) {
  constexpr std::size_t kShown = 10;
  std::string path;
  for (std::size_t i = 0; i < std::min(cycle.size(), kShown); ++i)
    path += g.operators[cycle[i]].id + " -> ";
  if (cycle.size() > kShown)
    return path + "... (" + std::to_string(cycle.size()) + " nodes in all)";
  return path + g.operators[cycle.front()].id;
}

[[noreturn]] void throw_cycle(const OperatorGraph& g, const std::vector<Vertex>& cycle,
                              const std::string& file) {
  throw InputError(location(file, cycle_line(g, cycle)),
                   "the graph has a cycle " + cycle_path(g, cycle) + ", expected a DAG");
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
