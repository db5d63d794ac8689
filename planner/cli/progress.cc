#include "progress.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace pe::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Seconds with 2 decimals below 10 s, 1 below 100 s, none above.
std::string seconds_text(double s) {
  const int decimals = s < 10 ? 2 : s < 100 ? 1 : 0;
  char text[48];
  std::snprintf(text, sizeof text, "%.*f s", decimals, s);
  return text;
}

}  // namespace

std::string progress_line(const SweepProgress& p) {
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = p.all ? kWidth * std::min(p.done, p.all) / p.all : 0;
  std::string line = "\r[" + std::string(filled, '#') + std::string(kWidth - filled, ' ') + "] " +
                     std::to_string(p.done) + "/" + std::to_string(p.all) + " batch sizes, " +
                     seconds_text(p.elapsed);
  if (p.slowest_gbs > 0)
    line += ", slowest GBS " + std::to_string(p.slowest_gbs) + " (" +
            seconds_text(p.slowest_seconds) + ")";
  return line + "\033[K";
}

namespace {

// Calls `tick` every `period` on a thread of its own until it is destroyed.
class Ticker {
 public:
  Ticker(std::chrono::milliseconds period, std::function<void()> tick)
      : thread_([this, period, tick = std::move(tick)] {
          std::unique_lock<std::mutex> lock(mutex_);
          while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
            lock.unlock();
            tick();
            lock.lock();
          }
        }) {}
  ~Ticker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace

std::vector<PointResult> sweep_with_progress(const Planner& planner,
                                             const std::vector<int>& batches,
                                             const std::atomic<bool>* cancel,
                                             std::ostream* progress) {
  std::vector<PointResult> results(batches.size());
  const Clock::time_point start = Clock::now();
  std::mutex mutex;  // guards `state`, `shown` and the stream
  SweepProgress state;
  state.all = batches.size();
  double shown = -1;  // when the line was last written
  auto show = [&] {   // with `mutex` held
    state.elapsed = seconds_since(start);
    shown = state.elapsed;
    *progress << progress_line(state) << std::flush;
  };
  {
    // The time moves on the line also while slow batch sizes are planned.
    std::optional<Ticker> ticker;
    if (progress)
      ticker.emplace(std::chrono::milliseconds(500), [&] {
        std::lock_guard<std::mutex> lock(mutex);
        show();
      });
    tbb::parallel_for(std::size_t{0}, batches.size(), [&](std::size_t i) {
      if (cancel && cancel->load()) return;
      const Clock::time_point began = Clock::now();
      results[i] = planner.plan(batches[i]);
      const double took = seconds_since(began);
      std::lock_guard<std::mutex> lock(mutex);
      ++state.done;
      if (took > state.slowest_seconds || state.slowest_gbs == 0) {
        state.slowest_gbs = batches[i];
        state.slowest_seconds = took;
      }
      if (progress && (seconds_since(start) - shown >= 0.1 || state.done == state.all)) show();
    });
  }
  if (progress && shown >= 0) *progress << "\r\033[K" << std::flush;
  planner.share_plans(results);
  return results;
}

}  // namespace pe::cli
