// Table and plan text for people.
#include "pe/report.h"

#include <algorithm>
#include <sstream>

#include "pe/timeline.h"
#include "report/format.h"

namespace pe {
namespace {

using detail::format::counted;
using detail::format::fixed;
using detail::format::left;
using detail::format::right_columns;

std::string ms(Seconds s) { return fixed(s * 1e3, 3) + " ms"; }

std::string device_list(const std::vector<int>& ids) {
  std::string text;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(ids[i]) + (j > i ? "-" + std::to_string(ids[j]) : "");
    i = j + 1;
  }
  return "[" + text + "]";
}

// How a stage uses its GPUs, after its device list: " as R replicas x T-way tensor parallel"
// for a split stage, ", recomputed" and ", ZeRO-N" where they apply; "" for a plain stage
// (every stage of a graph.txt profile).
std::string variant_text(const PlanStage& st) {
  std::string text;
  if (st.tensor_parallel > 1)
    text += " as " + counted(st.data_parallel(), "replica") + " x " +
            std::to_string(st.tensor_parallel) + "-way tensor parallel";
  if (st.recompute) text += ", recomputed";
  if (st.zero_stage > 0) text += ", ZeRO-" + std::to_string(st.zero_stage);
  return text;
}

// "memory P GB" per device, broken down into weights, activations and working memory when
// the stage holds working memory.
std::string memory_text(const PlanStage& st) {
  std::string text = "memory " + fixed(st.peak_memory() / kGB, 2) + " GB";
  if (st.working_memory > 0)
    text += " (weights " + fixed(st.weight_memory / kGB, 2) + ", activations " +
            fixed(st.activation_memory / kGB, 2) + ", working " +
            fixed(st.working_memory / kGB, 2) + ")";
  return text;
}

// " T ms (P%)": a part of a stage's forward + backward time.
std::string part_text(Seconds part, Seconds whole) {
  return " " + ms(part) + " (" + fixed(whole > 0 ? 100 * part / whole : 0, 0) + "%)";
}

// What a stage's forward + backward per micro-batch is made of, for a stage that splits or
// recomputes: compute, the tensor-parallel all-reduces and the recomputed forward. "" when
// the stage has neither (PlanStage::tensor_parallel_time and recompute_time are 0).
std::string time_parts_text(const PlanStage& st) {
  if (st.tensor_parallel_time <= 0 && st.recompute_time <= 0) return "";
  const Seconds whole = st.times.forward + st.times.backward;
  const Seconds rest = std::max<Seconds>(0, whole - st.tensor_parallel_time - st.recompute_time);
  std::string text = "    fwd+bwd " + ms(whole) + " = " +
                     (st.zero_stage >= 3 ? "compute and weight gathers" : "compute") +
                     part_text(rest, whole);
  if (st.tensor_parallel_time > 0)
    text += " + tensor-parallel all-reduce" + part_text(st.tensor_parallel_time, whole);
  if (st.recompute_time > 0) text += " + recomputation" + part_text(st.recompute_time, whole);
  return text + "\n";
}

// For a model that knows its FLOPs (a transformer), what limits the plan: how its busiest
// stage spends the iteration (compute, tensor-parallel all-reduces, recomputation, idle:
// the pipeline's bubble and the all-reduce after it) and how full the fullest GPU is. ""
// otherwise, or for a plan not simulated.
std::string limits_text(const Plan& plan, const ModelProfile& model) {
  if (!(model.training_flops_per_sample > 0) || !plan.simulation || !(plan.iteration_time > 0))
    return "";
  const std::vector<StageBubbles>& idle = plan.simulation->bubbles.stages;
  const auto groups = static_cast<std::size_t>(plan.device_groups());
  if (idle.size() != groups || plan.stages.empty()) return "";
  std::size_t busiest = 0, fullest = 0;
  auto fill = [](const PlanStage& s) { return s.peak_memory() / s.device_memory; };
  for (std::size_t s = 1; s < groups; ++s) {
    if (idle[s].busy > idle[busiest].busy) busiest = s;
    if (fill(plan.stages[s]) > fill(plan.stages[fullest])) fullest = s;
  }
  // The busiest group's chunks (its one stage unless interleaved), per micro-batch.
  Seconds whole = 0, tensor = 0, recompute = 0;
  for (std::size_t j = busiest; j < plan.stages.size(); j += groups) {
    const PlanStage& st = plan.stages[j];
    whole += st.times.forward + st.times.backward;
    tensor += st.tensor_parallel_time;
    recompute += st.recompute_time;
  }
  const Seconds busy = idle[busiest].busy;
  const Seconds split = whole > 0 ? busy * tensor / whole : 0;
  const Seconds again = whole > 0 ? busy * recompute / whole : 0;
  auto share = [&](Seconds part) { return fixed(100 * part / plan.iteration_time, 1) + "%"; };
  return "  limits: stage " + std::to_string(busiest) + ", the busiest, spends the iteration on " +
         "compute " + share(busy - split - again) + ", tensor-parallel all-reduce " + share(split) +
         ", recomputation " + share(again) + ", idle " + share(plan.iteration_time - busy) +
         " (pipeline bubble, exposed all-reduce); the fullest GPUs (stage " +
         std::to_string(fullest) + ") hold " + fixed(100 * fill(plan.stages[fullest]), 1) +
         "% of their memory\n";
}

// What the states of a graph are, when it is not a chain.
std::string states_note(const ModelProfile& model) {
  if (model.cut_limit > 0)
    return " (prefixes of one order: the graph has over " + std::to_string(model.cut_limit) +
           " cuts)";
  return model.chain() ? "" : " (every cut of the graph)";
}

// "32 H100-80GB, 32 A100-80GB": the GPUs of each type in machine order, the model's own
// GPU (no type given) by its name or as "GB" of device memory.
std::string gpu_types(const Cluster& cluster, const ModelProfile* model) {
  std::vector<std::pair<std::string, int>> runs;
  for (int m = 0; m < cluster.machine_count(); ++m) {
    const GpuSpec& g = cluster.machine_gpu[static_cast<std::size_t>(m)];
    std::string name = g.peak_flops > 0 ? g.name : "";
    if (name.empty())
      name = model && !model->gpu.name.empty()
                 ? model->gpu.name + " (" + fixed(cluster.device_memory / kGB, 1) + " GB)"
                 : fixed(cluster.device_memory / kGB, 1) + " GB";
    if (runs.empty() || runs.back().first != name) runs.emplace_back(name, 0);
    runs.back().second += cluster.machine_gpus[static_cast<std::size_t>(m)];
  }
  std::string text;
  for (const auto& [name, gpus] : runs)
    text += (text.empty() ? "" : ", ") + std::to_string(gpus) + " " + name;
  return text;
}

std::string header(const ReportContext& c) {
  std::ostringstream out;
  if (c.model)
    out << c.model->name << ": " << counted(static_cast<long long>(c.model->size()), "state")
        << states_note(*c.model) << ", profile batch " << c.model->profile_batch_size;
  if (c.cluster) {
    out << " | " << counted(c.cluster->device_count(), "GPU") << " on "
        << counted(c.cluster->machine_count(), "machine") << ", ";
    if (c.cluster->machine_gpu.empty())
      out << fixed(c.cluster->device_memory / kGB, 1) << " GB each";
    else
      out << gpu_types(*c.cluster, c.model);
  }
  return out.str() + "\n";
}

// The mark of DP columns whose plain data parallelism does not fit (Baselines::fits).
constexpr const char* kNoFit = "n/f";

std::vector<std::string> cells(const PointResult& p) {
  const Baselines& b = p.baselines;
  std::vector<std::string> row{std::to_string(p.global_batch)};
  for (double speedup : {b.dp, b.dp_overlap, b.dp_p3})
    row.push_back(b.fits ? fixed(speedup, 3) : kNoFit);
  const Plan* plan = p.best();
  if (!plan) return row;
  row.push_back(fixed(plan->speedup, 3));
  row.push_back(fixed(estimate_speedup(*plan), 3));
  row.push_back(detail::format::gap_text(p.gap()));
  row.push_back(std::to_string(plan->micro_batches) + "x" + std::to_string(plan->micro_batch_size));
  row.push_back(std::to_string(plan->pipeline_replicas));
  return row;
}

// The plan's stages as --plan takes them, where it starts when that is not device 0 (a plan
// on the machines after the first: --plan-first-device), and how far apart its copies start
// when that is not what --plan-copies gives on the `devices` of the cluster (0: unknown) from
// there (a plan on the first machines: --plan-copy-stride).
std::string placed_stages(const Plan& plan, int devices) {
  const int first = plan.first_device(), stride = plan.copy_stride();
  std::string text = stages_string(plan);
  if (first > 0) text += " from device " + std::to_string(first);
  if (stride > 0 && devices > 0 && stride != (devices - first) / plan.pipeline_replicas)
    text += ", copies " + std::to_string(stride) + " devices apart";
  return text;
}

// What follows a row's right-aligned cells: the schedule and stages, or why none.
std::string tail(const PointResult& p, int devices) {
  const Plan* plan = p.best();
  if (!plan) return p.exact ? "   no plan fits" : "   no plan found (search effort)";
  // Interleaved: "1f1bxV", V chunks per device group.
  const std::string sched = plan->schedule == Schedule::Interleaved
                                ? "1f1bx" + std::to_string(plan->chunks) + " "
                                : to_string(plan->schedule);
  return "  " + left(sched, 6) + placed_stages(*plan, devices);
}

std::string rows_text(const std::vector<PointResult>& points, int devices) {
  std::vector<std::vector<std::string>> rows{
      {"GBS", "DP", "DP+ovl", "DP+P3", "hybrid", "est", "gap", "MxMB", "R"}};
  for (const PointResult& p : points) rows.push_back(cells(p));
  const std::vector<std::string> lines = right_columns(rows, {6, 9, 9, 9, 9, 9, 8, 10, 4});
  std::string text = lines[0] + "  sched stages\n";
  for (std::size_t i = 0; i < points.size(); ++i)
    text += lines[i + 1] + tail(points[i], devices) + "\n";
  return text;
}

std::string legend(const std::vector<PointResult>& points) {
  bool no_room = false, floor = false, inexact = false, gap = false;
  for (const PointResult& p : points) {
    no_room = no_room || (!p.baselines.fits && p.baselines.max_device_batch < 1);
    floor = floor || (!p.baselines.fits && p.baselines.max_device_batch >= 1);
    inexact = inexact || (!p.exact && !p.best());
    gap = gap || p.gap() > 0;
  }
  std::string text;
  if (no_room)
    text += std::string(kNoFit) +
            ": plain data parallelism does not fit: the weights and one sample need more "
            "than a GPU's memory\n";
  if (floor)
    text +=
        std::string(kNoFit) +
        ": plain data parallelism does not fit: its gradient-accumulation steps would "
        "go below the micro-batch floor (TrainingSettings::min_micro_batch) on all GPUs together\n";
  if (gap)
    text +=
        "gap: how much slower than the optimum the plan may be at most; the search proved a lower "
        "bound on every plan's simulated time (README, \"Exactness and gaps\"); more search effort "
        "(SearchOptions::effort) can narrow it and find faster plans\n";
  if (inexact)
    text +=
        "no plan found: the search stopped at its effort limit (SearchOptions::effort) before "
        "it could prove whether a plan fits\n";
  return text;
}

// The --top alternatives of one point, after its best plan.
std::string alternatives_text(const PointResult& p, int devices) {
  if (p.plans.size() < 2) return "";
  std::string text = "Next best plans for GBS " + std::to_string(p.global_batch) + ":\n";
  for (std::size_t i = 1; i < p.plans.size(); ++i) {
    const Plan& plan = p.plans[i];
    text += "  " + std::to_string(i + 1) + ". speedup " + fixed(plan.speedup, 3) + " (estimate " +
            fixed(estimate_speedup(plan), 3) + "), " + std::to_string(plan.micro_batches) + "x" +
            std::to_string(plan.micro_batch_size) + ", R " +
            std::to_string(plan.pipeline_replicas) + ", " + to_string(plan.schedule) + ", " +
            placed_stages(plan, devices) + "\n";
  }
  return text;
}

// The best plan found at the given plan's batch size, if any.
const Plan* best_at(const std::vector<PointResult>& points, int global_batch) {
  for (const PointResult& p : points)
    if (p.global_batch == global_batch) return p.best();
  return nullptr;
}

// How much faster the best plan found is than the given one, simulated and by estimate.
std::string comparison_text(const Plan& given, const Plan* best, int devices) {
  if (!best) return "  no plan found by the search to compare with\n";
  return "  the best plan found (" + placed_stages(*best, devices) + ", " +
         std::to_string(best->micro_batches) + "x" + std::to_string(best->micro_batch_size) +
         ", R " + std::to_string(best->pipeline_replicas) + ", " + to_string(best->schedule) +
         ") is " + fixed(given.iteration_time / best->iteration_time, 3) + "x as fast simulated, " +
         fixed(given.estimate / best->estimate, 3) + "x by estimate\n";
}

}  // namespace

