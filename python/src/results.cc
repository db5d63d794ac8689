// What the planner answers: read-only Python views of PointResult, Plan, PlanStage,
// Baselines, the bubbles and LayoutCost. Times are seconds and sizes bytes, as in C++;
// schedules and limiters are the strings pe-plan prints ("1f1b", "compute").
#include <pybind11/stl.h>

#include <optional>

#include "bindings.h"
#include "pe/baselines.h"
#include "pe/bubbles.h"
#include "pe/plan.h"
#include "pe/plan_layout.h"

namespace py = pybind11;

namespace pe::python {
namespace {

std::optional<BubbleReport> plan_bubbles(const Plan& p) {
  if (!p.simulation) return std::nullopt;
  return p.simulation->bubbles;
}

void bind_bubbles(py::module_& m) {
  py::class_<StageBubbles>(m, "StageBubbles", "Busy and idle time of one stage (seconds)")
      .def_readonly("stage", &StageBubbles::stage)
      .def_readonly("busy", &StageBubbles::busy)
      .def_readonly("idle", &StageBubbles::idle)
      .def_readonly("bubble_fraction", &StageBubbles::bubble_fraction)
      .def_readonly("warmup", &StageBubbles::warmup)
      .def_readonly("wait_transfer", &StageBubbles::wait_transfer)
      .def_readonly("wait_stage", &StageBubbles::wait_stage)
      .def_readonly("drain", &StageBubbles::drain)
      .def_readonly("allreduce", &StageBubbles::allreduce)
      .def_readonly("filler", &StageBubbles::filler);
  py::class_<BubbleReport>(m, "BubbleReport", "Where the stages of a simulated plan sit idle")
      .def_readonly("makespan", &BubbleReport::makespan)
      .def_readonly("stages", &BubbleReport::stages)
      .def_readonly("mean_bubble_fraction", &BubbleReport::mean_bubble_fraction);
}

void bind_plan(py::module_& m) {
  py::class_<PlanStage>(m, "PlanStage", "States FIRST..LAST on `width` devices per copy")
      .def_readonly("first_state", &PlanStage::first_state)
      .def_readonly("last_state", &PlanStage::last_state)
      .def_readonly("width", &PlanStage::width)
      .def_readonly("tensor_parallel", &PlanStage::tensor_parallel)
      .def_property_readonly("data_parallel", &PlanStage::data_parallel)
      .def_readonly("recompute", &PlanStage::recompute)
      .def_readonly("zero_stage", &PlanStage::zero_stage)
      .def_readonly("devices", &PlanStage::devices)
      .def_property_readonly("forward", [](const PlanStage& s) { return s.times.forward; })
      .def_property_readonly("backward", [](const PlanStage& s) { return s.times.backward; })
      .def_property_readonly("send", [](const PlanStage& s) { return s.times.send; })
      .def_readonly("tensor_parallel_time", &PlanStage::tensor_parallel_time)
      .def_readonly("recompute_time", &PlanStage::recompute_time)
      .def_property_readonly("exposed_allreduce",
                             [](const PlanStage& s) { return s.times.allreduce; })
      .def_readonly("allreduce_total", &PlanStage::allreduce_total)
      .def_readonly("cut_intra_machine", &PlanStage::cut_intra_machine)
      .def_readonly("allreduce_intra_machine", &PlanStage::allreduce_intra_machine)
      .def_readonly("weight_memory", &PlanStage::weight_memory)
      .def_readonly("activation_memory", &PlanStage::activation_memory)
      .def_readonly("working_memory", &PlanStage::working_memory)
      .def_property_readonly("peak_memory", &PlanStage::peak_memory);
  py::class_<Plan>(m, "Plan", "A hybrid-parallel plan for one global batch size")
      .def_readonly("global_batch", &Plan::global_batch)
      .def_readonly("pipeline_replicas", &Plan::pipeline_replicas)
      .def_readonly("micro_batch_size", &Plan::micro_batch_size)
      .def_readonly("micro_batches", &Plan::micro_batches)
      .def_property_readonly("uneven_micro_batches", &Plan::uneven_micro_batches)
      .def_property_readonly("schedule", [](const Plan& p) { return to_string(p.schedule); })
      .def_readonly("chunks", &Plan::chunks)
      .def_readonly("stages", &Plan::stages)
      .def_property_readonly("stages_string", [](const Plan& p) { return stages_string(p); })
      .def_property_readonly("device_count", &Plan::device_count)
      .def_property_readonly("first_device", &Plan::first_device)
      .def_property_readonly("copy_stride", &Plan::copy_stride)
      .def_readonly("slot", &Plan::slot)
      .def_readonly("fill_drain", &Plan::fill_drain)
      .def_readonly("exposed_allreduce", &Plan::exposed_allreduce)
      .def_readonly("estimate", &Plan::estimate)
      .def_readonly("lower_bound", &Plan::lower_bound)
      .def_readonly("iteration_time", &Plan::iteration_time)
      .def_readonly("simulated_time", &Plan::simulated_time)
      .def_readonly("one_device_time", &Plan::one_device_time)
      .def_readonly("speedup", &Plan::speedup)
      .def_property_readonly("limiter", [](const Plan& p) { return to_string(p.limiter); })
      .def_property_readonly("bubbles", &plan_bubbles)
      .def("__repr__", [](const Plan& p) {
        return "<pe.Plan GBS " + std::to_string(p.global_batch) + ": " + stages_string(p) + ", " +
               std::to_string(p.pipeline_replicas) + " x " + std::to_string(p.micro_batches) + "x" +
               std::to_string(p.micro_batch_size) + ", " + to_string(p.schedule) + ">";
      });
}

void bind_point(py::module_& m) {
  py::class_<Baselines>(m, "Baselines", "Plain data parallelism on every device")
      .def_readonly("single_device_time", &Baselines::single_device_time)
      .def_readonly("allreduce_time", &Baselines::allreduce_time)
      .def_readonly("per_device_batch", &Baselines::per_device_batch)
      .def_readonly("max_device_batch", &Baselines::max_device_batch)
      .def_readonly("accumulation_steps", &Baselines::accumulation_steps)
      .def_readonly("fits", &Baselines::fits)
      .def_readonly("dp", &Baselines::dp)
      .def_readonly("dp_overlap", &Baselines::dp_overlap)
      .def_readonly("dp_p3", &Baselines::dp_p3);
  py::class_<PointResult>(m, "PointResult", "Everything known about one global batch size")
      .def_readonly("global_batch", &PointResult::global_batch)
      .def_readonly("baselines", &PointResult::baselines)
      .def_readonly("plans", &PointResult::plans)
      .def_property_readonly("best",
                             [](const PointResult& p) -> std::optional<Plan> {
                               if (const Plan* b = p.best()) return *b;
                               return std::nullopt;
                             })
      .def_readonly("no_plan_reason", &PointResult::no_plan_reason)
      .def_readonly("exact", &PointResult::exact)
      .def_readonly("lower_bound", &PointResult::lower_bound)
      .def_property_readonly("gap", &PointResult::gap)
      .def("__repr__", [](const PointResult& p) {
        const Plan* b = p.best();
        return "<pe.PointResult GBS " + std::to_string(p.global_batch) + ": " +
               (b ? stages_string(*b) : "no plan") + ">";
      });
  py::class_<LayoutCost>(m, "LayoutCost", "A plan of your own, costed like the search's plans")
      .def_readonly("plan", &LayoutCost::plan)
      .def_readonly("fits", &LayoutCost::fits)
      .def_readonly("memory_note", &LayoutCost::memory_note);
}

}  // namespace

void bind_results(py::module_& m) {
  bind_bubbles(m);
  bind_plan(m);
  bind_point(m);
}

}  // namespace pe::python
