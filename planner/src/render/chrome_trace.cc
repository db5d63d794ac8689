// Chrome trace-event JSON of a timeline.
#include <algorithm>
#include <array>

#include "pe/render.h"
#include "svg.h"

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

std::string event_name(const Event& e) {
  const std::string m = std::to_string(e.micro_batch);
  switch (e.kind) {
    case EventKind::Forward: return "F" + m;
    case EventKind::Backward: return "B" + m;
    case EventKind::SendActivation: return "act " + m;
    case EventKind::SendGradient: return "grad " + m;
    case EventKind::AllReduce: return "all-reduce";
    case EventKind::Filler: break;
  }
  return e.label.empty() ? std::string("filler") : e.label;
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

// Appends items of a JSON array, separated by commas.
class JsonList {
 public:
  explicit JsonList(std::string& out) : out_(out) {}
  void add(const std::string& item) {
    if (!first_) out_ += ",\n";
    first_ = false;
    out_ += item;
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
    list.add(metadata("process_name", s, 0, "\"name\":" + render::json_string(stage_name(labels, s))));
    list.add(metadata("process_sort_index", s, 0, "\"sort_index\":" + std::to_string(s)));
    for (int t = 0; t < static_cast<int>(kThreads.size()); ++t)
      if (used[s] & (1u << t))
        list.add(metadata("thread_name", s, t, "\"name\":\"" + std::string(kThreads[t]) + "\""));
  }
}

std::string complete_event(const Event& e) {
  return "{\"name\":" + render::json_string(event_name(e)) + ",\"cat\":\"" + to_string(e.kind) +
         "\",\"ph\":\"X\",\"pid\":" + std::to_string(e.stage) + ",\"tid\":" +
         std::to_string(thread_of(e.kind)) + ",\"ts\":" + render::fixed(e.start * 1e6, 3) +
         ",\"dur\":" + render::fixed(e.duration() * 1e6, 3) +
         ",\"args\":{\"micro_batch\":" + std::to_string(e.micro_batch) + "}}";
}

}  // namespace

std::string chrome_trace_json(const Timeline& timeline, const TraceLabels& labels) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"title\":" +
                    render::json_string(labels.title) + "},\n\"traceEvents\":[\n";
  JsonList list(out);
  add_metadata(timeline, labels, list);
  for (const Event& e : timeline.events) list.add(complete_event(e));
  return out + "\n]}\n";
}

}  // namespace pe
