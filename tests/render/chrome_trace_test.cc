#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include <nlohmann/json.hpp>

#include "pe/render.h"

namespace pe {
namespace {

using Json = nlohmann::json;

Timeline sample_timeline() {
  PipelineShape shape;
  shape.micro_batches = 3;
  shape.stages = {
      {0.004, 0.008, 0.001, 0.002}, {0.005, 0.007, 0.0015, 0.001}, {0.003, 0.009, 0, 0.003}};
  Timeline t = simulate(shape);
  t.events.push_back({1, EventKind::Filler, -1, 0.0, 0.002, "inverse \"A\"\n"});
  return t;
}

std::vector<const Json*> complete_events(const Json& trace) {
  std::vector<const Json*> out;
  for (const Json& e : trace.at("traceEvents"))
    if (e.at("ph") == "X") out.push_back(&e);
  return out;
}

// Every timeline event appears once, on its stage's process, with the same kind,
// micro-batch, start and duration (microseconds, printed to the nanosecond).
TEST(ChromeTrace, EventsMatchTheTimelineOneToOne) {
  const Timeline t = sample_timeline();
  const Json trace = Json::parse(chrome_trace_json(t, {"demo", {}}));
  const auto events = complete_events(trace);
  ASSERT_EQ(events.size(), t.events.size());
  std::map<std::tuple<int, std::string, int>, const Json*> by_key;
  for (const Json* e : events) {
    auto key = std::make_tuple(e->at("pid").get<int>(), e->at("cat").get<std::string>(),
                               e->at("args").at("micro_batch").get<int>());
    EXPECT_TRUE(by_key.emplace(key, e).second) << "duplicate event";
  }
  for (const Event& e : t.events) {
    auto it = by_key.find(std::make_tuple(e.stage, to_string(e.kind), e.micro_batch));
    ASSERT_NE(it, by_key.end()) << to_string(e.kind) << " " << e.stage << "/" << e.micro_batch;
    EXPECT_NEAR(it->second->at("ts").get<double>(), e.start * 1e6, 5e-4);
    EXPECT_NEAR(it->second->at("dur").get<double>(), e.duration() * 1e6, 1e-3);
  }
}

TEST(ChromeTrace, NamesProcessesThreadsAndEvents) {
  const Timeline t = sample_timeline();
  const Json trace =
      Json::parse(chrome_trace_json(t, {"plan \"x\"", {"stage 0 (states 0-20, 8 GPUs)", ""}}));
  EXPECT_EQ(trace.at("otherData").at("title"), "plan \"x\"");
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  for (const Json& e : trace.at("traceEvents")) {
    const int pid = e.at("pid").get<int>(), tid = e.at("tid").get<int>();
    const std::string name = e.at("args").value("name", "");
    if (e.at("name") == "process_name") processes[pid] = name;
    if (e.at("name") == "thread_name") threads[{pid, tid}] = name;
  }
  EXPECT_EQ(processes[0], "stage 0 (states 0-20, 8 GPUs)");
  EXPECT_EQ(processes[1], "stage 1");  // empty label falls back
  EXPECT_EQ(processes[2], "stage 2");
  EXPECT_EQ(threads[std::make_pair(0, 0)], "compute");
  EXPECT_EQ(threads[std::make_pair(0, 1)], "send-forward");
  EXPECT_EQ(threads[std::make_pair(1, 2)], "send-backward");
  EXPECT_EQ(threads[std::make_pair(2, 3)], "all-reduce");
  EXPECT_EQ(threads[std::make_pair(1, 4)], "filler");
  EXPECT_EQ(threads.count(std::make_pair(2, 1)), 0u);  // the last stage sends no activations
  std::map<std::string, int> names;
  for (const Json* e : complete_events(trace)) ++names[e->at("name").get<std::string>()];
  EXPECT_EQ(names["F0"], 3);
  EXPECT_EQ(names["grad 2"], 2);
  EXPECT_EQ(names["all-reduce"], 3);
  EXPECT_EQ(names["inverse \"A\"\n"], 1);  // escaped and read back intact
}

// Plans with times that are not whole nanoseconds, as real profiles give.
std::vector<Timeline> awkward_timelines() {
  std::mt19937 random(20240611);
  std::uniform_real_distribution<double> time(1e-4, 3e-2);
  std::vector<Timeline> out;
  for (int plan = 0; plan < 6; ++plan) {
    PipelineShape shape;
    shape.micro_batches = 2 + plan;
    shape.schedule = plan % 2 == 0 ? Schedule::OneFOneB : Schedule::GPipe;
    for (int s = 0; s < 2 + plan % 3; ++s)
      shape.stages.push_back({time(random), time(random), time(random) / 4, time(random)});
    out.push_back(simulate(shape));
  }
  return out;
}

// Whole nanoseconds of a trace time in microseconds with three decimals.
long long nanoseconds(const Json& value) { return std::llround(value.get<double>() * 1000); }

// Start and end (ns) of each complete event, by (pid, tid), in trace order.
std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> spans_by_thread(
    const Json& trace) {
  std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> spans;
  for (const Json* e : complete_events(trace)) {
    const long long start = nanoseconds(e->at("ts"));
    spans[{e->at("pid").get<int>(), e->at("tid").get<int>()}].emplace_back(
        start, start + nanoseconds(e->at("dur")));
  }
  return spans;
}

// The simulator's events on one resource touch but never overlap; rounding start and
// duration separately used to make neighbours overlap by a nanosecond.
TEST(ChromeTrace, EventsOnAThreadNeverOverlapAfterRounding) {
  int touching = 0;
  for (const Timeline& t : awkward_timelines()) {
    const Json trace = Json::parse(chrome_trace_json(t, {"plan", {}}));
    for (auto& [thread, spans] : spans_by_thread(trace)) {
      std::sort(spans.begin(), spans.end());
      for (std::size_t k = 1; k < spans.size(); ++k) {
        EXPECT_LE(spans[k - 1].second, spans[k].first)
            << "pid " << thread.first << " tid " << thread.second << " event " << k;
        touching += spans[k - 1].second == spans[k].first;
      }
    }
  }
  EXPECT_GT(touching, 10);  // back-to-back events are there to be checked
}

TEST(ChromeTrace, EmptyTimelineIsValidJson) {
  const Json trace = Json::parse(chrome_trace_json(Timeline{}, {}));
  EXPECT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_TRUE(trace.at("traceEvents").empty());
}

}  // namespace
}  // namespace pe
