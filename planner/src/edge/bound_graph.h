// The stages allowed under one bottleneck bound, with device types that allow exactly the
// same stages merged into classes.
#pragma once

#include <cstddef>
#include <vector>

#include "bits.h"
#include "pe/edge.h"
#include "pe/edge_cost.h"
#include "stage_tables.h"

namespace pe::edge {

/// Device types that allow the same stages under one bound: for that bound their hosts
/// are interchangeable, so the search only counts how many of them are used.
struct StageClass {
  std::size_t type = 0;            ///< Representative device type.
  std::vector<std::size_t> hosts;  ///< Hosts of all member types, ascending (devices.yml order).
  std::size_t capacity = 0;        ///< Most stages the class can run in one schedule.
};

/// Start positions of the allowed stages of one class that end at one cut position:
/// bit b of words[0..words) stands for start position first_word * 64 + b.
struct RowView {
  const Word* words = nullptr;
  std::size_t first_word = 0;
  std::size_t count = 0;
};

/// Stage (i, j] on type u is allowed under bound T iff it fits u's memory, its compute on
/// u is <= T, and each of its cuts (i when i > 0, j when j < L) takes <= T at u's own
/// bandwidth. A cut's time uses the slower NIC of its two hosts, and that equals the larger
/// of the two one-sided times, so a schedule's bottleneck is <= T iff all of its stages are
/// allowed: the stage choices become independent of each other.
class BoundGraph {
 public:
  BoundGraph(const StageTables& tables, const EdgeCostModel& cost, const EdgeCluster& cluster,
             Seconds bound);

  std::size_t layers() const { return tables_.layers(); }
  const std::vector<StageClass>& classes() const { return classes_; }
  /// Starts of the allowed stages of class `k` ending at `end` (1..L).
  RowView starts(std::size_t k, std::size_t end) const;
  /// Whether stage (start, end] is allowed for class `k`.
  bool allows(std::size_t k, std::size_t start, std::size_t end) const;

 private:
  RowView type_row(std::size_t type, std::size_t end) const;
  void fill_type(const EdgeCostModel& cost, const EdgeCluster& cluster, std::size_t type,
                 Seconds bound);
  bool same_rows(std::size_t a, std::size_t b) const;
  void group_classes(const EdgeCluster& cluster);

  const StageTables& tables_;
  std::vector<std::vector<Word>> rows_;  ///< Per type, laid out by StageTables::row.
  std::vector<StageClass> classes_;
};

}  // namespace pe::edge
