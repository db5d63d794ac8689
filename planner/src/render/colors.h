// Colours shared by the charts.
#pragma once

#include "pe/timeline.h"

namespace pe::detail::render {

/// Fill colour of an event kind in Gantt charts.
inline const char* kind_color(EventKind kind) {
  switch (kind) {
    case EventKind::Forward:
      return "#4e79a7";
    case EventKind::Backward:
      return "#59a14f";
    case EventKind::SendActivation:
      return "#76b7b2";
    case EventKind::SendGradient:
      return "#edc948";
    case EventKind::AllReduce:
      return "#b07aa1";
    case EventKind::Filler:
      break;
  }
  return "#f28e2b";
}

/// Line colour of the i-th curve of a plot (cycles through ten).
inline const char* series_color(std::size_t index) {
  static const char* palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#79706e"};
  return palette[index % 10];
}

}  // namespace pe::detail::render
