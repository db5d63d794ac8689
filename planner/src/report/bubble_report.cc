#include "pe/report.h"
#include "report/format.h"

namespace pe {
namespace {

using detail::format::counted;
using detail::format::fixed;

std::string in_ms(Seconds s) { return fixed(s * 1e3, 3); }

}  // namespace

std::string bubble_text(const BubbleReport& r) {
  std::vector<std::vector<std::string>> rows{
      {"stage", "busy", "idle", "fraction", "warm-up", "transfer", "waiting", "drain"}};
  for (const StageBubbles& s : r.stages)
    rows.push_back({std::to_string(s.stage), in_ms(s.busy), in_ms(s.idle),
                    fixed(s.bubble_fraction, 3), in_ms(s.warmup), in_ms(s.wait_transfer),
                    in_ms(s.wait_stage), in_ms(s.drain)});
  std::string text = "  bubbles (ms of a " + in_ms(r.makespan) + " ms iteration):\n";
  for (const std::string& line : detail::format::right_columns(rows, {9, 9, 9, 10, 10, 10, 9, 9}))
    text += line + "\n";
  return text;
}

std::string fill_text(const FillResult& r) {
  std::string text =
      "bubble filling: " + std::string(r.complete ? "all work placed" : "not all work fits") +
      " in " + counted(r.iterations, "iteration") + "\n";
  for (const ItemFill& item : r.items)
    text +=
        "  " + item.name + ": " + to_string(item.status) + ", " + std::to_string(item.placed) +
        "/" + std::to_string(item.pieces) + " pieces" +
        (item.iteration >= 0 ? ", done in iteration " + std::to_string(item.iteration + 1) : "") +
        "\n";
  for (const StageFill& s : r.stages)
    text += "  stage " + std::to_string(s.stage) + ": utilization " +
            fixed(s.utilization_before, 3) + " -> " + fixed(s.utilization_first, 3) +
            " (first iteration), mean " + fixed(s.utilization_mean, 3) + "\n";
  return text;
}

}  // namespace pe
