// Greedy bubble filling: walks the stages' idle gaps in time order, iteration after
// iteration, and places pieces of extra work that are ready and fit with their margin.
#include "pe/fill.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>

#include "simulate/event_index.h"
#include "simulate/fill_queue.h"
#include "simulate/fill_work.h"

namespace pe {
namespace {

using detail::fill::Piece;
using detail::fill::PieceQueue;

struct Gap {
  Seconds start = 0;
  Seconds end = 0;
};

// Idle gaps of each stage in [0, makespan): where no Forward, Backward or Filler runs.
std::vector<std::vector<Gap>> stage_gaps(const Timeline& timeline) {
  std::vector<std::vector<Gap>> busy(static_cast<std::size_t>(timeline.stage_count));
  for (const Event& e : timeline.events)
    if (uses_compute(e.kind) && e.duration() > 0) busy[e.stage].push_back({e.start, e.end});
  std::vector<std::vector<Gap>> gaps(busy.size());
  for (std::size_t s = 0; s < busy.size(); ++s) {
    std::sort(busy[s].begin(), busy[s].end(),
              [](const Gap& a, const Gap& b) { return a.start < b.start; });
    Seconds free_from = 0;
    for (const Gap& b : busy[s]) {
      const Seconds until = std::min(b.start, timeline.makespan);
      if (until > free_from) gaps[s].push_back({free_from, until});
      free_from = std::max(free_from, b.end);
    }
    if (timeline.makespan > free_from) gaps[s].push_back({free_from, timeline.makespan});
  }
  return gaps;
}

// Where a stage's walk through the repeated timeline stands.
struct Cursor {
  int iteration = 0;
  std::size_t gap = 0;
  Seconds time = 0;  // From the start of iteration 0.
};

class Filler {
 public:
  Filler(const Timeline& timeline, const WorkList& work, const FillOptions& options,
         std::vector<Piece> pieces);
  /// Places what fits; call once before result().
  void run();
  FillResult result() const;

 private:
  Seconds need(const Piece& p) const { return p.length * (1 + options_.margin); }
  void exclude_unfittable();
  std::vector<PieceQueue> make_queues() const;
  bool walking(int stage) const;
  void step(int stage);
  int pick(int stage, Seconds from, Seconds until, Seconds& start);
  void place(int stage, int queue_position, Seconds start);
  std::vector<ItemFill> item_report() const;
  std::vector<StageFill> stage_report(int iterations) const;
  Timeline filled_timeline() const;

