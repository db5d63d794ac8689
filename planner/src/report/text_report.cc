// Table and plan text for people.
#include <sstream>

#include "pe/report.h"
#include "pe/timeline.h"
#include "report/format.h"

namespace pe {
namespace {

using format::fixed;
using format::left;
using format::right;

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

std::string header(const ReportContext& c) {
  std::ostringstream out;
  if (c.model)
    out << c.model->name << ": " << c.model->size() << " states, profile batch "
        << c.model->profile_batch_size;
  if (c.cluster) {
    out << " | " << c.cluster->device_count() << " GPUs on " << c.cluster->machine_count()
        << " machine" << (c.cluster->machine_count() == 1 ? "" : "s") << ", "
        << fixed(c.cluster->device_memory / kGB, 1) << " GB each";
  }
  return out.str() + "\n";
}

std::string row(const PointResult& p) {
  const Baselines& b = p.baselines;
  std::string line = right(std::to_string(p.global_batch), 6) + right(fixed(b.dp, 3), 9) +
                     right(fixed(b.dp_overlap, 3), 9) + right(fixed(b.dp_p3, 3), 9);
  const Plan* plan = p.best();
  if (!plan) return line + "   no plan fits\n";
  line += right(fixed(plan->speedup, 3), 9) + right(fixed(simulated_speedup(*plan, b), 3), 9);
  line += right(std::to_string(plan->micro_batches) + "x" +
                    std::to_string(plan->micro_batch_size), 10) +
          right(std::to_string(plan->pipeline_replicas), 4) + "  " +
          left(to_string(plan->schedule), 6) + stages_string(*plan) + "\n";
  return line;
}

}  // namespace

double simulated_speedup(const Plan& plan, const Baselines& baselines) {
  return plan.simulated_time > 0 ? baselines.single_device_time / plan.simulated_time : 0;
}

std::string plan_text(const Plan& plan, const ModelProfile& model) {
  std::ostringstream out;
  out << "GBS " << plan.global_batch << ": " << plan.pipeline_replicas << " pipeline cop"
      << (plan.pipeline_replicas == 1 ? "y" : "ies") << " x " << plan.stages.size()
      << " stage" << (plan.stages.size() == 1 ? "" : "s") << ", " << plan.micro_batches
      << " micro-batch" << (plan.micro_batches == 1 ? "" : "es") << " of "
      << plan.micro_batch_size << ", " << to_string(plan.schedule) << "\n";
  out << "  estimate " << ms(plan.iteration_time) << " = " << plan.micro_batches - 1
      << " x slot " << ms(plan.slot)
      << " + fill/drain " << ms(plan.fill_drain) << " + exposed all-reduce "
      << ms(plan.exposed_allreduce) << "; simulated " << ms(plan.simulated_time)
      << "; speedup " << fixed(plan.speedup, 3) << ", limited by " << to_string(plan.limiter)
      << "\n";
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const PlanStage& st = plan.stages[s];
    out << "  stage " << s << ": states " << st.first_state << "-" << st.last_state << " ("
        << model.states[st.first_state].name << " .. " << model.states[st.last_state].name
        << ") on " << st.width << " GPU" << (st.width == 1 ? "" : "s") << " per copy "
        << device_list(st.devices) << "\n    fwd " << ms(st.times.forward) << ", bwd "
        << ms(st.times.backward) << ", all-reduce " << ms(st.allreduce_total) << " ("
        << ms(st.times.allreduce) << " after its backward)"
        << (st.allreduce_intra_machine ? " (intra)" : " (inter)");
    if (s + 1 < plan.stages.size())
      out << ", send " << ms(st.times.send) << (st.cut_intra_machine ? " (intra)" : " (inter)");
    out << ", memory " << fixed(st.peak_memory() / kGB, 2) << " GB\n";
  }
  return out.str();
}

std::string sweep_table(const std::vector<PointResult>& points, const ReportContext& context) {
  std::string text = header(context);
  text += "   GBS       DP   DP+ovl    DP+P3   hybrid      sim     MxMB   R  sched stages\n";
  for (const PointResult& p : points) text += row(p);
  if (points.empty()) return text;
  const PointResult& last = points.back();
  text += "\n";
  if (const Plan* plan = last.best(); plan && context.model)
    text += "Best plan for " + plan_text(*plan, *context.model) +
            bubble_text(bubbles(simulate(plan->shape())));
  else if (!last.no_plan_reason.empty())
    text += "GBS " + std::to_string(last.global_batch) + ": " + last.no_plan_reason + "\n";
  return text;
}

}  // namespace pe
