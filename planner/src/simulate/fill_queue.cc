#include "simulate/fill_queue.h"

namespace pe::detail::fill {
namespace {

// Whether `b` may share a run with `a`, the piece just before it.
bool continues_run(const Piece& a, const Piece& b) {
  return a.item == b.item && a.length == b.length && a.ready <= b.ready;
}

}  // namespace

PieceQueue::PieceQueue(std::vector<int> ids, const std::vector<Piece>& pieces)
    : ids_(std::move(ids)),
      run_end_(ids_.size()),
      next_(ids_.size() + 1),
      pending_(static_cast<int>(ids_.size())) {
  for (int k = end(); k-- > 0;) {
    const bool last = k + 1 == end() || !continues_run(pieces[ids_[k]], pieces[ids_[k + 1]]);
    run_end_[k] = last ? k + 1 : run_end_[k + 1];
  }
  for (int k = 0; k <= end(); ++k) next_[k] = k;
}

// Follows the forest to a pending position (a root), halving the path on the way.
int PieceQueue::pending_from(int position) {
  while (next_[position] != position) {
    next_[position] = next_[next_[position]];
    position = next_[position];
  }
  return position;
}

void PieceQueue::remove(int position) {
  next_[position] = position + 1;
  --pending_;
}

}  // namespace pe::detail::fill
