// What a plan is made from: profiles, clusters, training settings and search options. Units
// and names follow pe-plan's flags (GB/s, GB, `mbs`, `max_copies`), not the C++ fields.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "options.h"
#include "pe/cluster.h"
#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/importers/transformer_yaml.h"
#include "pe/transformer.h"
#include "pe/units.h"

namespace py = pybind11;

namespace pe::python {
namespace {

using OptionalNumber = std::optional<double>;

// A profile by catalogue name or graph.txt path, at batch size `pbs` (default: the
// catalogue's or the file name's), named and set up as pe-plan does.
Profile load_profile(const std::string& name_or_path, OptionalNumber pbs) {
  const ProfileEntry entry = find_profile(name_or_path);
  const double batch = pbs.value_or(entry.profile_batch_size);
  if (batch <= 0)
    throw UsageError("the profile batch size of '" + name_or_path +
                     "' is unknown: pass --pbs N (the batch size it was measured at)");
  Profile profile{import_pipedream_graph(entry.path, batch), training_settings(entry), entry.path,
                  false};
  profile.model.name = entry.name;
  return profile;
}

// A chain model built in code from (name, forward s, backward s, activation bytes,
// parameter bytes) per layer, at profile batch size `pbs`.
Profile chain_profile(const std::string& name, double pbs, const std::vector<Layer>& layers) {
  return Profile{make_chain_model(name, pbs, layers), TrainingSettings{}, "", false};
}

// A transformer by bundled name or YAML path, as pe-plan's --model builds it: one sequence
// per sample, the optimizer's bytes per parameter as the optimizer scaling.
Profile load_transformer(const std::string& name_or_path) {
  const TransformerInput t = load_transformer_yaml(find_transformer(name_or_path));
  TrainingSettings settings;
  settings.optimizer_scaling = transformer_optimizer_scaling(t.config);
  return Profile{transformer_model(t.config, t.gpu, t.efficiency), settings, t.path, true};
}

// `cluster` with pe-plan's overrides (--intra-bw, --inter-bw, --inter-p2p-bw, --memory-gb:
// GB/s and GB); one inter-machine bandwidth given means both kinds of transfer.
Cluster with_overrides(Cluster cluster, OptionalNumber intra_bw, OptionalNumber inter_bw,
                       OptionalNumber inter_p2p_bw, OptionalNumber memory_gb) {
  Network& net = cluster.network;
  if (intra_bw) net.intra = *intra_bw * kGB;
  std::optional<BytesPerSecond> p2p;
  if (inter_p2p_bw) p2p = *inter_p2p_bw * kGB;
  if (inter_bw)
    set_inter_machine_bandwidth(net, *inter_bw * kGB, p2p);
  else if (p2p)
    net.inter_p2p = *p2p;
  if (memory_gb) cluster.device_memory = *memory_gb * kGB;
  validate(cluster, "cluster");
  return cluster;
}

py::dict entry_dict(const ProfileEntry& e) {
  py::dict d;
  d["name"] = e.name;
  d["path"] = e.path;
  d["profile_batch_size"] = e.profile_batch_size;
  d["mbs"] = e.min_micro_batch;
  d["optimizer_scaling"] = e.optimizer_scaling;
  d["activation_bytes_per_sample"] = e.activation_bytes_per_sample;
  d["notes"] = e.notes;
  return d;
}

void bind_profile(py::module_& m) {
  py::class_<Layer>(m, "Layer", "One layer of a model built in code (times in s, sizes in bytes)")
      .def(py::init<std::string, Seconds, Seconds, Bytes, Bytes>(), py::arg("name"),
           py::arg("forward"), py::arg("backward"), py::arg("activation"), py::arg("parameters"));
  py::class_<Profile>(m, "Profile", "A layer-wise profile: the model's cut states")
      .def_property_readonly("name", [](const Profile& p) { return p.model.name; })
      .def_property_readonly("source", [](const Profile& p) { return p.model.source; })
      .def_property_readonly("path", [](const Profile& p) { return p.path; })
      .def_property_readonly("profile_batch_size",
                             [](const Profile& p) { return p.model.profile_batch_size; })
      .def_property_readonly("states", [](const Profile& p) { return p.model.size(); })
      .def_property_readonly("operator_count",
                             [](const Profile& p) { return p.model.operator_count; })
      .def_property_readonly("state_names",
                             [](const Profile& p) {
                               std::vector<std::string> names;
                               for (const CutState& s : p.model.states) names.push_back(s.name);
                               return names;
                             })
      .def_property_readonly("settings", [](const Profile& p) { return p.settings; })
      .def_property_readonly("transformer", [](const Profile& p) { return p.transformer; })
      .def_property_readonly("gpu_memory_gb",
                             [](const Profile& p) { return p.model.gpu.memory / kGB; })
      .def("__len__", [](const Profile& p) { return p.model.size(); })
      .def("__repr__", [](const Profile& p) {
        return "<pe.Profile " + p.model.name + ": " + std::to_string(p.model.size()) +
               " states, profile batch " +
               py::repr(py::float_(p.model.profile_batch_size)).cast<std::string>() + ">";
      });
  m.def("load_profile", &load_profile, py::arg("name_or_path"), py::arg("pbs") = py::none(),
        "A bundled profile by name or a PipeDream graph.txt by path; pbs: the batch size it "
        "was measured at (default: the catalogue's, or a '-pbs-N' file name's)");
  m.def("load_transformer", &load_transformer, py::arg("name_or_path"),
        "A transformer from its configuration, as pe-plan --model: a bundled name "
        "(llama2-7b, gpt3-175b, ...) or a YAML file");
  m.def("chain_profile", &chain_profile, py::arg("name"), py::arg("pbs"), py::arg("layers"),
        "A chain model built in code: one state per Layer, at profile batch size pbs");
  m.def(
      "bundled_profiles",
      [] {
        py::list entries;
        for (const ProfileEntry& e : bundled_profiles()) entries.append(entry_dict(e));
        return entries;
      },
      "The bundled profiles (profiles/catalog.yml) as dicts, in catalogue order");
  m.def("profiles_directory", &profiles_directory,
        "Where bundled profiles are looked up ($PE_PROFILES_DIR first; docs/api.md)");
  m.def("set_installed_profiles_directory", &set_installed_profiles_directory, py::arg("directory"),
        "Registers the installed profiles (done by an installed pe)");
}

void bind_cluster(py::module_& m) {
  py::class_<Cluster>(m, "Cluster", "Machines of GPUs and the links between them")
      .def(py::init([](const std::string& devices, OptionalNumber intra_bw, OptionalNumber inter_bw,
                       OptionalNumber inter_p2p_bw, OptionalNumber memory_gb) {
             return with_overrides(cluster_from_machine_ends(parse_machine_ends(devices)), intra_bw,
                                   inter_bw, inter_p2p_bw, memory_gb);
           }),
           py::arg("devices") = "8,16", py::kw_only(), py::arg("intra_bw") = py::none(),
           py::arg("inter_bw") = py::none(), py::arg("inter_p2p_bw") = py::none(),
           py::arg("memory_gb") = py::none())
      .def("with_overrides", &with_overrides, py::kw_only(), py::arg("intra_bw") = py::none(),
           py::arg("inter_bw") = py::none(), py::arg("inter_p2p_bw") = py::none(),
           py::arg("memory_gb") = py::none())
      .def_property_readonly("machine_gpus", [](const Cluster& c) { return c.machine_gpus; })
      .def_property_readonly("device_count", &Cluster::device_count)
      .def_property_readonly("machine_count", &Cluster::machine_count)
      .def_property_readonly("intra_bw", [](const Cluster& c) { return c.network.intra / kGB; })
      .def_property_readonly("inter_bw",
                             [](const Cluster& c) { return c.network.inter_allreduce / kGB; })
      .def_property_readonly("inter_p2p_bw",
                             [](const Cluster& c) { return c.network.inter_p2p / kGB; })
      .def_property_readonly("memory_gb", [](const Cluster& c) { return c.device_memory / kGB; })
      .def("__repr__", [](const Cluster& c) {
        return "<pe.Cluster " + std::to_string(c.device_count()) + " GPUs on " +
               std::to_string(c.machine_count()) + " machines>";
      });
  m.def(
      "load_cluster",
      [](const std::string& path, OptionalNumber intra_bw, OptionalNumber inter_bw,
         OptionalNumber inter_p2p_bw, OptionalNumber memory_gb) {
        return with_overrides(load_cluster_yaml(path), intra_bw, inter_bw, inter_p2p_bw, memory_gb);
      },
      py::arg("path"), py::kw_only(), py::arg("intra_bw") = py::none(),
      py::arg("inter_bw") = py::none(), py::arg("inter_p2p_bw") = py::none(),
      py::arg("memory_gb") = py::none(), "A cluster YAML file (README, \"Cluster file\")");
}

std::vector<Schedule> schedules_of(const std::string& schedule) {
  if (schedule == "1f1b") return {Schedule::OneFOneB};
  if (schedule == "gpipe") return {Schedule::GPipe};
  if (schedule == "interleaved") return {Schedule::Interleaved};
  if (schedule == "best") return {Schedule::OneFOneB, Schedule::GPipe};
  if (schedule == "all") return {Schedule::OneFOneB, Schedule::GPipe, Schedule::Interleaved};
  throw UsageError("--schedule: expected 1f1b, gpipe, interleaved, best or all, got '" + schedule +
                   "'");
}

// SearchOptions::pass_memory of --search-memory-mb (0 to 10^6 MiB, as the flag takes).
std::uint64_t pass_memory_of(std::uint64_t mb) {
  return static_cast<std::uint64_t>(cli::parse_limit("--search-memory-mb", std::to_string(mb))) *
         kMebibyte;
}

std::string schedule_name(const SearchOptions& o) {
  if (o.schedules.size() == 1) return to_string(o.schedules.front());
  return o.schedules.size() == 2 ? "best" : "all";
}

void bind_settings(py::module_& m) {
  py::class_<TrainingSettings>(m, "TrainingSettings",
                               "How a model is trained: micro-batch floor, memory factors, tensor "
                               "parallelism, recomputation and ZeRO sharding")
      .def(py::init([](int mbs, double optimizer_scaling, OptionalNumber activation,
                       int max_tensor_parallel, double tensor_parallel_efficiency,
                       bool recomputation, int zero_stage) {
             TrainingSettings s;
             s.min_micro_batch = mbs;
             s.optimizer_scaling = optimizer_scaling;
             s.activation_bytes_per_sample = activation;
             s.max_tensor_parallel = max_tensor_parallel;
             s.tensor_parallel_efficiency = tensor_parallel_efficiency;
             s.recomputation = recomputation;
             s.zero_stage = zero_stage;
             return s;
           }),
           py::kw_only(), py::arg("mbs") = 1, py::arg("optimizer_scaling") = 2.0,
           py::arg("activation_bytes_per_sample") = py::none(), py::arg("max_tensor_parallel") = 0,
           py::arg("tensor_parallel_efficiency") = 1.0, py::arg("recomputation") = true,
           py::arg("zero_stage") = 0)
      .def_readwrite("mbs", &TrainingSettings::min_micro_batch)
      .def_readwrite("optimizer_scaling", &TrainingSettings::optimizer_scaling)
      .def_readwrite("activation_bytes_per_sample", &TrainingSettings::activation_bytes_per_sample)
      .def_readwrite("max_tensor_parallel", &TrainingSettings::max_tensor_parallel)
      .def_readwrite("tensor_parallel_efficiency", &TrainingSettings::tensor_parallel_efficiency)
      .def_readwrite("recomputation", &TrainingSettings::recomputation)
      .def_readwrite("zero_stage", &TrainingSettings::zero_stage);
  py::class_<SearchOptions>(m, "SearchOptions", "What the hybrid search may choose")
      .def(py::init([](const std::string& schedule, int top, std::uint64_t effort,
                       std::uint64_t memory_mb, int width, int copies, bool straight,
                       int max_chunks) {
             SearchOptions o;
             o.pass_memory = pass_memory_of(memory_mb);
             o.schedules = schedules_of(schedule);
             o.max_chunks = max_chunks;
             o.top = top;
             o.effort = effort;
             o.max_stage_width = straight ? 1 : width;
             o.max_pipeline_copies = straight ? 1 : copies;
             return o;
           }),
           py::kw_only(), py::arg("schedule") = "best", py::arg("top") = 1,
           py::arg("search_effort") = kDefaultSearchEffort,
           py::arg("search_memory_mb") = kDefaultPassMemory / kMebibyte,
           py::arg("max_stage_width") = 0, py::arg("max_copies") = 0, py::arg("straight") = false,
           py::arg("max_chunks") = 4)
      .def_property_readonly("schedule", &schedule_name)
      .def_readwrite("top", &SearchOptions::top)
      .def_readwrite("search_effort", &SearchOptions::effort)
      .def_property(
          "search_memory_mb", [](const SearchOptions& o) { return o.pass_memory / kMebibyte; },
          [](SearchOptions& o, std::uint64_t mb) { o.pass_memory = pass_memory_of(mb); })
      .def_readwrite("max_stage_width", &SearchOptions::max_stage_width)
      .def_readwrite("max_copies", &SearchOptions::max_pipeline_copies)
      .def_readwrite("max_chunks", &SearchOptions::max_chunks);
  m.def("parse_batch_sizes", &parse_batch_sizes, py::arg("text"),
        "\"512\", \"128,256\" or \"FIRST:LAST:STEP\" as a list of batch sizes");
}

}  // namespace

void bind_inputs(py::module_& m) {
  bind_profile(m);
  bind_cluster(m);
  bind_settings(m);
}

}  // namespace pe::python
