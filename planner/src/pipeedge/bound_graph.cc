#include "pipeedge/bound_graph.h"

#include <algorithm>
#include <bit>

namespace pe::detail::edge {
namespace {

/// Bits `bit`..63 of a word.
Word bits_from(std::size_t bit) { return ~Word{0} << bit; }
/// Bits 0..`bit` of a word.
Word bits_to(std::size_t bit) {
  return bit + 1 == kWordBits ? ~Word{0} : (Word{1} << (bit + 1)) - 1;
}

/// The 64 bits of a set from position `position` on (bit t: position + t), zero outside
/// the set's words [first_word, first_word + count).
Word bits_at(const Word* words, std::size_t first_word, std::size_t count, std::size_t position) {
  const auto word = [&](std::size_t w) {
    return w >= first_word && w < first_word + count ? words[w - first_word] : Word{0};
  };
  const std::size_t w = position / kWordBits;
  const std::size_t shift = position % kWordBits;
  if (shift == 0) return word(w);
  return (word(w) >> shift) | (word(w + 1) << (kWordBits - shift));
}

}  // namespace

BoundGraph::BoundGraph(const StageTables& tables, const EdgeCluster& cluster,
                       const EndsByType& ends, Seconds bound)
    : tables_(tables), types_(cluster.types.size()) {
  for (std::size_t type = 0; type < cluster.types.size(); ++type)
    if (tables.used(type)) build_type(type, ends[type], bound);
  group_classes(cluster);
}

void BoundGraph::build_type(std::size_t type, const std::uint32_t* ends, Seconds bound) {
  const std::size_t layers = tables_.layers();
  TypeGraph& graph = types_[type];
  graph.ends = ends;
  graph.cut_ok.assign(word_count(layers + 1), 0);
  set_bit(graph.cut_ok.data(), 0);
  set_bit(graph.cut_ok.data(), layers);
  for (std::size_t cut = 1; cut < layers; ++cut)
    if (tables_.transfer(type, cut) <= bound) set_bit(graph.cut_ok.data(), cut);
  // previous_ok[p]: the last allowed cut <= p.
  std::vector<std::uint32_t> previous_ok(layers + 1, 0);
  for (std::size_t p = 1; p <= layers; ++p)
    previous_ok[p] =
        test_bit(graph.cut_ok.data(), p) ? static_cast<std::uint32_t>(p) : previous_ok[p - 1];
  graph.plain.resize(layers);
  graph.window_to.assign(layers, 0);
  graph.near_window.assign(layers, 0);
  graph.furthest.resize(layers);
  for (std::size_t start = 0; start < layers; ++start) {
    graph.plain[start] = graph.furthest[start] = static_cast<std::uint32_t>(start);
    if (!test_bit(graph.cut_ok.data(), start)) continue;
    const std::size_t end = ends[start];
    const std::size_t full = tables_.full(type, start);
    const std::size_t plain = std::min(end, full);
    graph.plain[start] = static_cast<std::uint32_t>(plain);
    std::size_t furthest = start;
    if (end > full) {
      graph.window_to[start] = static_cast<std::uint32_t>(end);
      furthest = highest_window_end(type, start);
      if (end - full <= kWordBits) {
        const WindowView window = tables_.window(type, start);
        graph.near_window[start] =
            bits_at(window.words, window.first_word, window.count, full + 1) &
            bits_at(graph.cut_ok.data(), 0, graph.cut_ok.size(), full + 1) &
            bits_to(end - full - 1);
      }
    }
    if (furthest == start && previous_ok[plain] > start) furthest = previous_ok[plain];
    graph.furthest[start] = static_cast<std::uint32_t>(furthest);
    graph.longest = std::max(graph.longest, furthest - start);
  }
}

// The last allowed cut j in (full, E] of `start` that fits (start when none).
std::size_t BoundGraph::highest_window_end(std::size_t type, std::size_t start) const {
  const TypeGraph& graph = types_[type];
  const WindowView window = tables_.window(type, start);
  const std::size_t end = graph.window_to[start];
  const std::size_t top = std::min(end / kWordBits, window.first_word + window.count - 1);
  for (std::size_t w = top + 1; w-- > window.first_word;) {
    Word bits = window.words[w - window.first_word] & graph.cut_ok[w];
    if (w == end / kWordBits) bits &= bits_to(end % kWordBits);
    if (bits != 0)
      return w * kWordBits + kWordBits - 1 - static_cast<std::size_t>(std::countl_zero(bits));
  }
  return start;
}

// Whether some allowed cut j in [from_end, E] with a fit bit of `start` is in the set.
bool BoundGraph::window_hit(std::size_t type, std::size_t start, std::size_t from_end,
                            const Word* set, std::size_t first_word, std::size_t count) const {
  const TypeGraph& graph = types_[type];
  const WindowView window = tables_.window(type, start);
  const std::size_t end = graph.window_to[start];
  const std::size_t low = std::max({from_end / kWordBits, window.first_word, first_word});
  const std::size_t high =
      std::min({end / kWordBits, window.first_word + window.count - 1, first_word + count - 1});
  for (std::size_t w = low; w <= high; ++w) {
    Word bits = window.words[w - window.first_word] & set[w - first_word] & graph.cut_ok[w];
    if (w == from_end / kWordBits) bits &= bits_from(from_end % kWordBits);
    if (w == end / kWordBits) bits &= bits_to(end % kWordBits);
    if (bits != 0) return true;
  }
  return false;
}

bool BoundGraph::type_allows(std::size_t type, std::size_t start, std::size_t end) const {
  const TypeGraph& graph = types_[type];
  return start < end && end <= graph.ends[start] && test_bit(graph.cut_ok.data(), start) &&
         test_bit(graph.cut_ok.data(), end) && tables_.fits(type, start, end);
}

void BoundGraph::add_predecessors(std::size_t k, const Word* from, std::size_t first_word,
                                  std::size_t count, std::size_t limit, Word* into,
                                  std::size_t& low_word, std::size_t& high_word) const {
  const std::size_t type = classes_[k].type;
  const TypeGraph& graph = types_[type];
  // Locals, not members or the references: `into` holds the same integer type, so the
  // compiler would reload them after every bit set.
  const Word* cut_ok = graph.cut_ok.data();
  const std::uint32_t* plain = graph.plain.data();
  const std::uint32_t* window_to = graph.window_to.data();
  const Word* near_window = graph.near_window.data();
  const std::size_t longest = graph.longest;
  std::size_t lowest = tables_.layers() + 1;  // the lowest and highest start set
  std::size_t highest = 0;
  std::size_t previous = 0;  // the previous allowed cut in the set (0: none yet)
  for_each_bit(from, count, [&](std::size_t bit) {
    const std::size_t end = first_word * kWordBits + bit;
    if (end == 0 || !test_bit(cut_ok, end)) return;
    // Starts i in [previous, end) have `end` as their first candidate end; stages are at
    // most `longest` layers.
    const std::size_t low = std::max(end > longest ? end - longest : 0, previous);
    const std::size_t high = std::min(end - 1, limit);
    previous = end;
    for (std::size_t start = low; start <= high; ++start) {
      if (end > plain[start]) {
        // Only ends beyond full (= plain here) with a fit bit are left; no allowed cut of
        // the set lies before `end`, so the whole window can be read.
        if (window_to[start] < end) continue;
        const std::size_t beyond_full = std::size_t{plain[start]} + 1;
        const bool hit =
            window_to[start] - plain[start] <= kWordBits
                ? (near_window[start] & bits_at(from, first_word, count, beyond_full)) != 0
                : window_hit(type, start, std::max(beyond_full, end), from, first_word, count);
        if (!hit) continue;
      }
      set_bit(into, start);
      lowest = std::min(lowest, start);
      highest = start;
    }
  });
  if (lowest > highest) return;
  low_word = std::min(low_word, lowest / kWordBits);
  high_word = std::max(high_word, highest / kWordBits + 1);
}

std::size_t BoundGraph::furthest_end(std::size_t k, std::size_t start) const {
  return types_[classes_[k].type].furthest[start];
}

bool BoundGraph::allows(std::size_t k, std::size_t start, std::size_t end) const {
  return type_allows(classes_[k].type, start, end);
}

// Whether types a and b allow exactly the same stages: the same furthest end from every
// start, the same allowed cuts where both allow every fitting end, and the same stages
// where either decides by fit bits (so the work is bounded by the fit-bit windows).
bool BoundGraph::same_stages(std::size_t a, std::size_t b) const {
  const TypeGraph& x = types_[a];
  const TypeGraph& y = types_[b];
  const std::size_t layers = tables_.layers();
  std::vector<std::uint32_t> differing(layers + 1, 0);  // cuts 1..p allowed by one only
  for (std::size_t p = 1; p <= layers; ++p)
    differing[p] =
        differing[p - 1] + (test_bit(x.cut_ok.data(), p) != test_bit(y.cut_ok.data(), p));
  for (std::size_t start = 0; start < layers; ++start) {
    const std::size_t furthest = x.furthest[start];
    if (furthest != y.furthest[start]) return false;
    if (furthest == start) continue;
    const std::size_t plain = std::min<std::size_t>({x.plain[start], y.plain[start], furthest});
    if (differing[plain] != differing[start]) return false;
    for (std::size_t end = plain + 1; end <= furthest; ++end)
      if (type_allows(a, start, end) != type_allows(b, start, end)) return false;
  }
  return true;
}

// The number of cut positions where some allowed stage of `type` ends.
std::size_t BoundGraph::end_count(std::size_t type) const {
  const TypeGraph& graph = types_[type];
  const std::size_t layers = tables_.layers();
  std::vector<std::int64_t> cover(layers + 2, 0);
  std::vector<Word> marked(word_count(layers + 1), 0);
  for (std::size_t start = 0; start < layers; ++start) {
    if (graph.plain[start] > start) {
      ++cover[start + 1];
      --cover[graph.plain[start] + 1];
    }
    const std::size_t end = graph.window_to[start];
    if (end == 0) continue;
    const WindowView window = tables_.window(type, start);
    const std::size_t top = std::min(end / kWordBits, window.first_word + window.count - 1);
    for (std::size_t w = window.first_word; w <= top; ++w) {
      Word bits = window.words[w - window.first_word];
      if (w == end / kWordBits) bits &= bits_to(end % kWordBits);
      marked[w] |= bits;
    }
  }
  std::size_t ends = 0;
  std::int64_t covered = 0;
  for (std::size_t end = 1; end <= layers; ++end) {
    covered += cover[end];
    if (test_bit(graph.cut_ok.data(), end) && (covered > 0 || test_bit(marked.data(), end))) ++ends;
  }
  return ends;
}

// The layers that the longest allowed stages of `type` span, summed over starts.
std::size_t BoundGraph::reach_sum(std::size_t type) const {
  const TypeGraph& graph = types_[type];
  std::size_t sum = 0;
  for (std::size_t start = 0; start < tables_.layers(); ++start)
    sum += graph.furthest[start] - start;
  return sum;
}

std::size_t BoundGraph::restrict_capacities(std::size_t most_vectors) {
  const auto vectors = [&] {
    double product = 1;
    for (const StageClass& group : classes_) product *= static_cast<double>(group.capacity + 1);
    return product;
  };
  std::vector<std::size_t> reach(classes_.size());
  for (std::size_t k = 0; k < classes_.size(); ++k) reach[k] = reach_sum(classes_[k].type);
  std::size_t removed = 0;
  while (!classes_.empty() && vectors() > static_cast<double>(most_vectors)) {
    std::size_t pick = 0;
    for (std::size_t k = 1; k < classes_.size(); ++k) {
      const std::size_t a = classes_[k].capacity;
      const std::size_t b = classes_[pick].capacity;
      if (a > b || (a == b && reach[k] <= reach[pick])) pick = k;
    }
    --classes_[pick].capacity;
    ++removed;
    if (classes_[pick].capacity == 0) {
      classes_.erase(classes_.begin() + static_cast<std::ptrdiff_t>(pick));
      reach.erase(reach.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  return removed;
}

void BoundGraph::group_classes(const EdgeCluster& cluster) {
  std::vector<std::size_t> class_of(cluster.types.size(), classes_.size());
  for (std::size_t type = 0; type < cluster.types.size(); ++type) {
    if (!tables_.used(type)) continue;
    std::size_t k = 0;
    while (k < classes_.size() && !same_stages(classes_[k].type, type)) ++k;
    if (k == classes_.size()) classes_.push_back(StageClass{type, {}, 0});
    class_of[type] = k;
  }
  for (std::size_t host = 0; host < cluster.hosts.size(); ++host)
    classes_[class_of[cluster.hosts[host].type]].hosts.push_back(host);
  for (StageClass& group : classes_)
    group.capacity = std::min(group.hosts.size(), end_count(group.type));
  std::erase_if(classes_, [](const StageClass& group) { return group.capacity == 0; });
}

}  // namespace pe::detail::edge