double simulated_speedup(const Plan& plan, const Baselines& baselines) {
  return plan.simulated_time > 0 ? baselines.single_device_time / plan.simulated_time : 0;
}

double model_flops_per_gpu(const Plan& plan, const ModelProfile& model) {
  if (!(model.training_flops_per_sample > 0) || !(plan.iteration_time > 0) ||
      plan.device_count() < 1)
    return 0;
  return model.training_flops_per_sample * plan.global_batch / plan.iteration_time /
         plan.device_count();
}

double estimate_speedup(const Plan& plan) {
  return plan.estimate > 0 ? plan.one_device_time / plan.estimate : 0;
}

// "stage S", or for an interleaved plan "stage G chunk C" (stage j = C x groups + G).
std::string chunk_name(const Plan& plan, std::size_t s) {
  if (plan.chunks <= 1) return "stage " + std::to_string(s);
  const auto groups = static_cast<std::size_t>(plan.device_groups());
  return "stage " + std::to_string(s % groups) + " chunk " + std::to_string(s / groups);
}

namespace {

// plan_text, with `note` (lines) after its summary line.
std::string explained_plan(const Plan& plan, const ModelProfile& model, const std::string& note) {
  std::ostringstream out;
  out << "GBS " << plan.global_batch << ": "
      << counted(plan.pipeline_replicas, "pipeline copy", "pipeline copies") << " x "
      << counted(plan.device_groups(), "stage")
      << (plan.chunks > 1 ? " of " + std::to_string(plan.chunks) + " chunks each" : "") << ", "
      << counted(plan.micro_batches, "micro-batch", "micro-batches") << " of "
      << (plan.uneven_micro_batches() ? "at most " : "") << plan.micro_batch_size << ", "
      << (plan.chunks > 1 ? "interleaved 1F1B" : to_string(plan.schedule)) << "\n";
  out << "  simulated " << ms(plan.iteration_time) << ", speedup " << fixed(plan.speedup, 3)
      << "; its own lower bound " << ms(plan.lower_bound) << "; estimate " << ms(plan.estimate)
      << " = " << plan.micro_batches - 1 << " x slot " << ms(plan.slot) << " + fill/drain "
      << ms(plan.fill_drain) << " + exposed all-reduce " << ms(plan.exposed_allreduce)
      << ", limited by " << to_string(plan.limiter) << "\n"
      << note;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const PlanStage& st = plan.stages[s];
    out << "  " << chunk_name(plan, s) << ": states " << st.first_state << "-" << st.last_state
        << " (" << model.states[st.first_state].name << " .. " << model.states[st.last_state].name
        << ") on " << counted(st.width, (st.gpu.empty() ? "" : st.gpu + " ") + "GPU")
        << " per copy " << device_list(st.devices) << variant_text(st) << "\n    fwd "
        << ms(st.times.forward) << ", bwd " << ms(st.times.backward) << ", all-reduce "
        << ms(st.allreduce_total) << " (" << ms(st.times.allreduce) << " after its backward)"
        << (st.allreduce_intra_machine ? " (intra)" : " (inter)");
    if (s + 1 < plan.stages.size())
      out << ", send " << ms(st.times.send) << (st.cut_intra_machine ? " (intra)" : " (inter)");
    out << ", " << memory_text(st) << "\n" << time_parts_text(st);
  }
  out << limits_text(plan, model);
  return out.str();
}

