#include "fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "pe/error.h"

namespace pe::fuzz {

std::uint8_t ByteReader::byte() { return offset_ < size_ ? data_[offset_++] : 0; }

std::string ByteReader::rest() {
  const std::size_t start = offset_ < size_ ? offset_ : size_;
  offset_ = size_;
  return std::string(reinterpret_cast<const char*>(data_) + start, size_ - start);
}

std::vector<std::string> vocabulary_args(ByteReader& in,
                                         const std::vector<FlagVocabulary>& vocabulary,
                                         std::size_t max_pairs) {
  std::vector<std::string> args;
  for (std::size_t pair = 0; pair < max_pairs && !in.empty(); ++pair) {
    const std::uint8_t pick = in.byte();
    const FlagVocabulary& entry = vocabulary[(pick & 0x7f) % vocabulary.size()];
    if (entry.values.empty()) {
      args.push_back(entry.flag);
      continue;
    }
    const std::string& value = entry.values[in.byte() % entry.values.size()];
    if (entry.flag.empty()) {
      args.push_back(value);
    } else if (pick & 0x80) {
      args.push_back(entry.flag + "=" + value);
    } else {
      args.push_back(entry.flag);
      args.push_back(value);
    }
  }
  return args;
}

std::vector<std::string> split_args(const std::string& text) {
  std::vector<std::string> args(1);
  for (char c : text) {
    if (c == '\0')
      args.emplace_back();
    else
      args.back() += c;
  }
  return args;
}

std::string source_path(const std::string& relative) {
  return std::string(PE_FUZZ_SOURCE_DIR) + "/" + relative;
}

namespace {

std::string make_scratch_dir() {
  std::string pattern = std::filesystem::temp_directory_path().string() + "/pe-fuzz-XXXXXX";
  if (!mkdtemp(pattern.data())) require(false, "cannot create a scratch folder");
  return pattern;
}

void remove_scratch_dir() {
  std::error_code ignored;
  std::filesystem::remove_all(scratch_dir(), ignored);
}

}  // namespace

const std::string& scratch_dir() {
  // Never destroyed, so that the exit handler removing the folder can still read it.
  static const std::string* const dir = [] {
    const std::string* made = new std::string(make_scratch_dir());
    std::atexit(remove_scratch_dir);
    return made;
  }();
  return *dir;
}

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz contract violated: %s\n", what);
  std::abort();
}

namespace {

void check_plan(const Plan& plan, const ModelProfile& model, const Cluster& cluster) {
  require(!plan.stages.empty(), "a plan has no stages");
  require(plan.stages.front().first_state == 0, "the first stage does not start at state 0");
  require(plan.stages.back().last_state + 1 == model.size(), "the last stage misses states");
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const PlanStage& stage = plan.stages[s];
    require(stage.first_state <= stage.last_state, "a stage is empty");
    require(s == 0 || plan.stages[s - 1].last_state + 1 == stage.first_state,
            "stages are not contiguous");
    require(stage.width >= 1, "a stage has no devices");
  }
  require(plan.device_count() <= cluster.device_count(), "a plan uses more devices than exist");
  require(plan.micro_batches >= 1 && plan.micro_batch_size >= 1, "empty micro-batches");
}

}  // namespace

void check_point(const PointResult& point, const ModelProfile& model, const Cluster& cluster) {
  require(point.plans.empty() != point.no_plan_reason.empty(),
          "a point must have plans or a reason why none fits, not both");
  for (const Plan& plan : point.plans) check_plan(plan, model, cluster);
}

void check_schedule(const EdgeSchedule& schedule, const EdgeModel& model,
                    const EdgeCluster& cluster) {
  if (schedule.empty()) {
    require(!schedule.infeasible_reason.empty(), "an empty schedule without a reason");
    return;
  }
  std::set<std::size_t> hosts;
  std::size_t next = 1;
  for (const EdgeStage& stage : schedule.stages) {
    require(stage.host < cluster.hosts.size(), "a stage names a host that does not exist");
    require(hosts.insert(stage.host).second, "a host runs two stages");
    require(stage.first_layer == next && stage.last_layer >= next, "layers are not contiguous");
    next = stage.last_layer + 1;
  }
  require(next == model.layers() + 1, "the schedule misses layers");
}

void plan_and_check(const ModelProfile& model, const Cluster& cluster, int global_batch) {
  try {
    const Planner planner(model, cluster);
    check_point(planner.plan(global_batch), planner.model(), planner.cluster());
  } catch (const InputError&) {
  } catch (const UsageError&) {
  }
}

void schedule_and_check(const EdgeModel& model, const EdgeCluster& cluster) {
  try {
    // A small table limit keeps every input fast and also exercises the restricted pool.
    EdgeSettings settings;
    settings.search_memory_limit = std::size_t{1} << 20;
    check_schedule(schedule_pipeline(model, cluster, settings), model, cluster);
  } catch (const UsageError&) {
  } catch (const SearchLimitError&) {
  }
}

}  // namespace pe::fuzz
