#include "pe/plan_layout.h"

#include <algorithm>

#include "cost/cost_model.h"
#include "cost/evaluate.h"
#include "cost/layout.h"
#include "pe/error.h"
#include "pe/planner.h"
#include "report/format.h"
#include "search/machine_runs.h"

namespace pe {
namespace {

using detail::format::gigabytes;

constexpr long long kMaxSimulatedPairs = 1LL << 26;  // stages x micro-batches (simulate)
// The fields a UsageError names.
constexpr const char* kStages = "PlanLayout::stages";
constexpr const char* kMicroBatches = "PlanLayout::micro_batches";
constexpr const char* kCopies = "PlanLayout::pipeline_replicas";
constexpr const char* kFirstDevice = "PlanLayout::first_device";
constexpr const char* kCopyStride = "PlanLayout::copy_stride";

// "stage I", or with `groups` > 0 (an interleaved layout's chunks in pipeline order)
// "stage G chunk C" as the text writes it.
std::string stage_name(std::size_t index, std::size_t groups = 0) {
  if (groups == 0) return "stage " + std::to_string(index);
  return "stage " + std::to_string(index % groups) + " chunk " + std::to_string(index / groups);
}

// The device groups of an interleaved layout, 0 otherwise (for stage_name).
std::size_t chunk_groups(const PlanLayout& layout) {
  return layout.chunks > 1 ? layout.stages.size() / static_cast<std::size_t>(layout.chunks) : 0;
}

// A whole number without sign, leading '+' or trailing text.
bool parse_count(const std::string& text, unsigned long long& value) {
  if (text.empty() || text.size() > 18) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned long long>(c - '0');
  }
  return true;
}

StageLayout parse_stage(const std::string& text, std::size_t index) {
  const std::size_t dash = text.find('-'), colon = text.find(':');
  std::string tail = colon == std::string::npos ? "" : text.substr(colon + 1);
  const bool recompute = !tail.empty() && tail.back() == 'r';
  if (recompute) tail.pop_back();
  const std::size_t t = tail.find('t');
  unsigned long long first = 0, last = 0, width = 0, split = 1;
  if (dash == std::string::npos || colon == std::string::npos || colon < dash ||
      !parse_count(text.substr(0, dash), first) ||
      !parse_count(text.substr(dash + 1, colon - dash - 1), last) ||
      !parse_count(tail.substr(0, t), width) ||
      (t != std::string::npos && !parse_count(tail.substr(t + 1), split)))
    throw UsageError("parse_stage_layout",
                     "parse_stage_layout: " + stage_name(index) + " is '" + text +
                         "', expected FIRST-LAST:WIDTH (e.g. 0-20:15), optionally followed by tT "
                         "for T-way tensor parallelism and r for recomputation (0-20:8t4r)");
  if (width < 1 || width > (1u << 30))
    throw UsageError("parse_stage_layout", "parse_stage_layout: " + stage_name(index) + " '" +
                                               text + "' has width " + std::to_string(width) +
                                               ", expected 1 to 2^30 devices");
  if (split < 1 || width % split != 0)
    throw UsageError("parse_stage_layout", "parse_stage_layout: " + stage_name(index) + " '" +
                                               text + "' splits " + std::to_string(width) +
                                               " devices " + std::to_string(split) +
                                               " ways, expected a degree dividing the width");
  return {first, last, static_cast<int>(width), static_cast<int>(split), recompute};
}

// When the model's cuts are not a chain, each stage's cut contains the previous one's.
void check_nested(const std::vector<StageLayout>& stages, const ModelProfile& model,
                  std::size_t groups) {
  for (std::size_t i = 1; i < stages.size(); ++i) {
    const StageLayout& s = stages[i];
    if (!model.nested(s.first_state - 1, s.last_state))
      throw UsageError(kStages, std::string(kStages) + ": " + stage_name(i, groups) + " " +
                                    std::to_string(s.first_state) + "-" +
                                    std::to_string(s.last_state) + ": the cut after state " +
                                    std::to_string(s.last_state) + " does not contain the cut " +
                                    "after state " + std::to_string(s.first_state - 1) +
                                    ", expected nested cuts");
  }
}

// Stages cover states 0..states-1 once, in order.
void check_coverage(const std::vector<StageLayout>& stages, std::size_t states,
                    std::size_t groups) {
  if (stages.empty())
    throw UsageError(kStages, "PlanLayout::stages is empty, expected at least one stage");
  const std::string where = std::string(kStages) + ": ";
  std::size_t next = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const StageLayout& s = stages[i];
    const std::string range = std::to_string(s.first_state) + "-" + std::to_string(s.last_state);
    if (s.last_state < s.first_state)
      throw UsageError(kStages,
                       where + stage_name(i, groups) + " " + range + " ends before it starts");
    if (s.first_state != next)
      throw UsageError(kStages,
                       where + stage_name(i, groups) + " " + range + " starts at state " +
                           std::to_string(s.first_state) + ", expected " + std::to_string(next) +
                           (s.first_state < next ? " (it overlaps the stage before)"
                                                 : " (states in between belong to no stage)"));
    if (s.last_state >= states)
      throw UsageError(kStages, where + stage_name(i, groups) + " " + range +
                                    " ends past the model's " + "last state " +
                                    std::to_string(states - 1));
    next = s.last_state + 1;
  }
  if (next != states)
    throw UsageError(kStages, where + "the last stage ends at state " + std::to_string(next - 1) +
                                  ", expected the model's last state " +
                                  std::to_string(states - 1));
}