// The hand-written plan of the context: its numbers, whether it fits, and the comparison.
std::string given_plan_text(const std::vector<PointResult>& points, const LayoutCost& given,
                            const ModelProfile& model, int devices) {
  const Plan& plan = given.plan;
  std::string text = "\nGiven plan for " + plan_text(plan, model);
  if (!given.fits) text += "  does not fit: " + given.memory_note + "\n";
  if (plan.simulation) text += bubble_text(plan.simulation->bubbles);
  return text + comparison_text(plan, best_at(points, plan.global_batch), devices);
}

// Where the search stopped short: the bound it proved on every plan, which the gap is
// measured against (a plan's own lower bound holds for that plan only).
std::string search_bound_text(const PointResult& point) {
  if (!(point.gap() > 0)) return "";  // exact, or no plan
  return "  the search proved no plan faster than " + ms(point.lower_bound) + ": gap " +
         detail::format::gap_text(point.gap()) + "\n";
}

}  // namespace

std::string plan_text(const Plan& plan, const ModelProfile& model) {
  return explained_plan(plan, model, "");
}

std::string sweep_table(const std::vector<PointResult>& points, const ReportContext& context,
                        std::optional<int> explained_batch) {
  const int devices = context.cluster ? context.cluster->device_count() : 0;
  std::string text = header(context);
  text += rows_text(points, devices) + legend(points);
  if (points.empty()) return text;
  auto explained = std::find_if(points.begin(), points.end(), [&](const PointResult& p) {
    return explained_batch && p.global_batch == *explained_batch;
  });
  const PointResult& shown = explained == points.end() ? points.back() : *explained;
  text += "\n";
  if (const Plan* plan = shown.best(); plan && context.model)
    text += "Best plan for " + explained_plan(*plan, *context.model, search_bound_text(shown)) +
            (plan->simulation ? bubble_text(plan->simulation->bubbles) : "") +
            alternatives_text(shown, devices);
  for (const PointResult& point : points)
    if (!point.best() && !point.no_plan_reason.empty())
      text += "GBS " + std::to_string(point.global_batch) + ": " + point.no_plan_reason + "\n";
  if (context.given_plan && context.model)
    text += given_plan_text(points, *context.given_plan, *context.model, devices);
  return text;
}

}  // namespace pe
