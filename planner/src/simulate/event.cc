#include "pe/timeline.h"

#include <tuple>

namespace pe {

std::string to_string(EventKind kind) {
  switch (kind) {
    case EventKind::Forward:
      return "forward";
    case EventKind::Backward:
      return "backward";
    case EventKind::SendActivation:
      return "send-activation";
    case EventKind::SendGradient:
      return "send-gradient";
    case EventKind::AllReduce:
      return "allreduce";
    case EventKind::Filler:
      return "filler";
  }
  return "forward";
}

bool uses_compute(EventKind kind) {
  return kind == EventKind::Forward || kind == EventKind::Backward || kind == EventKind::Filler;
}

bool event_less(const Event& a, const Event& b) {
  return std::tie(a.stage, a.start, a.kind, a.micro_batch, a.label, a.chunk) <
         std::tie(b.stage, b.start, b.kind, b.micro_batch, b.label, b.chunk);
}

}  // namespace pe