// Devices, copies and the micro-batch split on a cluster of `devices`, counted from
// layout.first_device round past the last device to device 0; returns the micro-batch size.
int check_split(const PlanLayout& layout, int devices, int global_batch) {
  if (layout.pipeline_replicas < 1)
    throw UsageError(kCopies, "PlanLayout::pipeline_replicas must be at least 1");
  if (layout.micro_batches < 1)
    throw UsageError(kMicroBatches, "PlanLayout::micro_batches must be at least 1");
  long long per_copy = 0;  // the device groups' widths
  const std::size_t groups = layout.stages.size() / static_cast<std::size_t>(layout.chunks);
  for (std::size_t g = 0; g < groups; ++g) per_copy += layout.stages[g].width;
  const long long needs = per_copy * layout.pipeline_replicas;
  const std::string needed = "PlanLayout::stages: needs " + std::to_string(per_copy) +
                             " devices per copy x " + std::to_string(layout.pipeline_replicas) +
                             " copies = " + std::to_string(needs) +
                             " devices, but the cluster has ";
  if (needs > devices) throw UsageError(kStages, needed + std::to_string(devices));
  const int after = devices - layout.first_device;  // from first_device to the last device
  if (layout.copy_stride == 0 && layout.pipeline_replicas > 1 && needs > after)
    throw UsageError(kCopyStride, std::string(kCopyStride) + " is 0: the " + std::to_string(after) +
                                      " devices from device " +
                                      std::to_string(layout.first_device) + " on over " +
                                      std::to_string(layout.pipeline_replicas) +
                                      " copies, but they need " + std::to_string(needs) +
                                      " (copies that go round past the last device to device "
                                      "0 need a stride of at least a copy's " +
                                      std::to_string(per_copy) + " devices)");
  if (layout.copy_stride != 0 &&
      (layout.copy_stride < per_copy ||
       static_cast<long long>(layout.copy_stride) * layout.pipeline_replicas > devices))
    throw UsageError(
        kCopyStride,
        std::string(kCopyStride) + " is " + std::to_string(layout.copy_stride) +
            ", expected at least a copy's " + std::to_string(per_copy) + " devices and at most " +
            std::to_string(devices / layout.pipeline_replicas) + " (" + std::to_string(devices) +
            " devices over " + std::to_string(layout.pipeline_replicas) + " copies)");
  if (global_batch % layout.pipeline_replicas != 0)
    throw UsageError(kCopies, "PlanLayout::pipeline_replicas: global batch " +
                                  std::to_string(global_batch) + " does not split into " +
                                  std::to_string(layout.pipeline_replicas) + " equal copies");
  const int share = global_batch / layout.pipeline_replicas;
  if (layout.micro_batches > share)
    throw UsageError(kMicroBatches,
                     "PlanLayout::micro_batches: " + std::to_string(layout.micro_batches) +
                         " micro-batches of a copy's " + std::to_string(share) +
                         " samples leave some empty");
  if (layout.stages.size() > 1 && share % layout.micro_batches != 0)
    throw UsageError(kMicroBatches,
                     "PlanLayout::micro_batches: a copy's " + std::to_string(share) +
                         " samples do not split into " + std::to_string(layout.micro_batches) +
                         " equal micro-batches (only a one-stage plan accumulates uneven ones)");
  if (static_cast<long long>(layout.stages.size()) * layout.micro_batches > kMaxSimulatedPairs)
    throw UsageError(kMicroBatches,
                     "PlanLayout::micro_batches: stages x micro-batches exceeds "
                     "2^26, too large to simulate");
  return (share + layout.micro_batches - 1) / layout.micro_batches;
}

