// Chrome trace-event JSON of a timeline.
#include "pe/render.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "render/svg.h"

namespace pe {
namespace {

constexpr std::array<const char*, 5> kThreads = {"compute", "send-forward", "send-backward",
                                                 "all-reduce", "filler"};

int thread_of(EventKind kind) {
  switch (kind) {
    case EventKind::Forward:
    case EventKind::Backward: return 0;
    case EventKind::SendActivation: return 1;
    case EventKind::SendGradient: return 2;
    case EventKind::AllReduce: return 3;
    case EventKind::Filler: break;
  }
  return 4;
}

// Appends the event's display name: F<m>, B<m>, act <m>, grad <m>, all-reduce or label.
void append_name(const Event& e, std::string& out) {
  switch (e.kind) {
    case EventKind::Forward: out += 'F'; break;
    case EventKind::Backward: out += 'B'; break;
    case EventKind::SendActivation: out += "act "; break;
    case EventKind::SendGradient: out += "grad "; break;
    case EventKind::AllReduce: out += "all-reduce"; return;
    case EventKind::Filler:
      out += detail::render::json_string(e.label.empty() ? std::string("filler") : e.label);
      return;
  }
  detail::render::append_int(out, e.micro_batch);
}

std::string stage_name(const TraceLabels& labels, int stage) {
  const auto index = static_cast<std::size_t>(stage);
  if (index < labels.stage_names.size() && !labels.stage_names[index].empty())
    return labels.stage_names[index];
  return "stage " + std::to_string(stage);
}

std::string metadata(const char* name, int pid, int tid, const std::string& args) {
  return "{\"name\":\"" + std::string(name) + "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":{" + args + "}}";
}

// Writes the commas between the items of a JSON array.
class JsonList {
 public:
  explicit JsonList(std::string& out) : out_(out) {}
  /// Starts the next item; returns the string to append it to.
  std::string& next() {
    if (!first_) out_ += ",\n";
    first_ = false;
    return out_;
  }

 private:
  std::string& out_;
  bool first_ = true;
};

// Process and thread names of every stage; threads only where the stage has events.
void add_metadata(const Timeline& timeline, const TraceLabels& labels, JsonList& list) {
  std::vector<unsigned> used(static_cast<std::size_t>(std::max(timeline.stage_count, 0)), 0);
  for (const Event& e : timeline.events)
    if (e.stage >= 0 && e.stage < timeline.stage_count) used[e.stage] |= 1u << thread_of(e.kind);
  for (int s = 0; s < timeline.stage_count; ++s) {
    list.next() += metadata("process_name", s, 0, "\"name\":" + detail::render::json_string(stage_name(labels, s)));
    list.next() += metadata("process_sort_index", s, 0, "\"sort_index\":" + std::to_string(s));
    for (int t = 0; t < static_cast<int>(kThreads.size()); ++t)
      if (used[s] & (1u << t))
        list.next() += metadata("thread_name", s, t, "\"name\":\"" + std::string(kThreads[t]) + "\"");
  }
}

// `t` in whole nanoseconds; non-finite values give 0, huge ones are clamped.
long long nanoseconds(Seconds t) {
  const double ns = t * 1e9;
  if (!std::isfinite(ns)) return 0;
  return std::llround(std::clamp(ns, -1e18, 1e18));
}

// Appends `ns` as microseconds with three decimals ("-1.250" for -1250).
void append_microseconds(std::string& out, long long ns) {
  if (ns < 0) out += '-';
  const long long magnitude = ns < 0 ? -ns : ns;
  detail::render::append_int(out, magnitude / 1000);
  const auto fraction = static_cast<int>(magnitude % 1000);
  out += '.';
  out += static_cast<char>('0' + fraction / 100);
  out += static_cast<char>('0' + fraction / 10 % 10);
  out += static_cast<char>('0' + fraction % 10);
}

// Appends one complete ("X") event; written piece by piece, as traces can be large. Start
// and end are rounded to the nanosecond and the duration is their difference, so events
// that touch in the timeline still touch, and never overlap, in the trace.
void append_event(const Event& e, std::string& out) {
  const bool filler = e.kind == EventKind::Filler;
  out += filler ? "{\"name\":" : "{\"name\":\"";
  append_name(e, out);
  out += filler ? ",\"cat\":\"" : "\",\"cat\":\"";
  out += to_string(e.kind);
  out += "\",\"ph\":\"X\",\"pid\":";
  detail::render::append_int(out, e.stage);
  out += ",\"tid\":";
  detail::render::append_int(out, thread_of(e.kind));
  const long long start = nanoseconds(e.start);
  out += ",\"ts\":";
  append_microseconds(out, start);
  out += ",\"dur\":";
  append_microseconds(out, nanoseconds(e.end) - start);
  out += ",\"args\":{\"micro_batch\":";
  detail::render::append_int(out, e.micro_batch);
  out += "}}";
}

}  // namespace

std::string chrome_trace_json(const Timeline& timeline, const TraceLabels& labels) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"title\":" +
                    detail::render::json_string(labels.title) + "},\n\"traceEvents\":[\n";
  JsonList list(out);
  add_metadata(timeline, labels, list);
  out.reserve(out.size() + timeline.events.size() * 130);
  for (const Event& e : timeline.events) append_event(e, list.next());
  out += "\n]}\n";
  return out;
}

}  // namespace pe
