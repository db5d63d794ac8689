#include "simulate/fill_work.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "pe/error.h"

namespace pe::detail::fill {
namespace {

constexpr int kMaxChunks = 1000000;
constexpr long long kMaxPieces = 1LL << 24;

[[noreturn]] void bad(const WorkItem& item, const std::string& what) {
  throw InputError(item.where.empty() ? "work list" : item.where,
                   "work item '" + item.name + "': " + what);
}

std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void check_item(const WorkItem& item, int stage_count) {
  if (item.name.empty()) bad(item, "name must not be empty");
  if (item.name == "forward" || item.name == "backward")
    bad(item, "'forward' and 'backward' are reserved for dependencies, not item names");
  if (!std::isfinite(item.duration) || item.duration <= 0)
    bad(item, "duration " + number(item.duration) + " s is not a positive finite number");
  const bool per_micro_batch =
      item.after == WorkAfter::Forward || item.after == WorkAfter::Backward;
  if (!per_micro_batch && (item.chunks < 1 || item.chunks > kMaxChunks))
    bad(item, "chunks " + std::to_string(item.chunks) + " is not in [1, 1000000]");
  std::set<int> seen;
  for (int stage : item.stages) {
    if (stage < 0 || stage >= stage_count)
      bad(item, "stage " + std::to_string(stage) + " is not in [0, " + std::to_string(stage_count) +
                    ") of this plan");
    if (!seen.insert(stage).second) bad(item, "stage " + std::to_string(stage) + " listed twice");
  }
}

// For each item, whether following `next` links from it runs into a cycle. Each item is
// walked once: O(n).
std::vector<bool> leads_to_cycle(const std::vector<int>& next) {
  enum class Walk : unsigned char { New, OnPath, Ends, Cycles };
  std::vector<Walk> state(next.size(), Walk::New);
  std::vector<int> path;
  for (std::size_t i = 0; i < next.size(); ++i) {
    int at = static_cast<int>(i);
    for (path.clear(); at >= 0 && state[at] == Walk::New; at = next[at]) {
      state[at] = Walk::OnPath;
      path.push_back(at);
    }
    const Walk end = at < 0 || state[at] == Walk::Ends ? Walk::Ends : Walk::Cycles;
    for (const int p : path) state[p] = end;
  }
  std::vector<bool> cycles(next.size());
  for (std::size_t i = 0; i < next.size(); ++i) cycles[i] = state[i] == Walk::Cycles;
  return cycles;
}

// Unknown `after` names and items whose `after` links run into a cycle, the first faulty
// item in list order. O(n log n).
void check_dependencies(const WorkList& work) {
  const std::vector<int> next = item_dependencies(work);
  const std::vector<bool> cycles = leads_to_cycle(next);
  for (std::size_t i = 0; i < work.items.size(); ++i) {
    const WorkItem& item = work.items[i];
    if (item.after == WorkAfter::Item && next[i] < 0)
      bad(item, "after: unknown item '" + item.after_item + "'");
    if (cycles[i]) bad(item, "its 'after' dependencies form a cycle");
  }
}

std::vector<int> stages_of(const WorkItem& item, int stage_count) {
  if (!item.stages.empty()) return item.stages;
  std::vector<int> all(static_cast<std::size_t>(stage_count));
  for (int s = 0; s < stage_count; ++s) all[s] = s;
  return all;
}

int pieces_per_stage(const WorkItem& item, int micro_batches) {
  const bool per_micro_batch =
      item.after == WorkAfter::Forward || item.after == WorkAfter::Backward;
  return per_micro_batch ? micro_batches : item.chunks;
}

// End of the forward or backward that piece k of a per-micro-batch item waits for; 0 for
// other items.
Seconds ready_time(const WorkItem& item, int stage, int k, const EventIndex& index) {
  if (item.after != WorkAfter::Forward && item.after != WorkAfter::Backward) return 0;
  const EventKind kind =
      item.after == WorkAfter::Forward ? EventKind::Forward : EventKind::Backward;
  const Event* event = index.find(stage, kind, k);
  if (event == nullptr)
    bad(item, "the timeline has no " + to_string(kind) + " of micro-batch " + std::to_string(k) +
                  " on stage " + std::to_string(stage));
  return event->end;
}

}  // namespace

void check_options(const FillOptions& options) {
  if (!std::isfinite(options.margin) || options.margin < 0 || options.margin > 10)
    throw UsageError("fill margin must be in [0, 10], got " + number(options.margin));
  if (options.max_iterations < 1 || options.max_iterations > 1000000)
    throw UsageError("fill max_iterations must be in [1, 1000000], got " +
                     std::to_string(options.max_iterations));
}

void check_work(const WorkList& work, int stage_count) {
  std::set<std::string> names;
  for (const WorkItem& item : work.items) {
    check_item(item, stage_count);
    if (!names.insert(item.name).second) bad(item, "the name is used twice");
  }
  check_dependencies(work);
}

std::vector<int> item_dependencies(const WorkList& work) {
  std::map<std::string, int> position;
  for (std::size_t i = 0; i < work.items.size(); ++i)
    position.emplace(work.items[i].name, static_cast<int>(i));
  std::vector<int> next(work.items.size(), -1);
  for (std::size_t i = 0; i < work.items.size(); ++i) {
    const WorkItem& item = work.items[i];
    auto it = position.find(item.after_item);
    if (item.after == WorkAfter::Item && it != position.end()) next[i] = it->second;
  }
  return next;
}

std::vector<Piece> make_pieces(const WorkList& work, const Timeline& timeline,
                               const EventIndex& index) {
  const std::vector<int> dependency = item_dependencies(work);
  std::vector<Piece> pieces;
  long long total = 0;
  for (std::size_t i = 0; i < work.items.size(); ++i) {
    const WorkItem& item = work.items[i];
    const int count = pieces_per_stage(item, index.micro_batches());
    const std::vector<int> stages = stages_of(item, timeline.stage_count);
    total += static_cast<long long>(count) * static_cast<long long>(stages.size());
    if (total > kMaxPieces) bad(item, "the work list has more than 2^24 pieces");
    const Seconds length = item.split_total && count > 0 ? item.duration / count : item.duration;
    if (!(length > 0))
      bad(item, "duration " + number(item.duration) + " s over " + std::to_string(count) +
                    " pieces is 0 s a piece");
    for (int stage : stages)
      for (int k = 0; k < count; ++k)
        pieces.push_back({static_cast<int>(i), stage, k, length, ready_time(item, stage, k, index),
                          dependency[i]});
  }
  return pieces;
}

}  // namespace pe::detail::fill