// The schedule and the chunks agree; chunks of one group run alike; M suits the groups.
void check_chunks(const PlanLayout& layout) {
  const bool interleaved = layout.schedule == Schedule::Interleaved;
  const int chunks = layout.chunks;
  if (interleaved != (chunks > 1) || chunks < 1)
    throw UsageError(kStages, std::string(kStages) + ": " + std::to_string(chunks) +
                                  " chunk(s) per device group under the " +
                                  to_string(layout.schedule) +
                                  " schedule; the interleaved schedule needs 2 or more (each "
                                  "group lists its chunks' ranges joined by ','), the others 1");
  if (!interleaved) return;
  const std::size_t count = layout.stages.size();
  const std::size_t groups = count / static_cast<std::size_t>(chunks);
  if (count % static_cast<std::size_t>(chunks) != 0 || groups < 2)
    throw UsageError(kStages, std::string(kStages) + ": " + std::to_string(count) +
                                  " chunks do not make 2 or more device groups of " +
                                  std::to_string(chunks));
  for (std::size_t j = groups; j < count; ++j) {
    const StageLayout &a = layout.stages[j % groups], &b = layout.stages[j];
    if (a.width != b.width || a.tensor_parallel != b.tensor_parallel || a.recompute != b.recompute)
      throw UsageError(kStages, std::string(kStages) + ": " + stage_name(j, groups) +
                                    " differs from chunk 0 of its device group in width, "
                                    "tensor parallelism or recomputation");
  }
  if (layout.micro_batches % static_cast<int>(groups) != 0)
    throw UsageError(kMicroBatches, std::string(kMicroBatches) + ": " +
                                        std::to_string(layout.micro_batches) +
                                        " micro-batches; the interleaved schedule needs a "
                                        "multiple of the " +
                                        std::to_string(groups) + " device groups");
}

// The machine whose first device is `device` (where a layout's plan starts).
int first_machine(const Cluster& cluster, int device) {
  if (device >= 0 && device < cluster.device_count()) {
    const int machine = cluster.machine_of(device);
    if (cluster.first_device(machine) == device) return machine;
  }
  std::string starts;
  for (int m = 0; m < std::min(cluster.machine_count(), 8); ++m)
    starts += (m == 0 ? "" : ", ") + std::to_string(cluster.first_device(m));
  if (cluster.machine_count() > 8) starts += ", ...";
  throw UsageError(kFirstDevice, std::string(kFirstDevice) + " is " + std::to_string(device) +
                                     ", expected the first device of a machine (" + starts +
                                     "; the cluster has " + std::to_string(cluster.device_count()) +
                                     " devices)");
}

// Which stage needs the most memory beyond what a device has, and how much.
std::string memory_note(const Plan& plan) {
  // The stage furthest over its devices' memory.
  auto over = [](const PlanStage& s) { return s.peak_memory() - s.device_memory; };
  std::size_t worst = 0;
  for (std::size_t i = 1; i < plan.stages.size(); ++i)
    if (over(plan.stages[i]) > over(plan.stages[worst])) worst = i;
  const PlanStage& s = plan.stages[worst];
  const Bytes memory = s.device_memory;
  const std::size_t groups = plan.chunks > 1 ? static_cast<std::size_t>(plan.device_groups()) : 0;
  return stage_name(worst, groups) + " needs " + gigabytes(s.peak_memory()) + " per device (" +
         gigabytes(s.weight_memory) + " weights and training state, " +
         gigabytes(s.activation_memory) + " activations" +
         (s.working_memory > 0 ? ", " + gigabytes(s.working_memory) + " working memory" : "") +
         "), a device has " + gigabytes(memory);
}

// A stage's tensor-parallel degree and recomputation are ones the model, the settings and
// where its devices sit allow.
void check_variant(const detail::CostModel& cost, const detail::Layout& layout, int offset,
                   const StageLayout& s, std::size_t index, std::size_t groups) {
  const std::string where = std::string(kStages) + ": " + stage_name(index, groups) + ": ";
  const int t = s.tensor_parallel;
  if (t > 1 && cost.max_tensor_parallel() == 1)
    throw UsageError(kStages, where + "splits its operators " + std::to_string(t) +
                                  " ways, but the model cannot be split (or "
                                  "TrainingSettings::max_tensor_parallel is 1)");
  if (!cost.tensor_parallel_allowed(t))
    throw UsageError(kStages, where + "splits its operators " + std::to_string(t) +
                                  " ways, expected a degree up to " +
                                  std::to_string(cost.max_tensor_parallel()) +
                                  " that divides the model's heads");
  if (!layout.groups_compact(offset, s.width, t))
    throw UsageError(kStages, where + "a group of " + std::to_string(t) +
                                  " tensor-parallel devices spans two machines");
  if (s.recompute && !cost.recomputable())
    throw UsageError(kStages, where +
                                  "recomputes, but the model cannot (or "
                                  "TrainingSettings::recomputation is off)");
}

