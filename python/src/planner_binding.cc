// pe.Planner: the search without the GIL (other Python threads run meanwhile), and the
// reports pe-plan prints (table, CSV, JSON) of its results.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "field_flags.h"
#include "options.h"
#include "pe/plan_layout.h"
#include "pe/report.h"

namespace py = pybind11;

namespace pe::python {
namespace {

// The library's reasons for "no plan fits" worded as pe-plan prints them (flags, not fields).
std::vector<PointResult> as_cli_words(std::vector<PointResult> points) {
  for (PointResult& point : points) point.no_plan_reason = cli::cli_wording(point.no_plan_reason);
  return points;
}

std::vector<PointResult> sweep(const BoundPlanner& p, const std::vector<int>& batches) {
  py::gil_scoped_release unlocked;
  return as_cli_words(p.planner.sweep(batches));
}

LayoutCost evaluate(const BoundPlanner& p, int gbs, const std::string& layout, int microbatches,
                    const std::string& schedule, int plan_copies, int plan_first_device,
                    int plan_copy_stride) {
  PlanLayout plan = parse_plan_layout(layout);
  plan.micro_batches = microbatches;
  plan.pipeline_replicas = plan_copies;
  plan.first_device = plan_first_device;
  plan.copy_stride = plan_copy_stride;
  if (schedule != "1f1b" && schedule != "gpipe" && schedule != "interleaved" && schedule != "best")
    throw UsageError("--schedule: expected 1f1b, gpipe, interleaved or best, got '" + schedule +
                     "'");
  if (schedule == "gpipe") plan.schedule = Schedule::GPipe;
  if (schedule == "1f1b") plan.schedule = Schedule::OneFOneB;
  if (schedule == "interleaved") plan.schedule = Schedule::Interleaved;
  py::gil_scoped_release unlocked;
  return p.planner.evaluate(plan, gbs);
}

ReportContext context_of(const BoundPlanner& p, const LayoutCost* given,
                         const std::vector<std::string>& command_line) {
  ReportContext context{&p.planner.model(), &p.planner.cluster(), given};
  context.settings = &p.planner.settings();
  context.search = &p.search;
  context.program_version = "pe-plan " PE_VERSION;
  context.command_line = command_line;
  return context;
}

BoundPlanner make_planner(const Profile& profile, const Cluster& cluster,
                          std::optional<TrainingSettings> settings,
                          std::optional<SearchOptions> search) {
  const SearchOptions options = search.value_or(SearchOptions{});
  return BoundPlanner{Planner(profile.model, cluster, settings.value_or(profile.settings), options),
                      options};
}

}  // namespace

void bind_planner(py::module_& m) {
  m.def(
      "check_arguments", [](const std::vector<std::string>& args) { cli::parse_options(args); },
      py::arg("args"), "Raises UsageError as pe-plan would for these arguments (argv[1:])");
  using Points = std::vector<PointResult>;
  py::class_<BoundPlanner>(m, "Planner", "Plans a profile on a cluster (thread-safe)")
      .def(py::init(&make_planner), py::arg("profile"), py::arg("cluster"),
           py::arg("settings") = py::none(), py::arg("search") = py::none(),
           "settings default to the profile's catalogue values, search to SearchOptions()")
      .def_property_readonly("cluster", [](const BoundPlanner& p) { return p.planner.cluster(); })
      .def_property_readonly("settings", [](const BoundPlanner& p) { return p.planner.settings(); })
      .def_property_readonly("search", [](const BoundPlanner& p) { return p.search; })
      .def(
          "plan", [](const BoundPlanner& p, int gbs) { return std::move(sweep(p, {gbs}).front()); },
          py::arg("gbs"), "Baselines and best plans of one global batch size")
      .def("sweep", &sweep, py::arg("batch_sizes"),
           "plan() for every batch size (a list), in parallel, then the points that stopped short "
           "try each other's plans (README, \"Sweeps share their plans\"); results in the order "
           "given")
      .def(
          "sweep",
          [](const BoundPlanner& p, const std::string& text) {
            return sweep(p, parse_batch_sizes(text));
          },
          py::arg("batch_sizes"), "the same for \"512\", \"128,256\" or \"FIRST:LAST:STEP\"")
      .def(
          "evaluate", &evaluate, py::arg("gbs"), py::arg("layout"), py::kw_only(),
          py::arg("microbatches") = 1, py::arg("schedule") = "best", py::arg("plan_copies") = 1,
          py::arg("plan_first_device") = 0, py::arg("plan_copy_stride") = 0,
          "Costs a plan of your own, stages written as pe-plan prints them (\"0-20:15;21-24:1\"), "
          "on the machines from device plan_first_device on, copies plan_copy_stride devices apart")
      .def(
          "json",
          [](const BoundPlanner& p, const Points& points, const LayoutCost* given,
             const std::vector<std::string>& command_line) {
            return sweep_json(points, context_of(p, given, command_line));
          },
          py::arg("points"), py::arg("given") = nullptr,
          py::arg("command_line") = std::vector<std::string>{},
          "pe-plan's --format json of these points (and a given plan)")
      .def(
          "table",
          [](const BoundPlanner& p, const Points& points, const LayoutCost* given,
             std::optional<int> explained) {
            return cli::cli_wording(sweep_table(points, context_of(p, given, {}), explained));
          },
          py::arg("points"), py::arg("given") = nullptr, py::arg("explained") = py::none(),
          "pe-plan's table of these points, explaining the plan of batch size `explained`")
      .def(
          "csv", [](const BoundPlanner&, const Points& points) { return sweep_csv(points); },
          py::arg("points"), "pe-plan's --format csv of these points");
}

}  // namespace pe::python
