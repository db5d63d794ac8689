#include "pe/plan_layout.h"

#include <sstream>

#include "cost/cost_model.h"
#include "cost/evaluate.h"
#include "cost/layout.h"
#include "pe/error.h"
#include "pe/planner.h"

namespace pe {
namespace {

constexpr long long kMaxSimulatedPairs = 1LL << 26;  // stages x micro-batches (simulate)
// The fields a UsageError names.
constexpr const char* kStages = "PlanLayout::stages";
constexpr const char* kMicroBatches = "PlanLayout::micro_batches";
constexpr const char* kCopies = "PlanLayout::pipeline_replicas";

std::string stage_name(std::size_t index) { return "stage " + std::to_string(index); }

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

std::string gigabytes(Bytes bytes) {
  std::ostringstream out;
  out.precision(3);
  out << bytes / kGB << " GB";
  return out.str();
}

// When the model's cuts are not a chain, each stage's cut contains the previous one's.
void check_nested(const std::vector<StageLayout>& stages, const ModelProfile& model) {
  for (std::size_t i = 1; i < stages.size(); ++i) {
    const StageLayout& s = stages[i];
    if (!model.nested(s.first_state - 1, s.last_state))
      throw UsageError(kStages, std::string(kStages) + ": " + stage_name(i) + " " +
                                    std::to_string(s.first_state) + "-" +
                                    std::to_string(s.last_state) + ": the cut after state " +
                                    std::to_string(s.last_state) + " does not contain the cut " +
                                    "after state " + std::to_string(s.first_state - 1) +
                                    ", expected nested cuts");
  }
}

// Stages cover states 0..states-1 once, in order.
void check_coverage(const std::vector<StageLayout>& stages, std::size_t states) {
  if (stages.empty())
    throw UsageError(kStages, "PlanLayout::stages is empty, expected at least one stage");
  const std::string where = std::string(kStages) + ": ";
  std::size_t next = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const StageLayout& s = stages[i];
    const std::string range = std::to_string(s.first_state) + "-" + std::to_string(s.last_state);
    if (s.last_state < s.first_state)
      throw UsageError(kStages, where + stage_name(i) + " " + range + " ends before it starts");
    if (s.first_state != next)
      throw UsageError(kStages,
                       where + stage_name(i) + " " + range + " starts at state " +
                           std::to_string(s.first_state) + ", expected " + std::to_string(next) +
                           (s.first_state < next ? " (it overlaps the stage before)"
                                                 : " (states in between belong to no stage)"));
    if (s.last_state >= states)
      throw UsageError(kStages, where + stage_name(i) + " " + range + " ends past the model's " +
                                    "last state " + std::to_string(states - 1));
    next = s.last_state + 1;
  }
  if (next != states)
    throw UsageError(kStages, where + "the last stage ends at state " + std::to_string(next - 1) +
                                  ", expected the model's last state " +
                                  std::to_string(states - 1));
}

// Devices, copies and the micro-batch split; returns the micro-batch size.
int check_split(const PlanLayout& layout, int devices, int global_batch) {
  if (layout.pipeline_replicas < 1)
    throw UsageError(kCopies, "PlanLayout::pipeline_replicas must be at least 1");
  if (layout.micro_batches < 1)
    throw UsageError(kMicroBatches, "PlanLayout::micro_batches must be at least 1");
  long long per_copy = 0;
  for (const StageLayout& s : layout.stages) per_copy += s.width;
  if (per_copy * layout.pipeline_replicas > devices)
    throw UsageError(
        kStages, "PlanLayout::stages: needs " + std::to_string(per_copy) + " devices per copy x " +
                     std::to_string(layout.pipeline_replicas) +
                     " copies = " + std::to_string(per_copy * layout.pipeline_replicas) +
                     " devices, but the cluster has " + std::to_string(devices));
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

// Which stage needs the most memory beyond what a device has, and how much.
std::string memory_note(const Plan& plan) {
  // The stage furthest over its devices' memory.
  auto over = [](const PlanStage& s) { return s.peak_memory() - s.device_memory; };
  std::size_t worst = 0;
  for (std::size_t i = 1; i < plan.stages.size(); ++i)
    if (over(plan.stages[i]) > over(plan.stages[worst])) worst = i;
  const PlanStage& s = plan.stages[worst];
  const Bytes memory = s.device_memory;
  return stage_name(worst) + " needs " + gigabytes(s.peak_memory()) + " per device (" +
         gigabytes(s.weight_memory) + " weights and training state, " +
         gigabytes(s.activation_memory) + " activations" +
         (s.working_memory > 0 ? ", " + gigabytes(s.working_memory) + " working memory" : "") +
         "), a device has " + gigabytes(memory);
}

// A stage's tensor-parallel degree and recomputation are ones the model, the settings and
// where its devices sit allow.
void check_variant(const detail::CostModel& cost, const detail::Layout& layout, int offset,
                   const StageLayout& s, std::size_t index) {
  const std::string where = std::string(kStages) + ": " + stage_name(index) + ": ";
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

LayoutCost Planner::evaluate(const PlanLayout& layout, int global_batch) const {
  if (global_batch < 1) throw UsageError("global batch size must be at least 1");
  check_coverage(layout.stages, model_.size());
  check_nested(layout.stages, model_);
  const int devices = cluster_.device_count();
  const int micro_batch = check_split(layout, devices, global_batch);
  detail::PipelineSpec spec{layout.pipeline_replicas,
                            devices / layout.pipeline_replicas,
                            micro_batch,
                            layout.micro_batches,
                            layout.schedule,
                            {}};
  const detail::CostModel cost(model_, cluster_, settings_);
  const detail::Layout devices_of(cluster_, spec.replicas, spec.replica_width);
  int offset = 0;
  for (std::size_t i = 0; i < layout.stages.size(); ++i) {
    const StageLayout& s = layout.stages[i];
    const detail::StageVariant v{s.tensor_parallel, s.recompute};
    check_variant(cost, devices_of, offset, s, i);
    spec.stages.push_back({s.first_state, s.last_state, offset, s.width, v});
    offset += s.width;
  }
  detail::Evaluation ev = detail::evaluate(cost, spec, global_batch);
  LayoutCost result{std::move(ev.plan), ev.fits, ""};
  simulate_plan(result.plan);
  if (!result.fits) result.memory_note = memory_note(result.plan);
  return result;
}

}  // namespace pe