// A stage of a pipeline splits each micro-batch among its data-parallel replicas: each needs
// a sample (a one-stage plan accumulates, so any width runs).
void check_replicas(const PlanLayout& layout, int micro_batch, std::size_t groups) {
  if (layout.stages.size() < 2) return;
  for (std::size_t i = 0; i < layout.stages.size(); ++i) {
    const StageLayout& s = layout.stages[i];
    const int replicas = s.width / std::max(1, s.tensor_parallel);
    if (replicas <= micro_batch) continue;
    throw UsageError(kStages, std::string(kStages) + ": " + stage_name(i, groups) + ": " +
                                  std::to_string(replicas) +
                                  " data-parallel replicas, but a micro-batch has " +
                                  std::to_string(micro_batch) +
                                  " sample(s): each replica needs at least one (fewer "
                                  "micro-batches make them larger)");
  }
}

}  // namespace

std::vector<StageLayout> parse_stage_layout(const std::string& text) {
  std::vector<StageLayout> stages;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(';', start);
    stages.push_back(parse_stage(text.substr(start, end - start), stages.size()));
    if (end == std::string::npos) return stages;
    start = end + 1;
  }
}

PlanLayout parse_plan_layout(const std::string& text) {
  std::vector<std::vector<StageLayout>> groups;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(';', start);
    const std::string group = text.substr(start, end - start);
    const std::size_t colon = group.find(':');
    const std::string tail = colon == std::string::npos ? "" : group.substr(colon);
    std::vector<StageLayout> chunks;
    std::size_t from = 0;
    for (;;) {
      const std::size_t comma = group.find(',', from);
      const std::size_t until = comma == std::string::npos || comma > colon ? colon : comma;
      chunks.push_back(parse_stage(group.substr(from, until - from) + tail, groups.size()));
      if (until == colon) break;
      from = comma + 1;
    }
    if (!groups.empty() && chunks.size() != groups.front().size())
      throw UsageError("parse_stage_layout", "parse_stage_layout: " + stage_name(groups.size()) +
                                                 " '" + group + "' lists " +
                                                 std::to_string(chunks.size()) +
                                                 " chunk(s), expected as many as stage 0 (" +
                                                 std::to_string(groups.front().size()) + ")");
    groups.push_back(std::move(chunks));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  PlanLayout layout;
  layout.chunks = static_cast<int>(groups.front().size());
  if (layout.chunks > 1) layout.schedule = Schedule::Interleaved;
  for (std::size_t c = 0; c < groups.front().size(); ++c)
    for (const std::vector<StageLayout>& group : groups) layout.stages.push_back(group[c]);
  return layout;
}

LayoutCost Planner::evaluate(const PlanLayout& layout, int global_batch) const {
  if (global_batch < 1) throw UsageError("global batch size must be at least 1");
  check_chunks(layout);
  check_coverage(layout.stages, model_.size(), chunk_groups(layout));
  check_nested(layout.stages, model_, chunk_groups(layout));
  const int machine = first_machine(cluster_, layout.first_device);
  const Cluster cluster = detail::rotated(cluster_, machine);
  const int devices = cluster.device_count();
  const int micro_batch = check_split(layout, devices, global_batch);
  check_replicas(layout, micro_batch, chunk_groups(layout));
  // One copy may take every device; copies split those from first_device on by default.
  const int copy = layout.pipeline_replicas == 1
                       ? devices
                       : (devices - layout.first_device) / layout.pipeline_replicas;
  detail::PipelineSpec spec{layout.pipeline_replicas,
                            layout.copy_stride > 0 ? layout.copy_stride : copy,
                            micro_batch,
                            layout.micro_batches,
                            layout.schedule,
                            {},
                            layout.chunks};
  const detail::CostModel cost(model_, cluster, settings_);
  const detail::Layout devices_of(cluster, spec.replicas, spec.replica_width);
  const std::size_t groups = layout.stages.size() / static_cast<std::size_t>(layout.chunks);
  std::vector<int> offsets{0};  // of each device group
  for (std::size_t g = 0; g < groups; ++g)
    offsets.push_back(offsets.back() + layout.stages[g].width);
  for (std::size_t i = 0; i < layout.stages.size(); ++i) {
    const StageLayout& s = layout.stages[i];
    const detail::StageVariant v{s.tensor_parallel, s.recompute};
    const int offset = offsets[i % groups];
    check_variant(cost, devices_of, offset, s, i, chunk_groups(layout));
    spec.stages.push_back({s.first_state, s.last_state, offset, s.width, v});
  }
  detail::Evaluation ev = detail::evaluate(cost, spec, global_batch);
  LayoutCost result{std::move(ev.plan), ev.fits, ""};
  detail::move_to_machine(result.plan, cluster_, machine);
  simulate_plan(result.plan);
  if (!result.fits) result.memory_note = memory_note(result.plan);
  return result;
}

}  // namespace pe