  const Timeline& timeline_;
  const WorkList& work_;
  FillOptions options_;
  std::vector<Piece> pieces_;
  std::vector<std::vector<Gap>> gaps_;
  std::vector<Cursor> cursor_;
  std::vector<FillStatus> status_;  // NeverFits / Blocked decided up front.
  std::vector<PieceQueue> queue_;   // Pending pieces of each stage.
  std::vector<int> left_;           // Unplaced pieces per item.
  std::vector<Seconds> finish_;     // Latest end of each item's placed pieces.
  std::vector<FilledPiece> placed_;
};

Filler::Filler(const Timeline& timeline, const WorkList& work, const FillOptions& options,
               std::vector<Piece> pieces)
    : timeline_(timeline),
      work_(work),
      options_(options),
      pieces_(std::move(pieces)),
      gaps_(stage_gaps(timeline)),
      cursor_(gaps_.size()),
      status_(work.items.size(), FillStatus::Done),
      left_(work.items.size(), 0),
      finish_(work.items.size(), 0) {
  for (const Piece& p : pieces_) ++left_[p.item];
  exclude_unfittable();
  queue_ = make_queues();
  for (std::size_t s = 0; s < gaps_.size(); ++s)
    if (!gaps_[s].empty()) cursor_[s].time = gaps_[s].front().start;
}

// Marks items with a piece longer than every gap of its stage, then their dependents.
void Filler::exclude_unfittable() {
  std::vector<Seconds> widest(gaps_.size(), -1);
  for (std::size_t s = 0; s < gaps_.size(); ++s)
    for (const Gap& g : gaps_[s]) widest[s] = std::max(widest[s], g.end - g.start);
  for (const Piece& p : pieces_)
    if (need(p) > widest[p.stage]) status_[p.item] = FillStatus::NeverFits;
  const std::vector<int> next = detail::fill::item_dependencies(work_);
  for (std::size_t i = 0; i < status_.size(); ++i)
    for (int at = next[i]; at >= 0 && status_[i] == FillStatus::Done; at = next[at])
      if (status_[at] == FillStatus::NeverFits) status_[i] = FillStatus::Blocked;
}

// Each stage's pieces that can still be placed, in work-list order.
std::vector<PieceQueue> Filler::make_queues() const {
  std::vector<std::vector<int>> ids(gaps_.size());
  for (std::size_t i = 0; i < pieces_.size(); ++i)
    if (status_[pieces_[i].item] == FillStatus::Done)
      ids[pieces_[i].stage].push_back(static_cast<int>(i));
  std::vector<PieceQueue> queues;
  for (std::vector<int>& stage_ids : ids) queues.emplace_back(std::move(stage_ids), pieces_);
  return queues;
}

// Whether the stage still takes part in the walk: it has pending work and iterations left.
bool Filler::walking(int stage) const {
  return !queue_[stage].empty() && cursor_[stage].iteration < options_.max_iterations;
}

// Repeatedly steps the walking stage whose cursor is earliest (ties: lowest stage). Only
// the stepped stage changes, so each walking stage is in the heap exactly once.
void Filler::run() {
  using Entry = std::pair<Seconds, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> earliest;
  for (int s = 0; s < static_cast<int>(queue_.size()); ++s)
    if (walking(s)) earliest.emplace(cursor_[s].time, s);
  while (!earliest.empty()) {
    const int stage = earliest.top().second;
    earliest.pop();
    step(stage);
    if (walking(stage)) earliest.emplace(cursor_[stage].time, stage);
  }
}

// Places one piece in the stage's current gap, or moves on to its next gap.
void Filler::step(int stage) {
  Cursor& c = cursor_[stage];
  const Seconds offset = c.iteration * timeline_.makespan;
  const Gap& gap = gaps_[stage][c.gap];
  Seconds start = 0;
  const int chosen = pick(stage, std::max(c.time, offset + gap.start), offset + gap.end, start);
  if (chosen >= 0) {
    place(stage, chosen, start);
    return;
  }
  if (++c.gap == gaps_[stage].size()) {
    c.gap = 0;
    ++c.iteration;
  }
  c.time = c.iteration * timeline_.makespan + gaps_[stage][c.gap].start;
}

// First pending piece of the stage that is ready and fits in [from, until); its position
// in the queue (start set), or -1. A piece that does not fit rules out the rest of its run.
int Filler::pick(int stage, Seconds from, Seconds until, Seconds& start) {
  PieceQueue& queue = queue_[stage];
  for (int k = queue.first(); k != queue.end(); k = queue.after_run(k)) {
    const Piece& p = pieces_[queue.piece(k)];
    if (p.after_item >= 0 && left_[p.after_item] > 0) continue;
    const Seconds ready = p.after_item >= 0 ? std::max(p.ready, finish_[p.after_item]) : p.ready;
    start = std::max(from, ready);
    if (start + need(p) <= until) return k;
  }
  return -1;
}

void Filler::place(int stage, int queue_position, Seconds start) {
  const Piece& p = pieces_[queue_[stage].piece(queue_position)];
  Cursor& c = cursor_[stage];
  placed_.push_back(
      {p.item, stage, p.index, c.iteration, start, start + p.length, start + need(p)});
  c.time = start + need(p);
  --left_[p.item];
  finish_[p.item] = std::max(finish_[p.item], start + p.length);
  queue_[stage].remove(queue_position);
}

std::vector<ItemFill> Filler::item_report() const {
  std::vector<ItemFill> items(work_.items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    items[i].name = work_.items[i].name;
    items[i].status = status_[i];
    if (status_[i] == FillStatus::Done && left_[i] > 0) items[i].status = FillStatus::Unfinished;
  }
  for (const Piece& p : pieces_) ++items[p.item].pieces;
  for (const FilledPiece& p : placed_) {
    ItemFill& item = items[p.item];
    ++item.placed;
    if (p.end >= item.finish) item.iteration = p.iteration;
    item.finish = std::max(item.finish, p.end);
  }
  for (ItemFill& item : items) {
    if (item.status == FillStatus::Done) continue;
    item.iteration = -1;
    item.finish = 0;
  }
  return items;
}

std::vector<StageFill> Filler::stage_report(int iterations) const {
  std::vector<StageFill> stages(gaps_.size());
  for (std::size_t s = 0; s < stages.size(); ++s) stages[s].stage = static_cast<int>(s);
  for (const Event& e : timeline_.events)
    if (e.kind == EventKind::Forward || e.kind == EventKind::Backward)
      stages[e.stage].compute += e.duration();
  for (const FilledPiece& p : placed_) {
    stages[p.stage].filler_total += p.end - p.start;
    if (p.iteration == 0) stages[p.stage].filler_first += p.end - p.start;
  }
  const Seconds span = timeline_.makespan;
  const double n = std::max(iterations, 1);
  for (StageFill& s : stages) {
    if (span <= 0) continue;
    s.utilization_before = s.compute / span;
    s.utilization_first = (s.compute + s.filler_first) / span;
    s.utilization_mean = (s.compute * n + s.filler_total) / (span * n);
  }
  return stages;
}

Timeline Filler::filled_timeline() const {
  Timeline filled = timeline_;
  for (const FilledPiece& p : placed_) {
    if (p.iteration != 0) continue;
    const WorkItem& item = work_.items[p.item];
    const bool per_micro_batch =
        item.after == WorkAfter::Forward || item.after == WorkAfter::Backward;
    filled.events.push_back(
        {p.stage, EventKind::Filler, per_micro_batch ? p.index : -1, p.start, p.end, item.name});
  }
  std::sort(filled.events.begin(), filled.events.end(), event_less);
  return filled;
}

FillResult Filler::result() const {
  FillResult result;
  result.pieces = placed_;
  std::sort(result.pieces.begin(), result.pieces.end(),
            [](const FilledPiece& a, const FilledPiece& b) {
              return std::tie(a.start, a.stage, a.item, a.index) <
                     std::tie(b.start, b.stage, b.item, b.index);
            });
  for (const FilledPiece& p : placed_)
    result.iterations = std::max(result.iterations, p.iteration + 1);
  result.items = item_report();
  result.stages = stage_report(result.iterations);
  result.timeline = filled_timeline();
  result.complete = std::all_of(result.items.begin(), result.items.end(),
                                [](const ItemFill& i) { return i.status == FillStatus::Done; });
  return result;
}

}  // namespace

std::string to_string(FillStatus status) {
  switch (status) {
    case FillStatus::Done:
      return "done";
    case FillStatus::NeverFits:
      return "never fits";
    case FillStatus::Blocked:
      return "blocked";
    case FillStatus::Unfinished:
      break;
  }
  return "unfinished";
}

FillResult fill_bubbles(const Timeline& timeline, const WorkList& work,
                        const FillOptions& options) {
  detail::fill::check_options(options);
  const detail::EventIndex index(timeline);
  detail::fill::check_work(work, timeline.stage_count);
  Filler filler(timeline, work, options, detail::fill::make_pieces(work, timeline, index));
  filler.run();
  return filler.result();
}

}  // namespace pe
