// Chrome trace-event JSON of a timeline.
#include "pe/render.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <nlohmann/json.hpp>

#include "report/format.h"

namespace pe {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<const char*, 5> kThreads = {"compute", "send-forward", "send-backward",
                                                 "all-reduce", "filler"};

int thread_of(EventKind kind) {
  switch (kind) {
    case EventKind::Forward:
    case EventKind::Backward:
      return 0;
    case EventKind::SendActivation:
      return 1;
    case EventKind::SendGradient:
      return 2;
    case EventKind::AllReduce:
      return 3;
    case EventKind::Filler:
      break;
  }
  return 4;
}

// The event's display name: F<m>, B<m>, act <m>, grad <m>, all-reduce or its label; an
// interleaved plan's events of chunk c > 0 end in "/c" (F3/1).
std::string event_name(const Event& e) {
  const std::string m =
      std::to_string(e.micro_batch) + (e.chunk > 0 ? "/" + std::to_string(e.chunk) : "");
  switch (e.kind) {
    case EventKind::Forward:
      return "F" + m;
    case EventKind::Backward:
      return "B" + m;
    case EventKind::SendActivation:
      return "act " + m;
    case EventKind::SendGradient:
      return "grad " + m;
    case EventKind::AllReduce:
      return "all-reduce" + (e.chunk > 0 ? "/" + std::to_string(e.chunk) : "");
    case EventKind::Filler:
      break;
  }
  return e.label.empty() ? "filler" : e.label;
}

Json metadata_event(const char* name, int pid, int tid, Json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

// Process and thread names of every stage; threads only where the stage has events.
std::vector<Json> metadata(const Timeline& timeline, const TraceLabels& labels) {
  std::vector<Json> out;
  std::vector<unsigned> used(static_cast<std::size_t>(std::max(timeline.stage_count, 0)), 0);
  for (const Event& e : timeline.events)
    if (e.stage >= 0 && e.stage < timeline.stage_count) used[e.stage] |= 1u << thread_of(e.kind);
  for (int s = 0; s < timeline.stage_count; ++s) {
    const std::string name = detail::format::stage_label(labels.stage_names, s);
    out.push_back(metadata_event("process_name", s, 0, {{"name", name}}));
    out.push_back(metadata_event("process_sort_index", s, 0, {{"sort_index", s}}));
    for (int t = 0; t < static_cast<int>(kThreads.size()); ++t)
      if (used[s] & (1u << t))
        out.push_back(metadata_event("thread_name", s, t, {{"name", kThreads[t]}}));
  }
  return out;
}

// `t` in whole nanoseconds; non-finite values give 0, huge ones are clamped.
long long nanoseconds(Seconds t) {
  const double ns = t * 1e9;
  if (!std::isfinite(ns)) return 0;
  return std::llround(std::clamp(ns, -1e18, 1e18));
}

// Microseconds with three decimals, as the trace's times are written.
std::string microseconds(double us) { return detail::format::fixed(us, 3); }

// Compact, as Chrome writes traces.
constexpr detail::format::JsonStyle kTraceStyle{",", ":", microseconds};

// One complete ("X") event. Start and end are rounded to the nanosecond and the duration is
// their difference, so events that touch in the timeline still touch, and never overlap,
// in the trace.
Json complete_event(const Event& e) {
  const long long start = nanoseconds(e.start);
  Json event;  // Member by member: much faster than from an initializer list.
  event["name"] = event_name(e);
  event["cat"] = to_string(e.kind);
  event["ph"] = "X";
  event["pid"] = e.stage;
  event["tid"] = thread_of(e.kind);
  event["ts"] = static_cast<double>(start) / 1e3;
  event["dur"] = static_cast<double>(nanoseconds(e.end) - start) / 1e3;
  event["args"]["micro_batch"] = e.micro_batch;
  if (e.chunk > 0) event["args"]["chunk"] = e.chunk;
  return event;
}

}  // namespace

std::string chrome_trace_json(const Timeline& timeline, const TraceLabels& labels) {
  const Json other = {{"title", labels.title}};
  std::string out =
      "{\"displayTimeUnit\":\"ms\",\"otherData\":" + detail::format::json_line(other, kTraceStyle) +
      ",\n\"traceEvents\":[\n";
  out.reserve(out.size() + timeline.events.size() * 130);
  bool first = true;
  auto add = [&](const Json& event) {
    out += first ? "" : ",\n";
    detail::format::append_json_line(out, event, kTraceStyle);
    first = false;
  };
  for (const Json& event : metadata(timeline, labels)) add(event);
  for (const Event& e : timeline.events) add(complete_event(e));
  return out + "\n]}\n";
}

}  // namespace pe
