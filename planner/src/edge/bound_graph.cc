#include "bound_graph.h"

#include <algorithm>

namespace pe::edge {
namespace {

/// Word `w` (absolute index) of a row, zero outside its span.
Word word_at(const RowView& row, std::size_t w) {
  if (w < row.first_word || w >= row.first_word + row.count) return 0;
  return row.words[w - row.first_word];
}

}  // namespace

BoundGraph::BoundGraph(const StageTables& tables, const EdgeCostModel& cost,
                       const EdgeCluster& cluster, Seconds bound)
    : tables_(tables), rows_(cluster.types.size()) {
  for (std::size_t type = 0; type < cluster.types.size(); ++type)
    if (tables.used(type)) fill_type(cost, cluster, type, bound);
  group_classes(cluster);
}

void BoundGraph::fill_type(const EdgeCostModel& cost, const EdgeCluster& cluster,
                           std::size_t type, Seconds bound) {
  const std::size_t layers = tables_.layers();
  const double bandwidth = cluster.types[type].bandwidth_mbps;
  const std::vector<Seconds>& times = cluster.types[type].layer_seconds;
  std::vector<bool> cut_ok(layers + 1, true);
  for (std::size_t cut = 1; cut < layers; ++cut) cut_ok[cut] = cost.transfer(cut, bandwidth) <= bound;
  std::vector<Word>& bits = rows_[type];
  bits.assign(tables_.row_words(type), 0);
  for (std::size_t start = 0; start < layers; ++start) {
    if (!cut_ok[start]) continue;
    Seconds compute = 0.0;
    for (std::size_t end = start + 1; end <= tables_.reach(type, start); ++end) {
      compute += times[end - 1];
      if (compute > bound) break;
      if (!cut_ok[end] || !tables_.fits(type, start, end)) continue;
      const RowSpan& span = tables_.row(type, end);
      set_bit(bits.data() + span.offset, start - span.first_word * kWordBits);
    }
  }
}

RowView BoundGraph::type_row(std::size_t type, std::size_t end) const {
  const RowSpan& span = tables_.row(type, end);
  return RowView{rows_[type].data() + span.offset, span.first_word, span.words};
}

bool BoundGraph::same_rows(std::size_t a, std::size_t b) const {
  for (std::size_t end = 1; end <= tables_.layers(); ++end) {
    const RowView x = type_row(a, end);
    const RowView y = type_row(b, end);
    const std::size_t low = std::min(x.first_word, y.first_word);
    const std::size_t high = std::max(x.first_word + x.count, y.first_word + y.count);
    for (std::size_t w = low; w < high; ++w)
      if (word_at(x, w) != word_at(y, w)) return false;
  }
  return true;
}

void BoundGraph::group_classes(const EdgeCluster& cluster) {
  std::vector<std::size_t> class_of(cluster.types.size(), classes_.size());
  for (std::size_t type = 0; type < cluster.types.size(); ++type) {
    if (!tables_.used(type)) continue;
    std::size_t k = 0;
    while (k < classes_.size() && !same_rows(classes_[k].type, type)) ++k;
    if (k == classes_.size()) classes_.push_back(StageClass{type, {}, 0});
    class_of[type] = k;
  }
  for (std::size_t host = 0; host < cluster.hosts.size(); ++host)
    classes_[class_of[cluster.hosts[host].type]].hosts.push_back(host);
  for (StageClass& group : classes_) {
    std::size_t ends = 0;
    for (std::size_t end = 1; end <= tables_.layers(); ++end) {
      const RowView row = type_row(group.type, end);
      ends += std::any_of(row.words, row.words + row.count, [](Word w) { return w != 0; });
    }
    group.capacity = std::min(group.hosts.size(), ends);
  }
  std::erase_if(classes_, [](const StageClass& group) { return group.capacity == 0; });
}

RowView BoundGraph::starts(std::size_t k, std::size_t end) const {
  return type_row(classes_[k].type, end);
}

bool BoundGraph::allows(std::size_t k, std::size_t start, std::size_t end) const {
  const RowView row = starts(k, end);
  const std::size_t word = start / kWordBits;
  return ((word_at(row, word) >> (start % kWordBits)) & 1U) != 0;
}

}  // namespace pe::edge
