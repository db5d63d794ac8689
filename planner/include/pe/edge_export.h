// Schedules in PipeEdge's formats: the YAML that `sched-pipeline` prints and the runtime's
// `-pt/--partition` string. Used by sched-pipeline and by `pe-plan --export-sched`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pe/edge.h"
#include "pe/plan.h"

namespace pe {

/// One line of a schedule: `host` runs layers first_layer..last_layer (1-based, inclusive).
struct HostLayers {
  std::string host;             ///< Host name.
  std::size_t first_layer = 1;  ///< First layer, 1-based, inclusive.
  std::size_t last_layer = 1;   ///< Last layer, 1-based, inclusive.
};

/// The YAML block list sched-pipeline prints, one `- host: [first, last]` line per entry,
/// in the given order, ending with a newline; `[]\n` for an empty list. Host names are
/// written with yaml_scalar so that any YAML reader gets the same string back.
std::string schedule_yaml(const std::vector<HostLayers>& lines);

/// The lines of an EdgeSchedule: each stage's host name and layers, in stage order.
std::vector<HostLayers> host_layers(const EdgeSchedule& schedule, const EdgeCluster& cluster);

/// A training plan as a sched-pipeline schedule. `hosts` names every device of the plan in
/// stage order: the `width * pipeline_replicas` devices of stage 0, then those of stage 1,
/// and so on. Plan state i is PipeEdge layer i + 1, so a stage of states f..l becomes
/// `[f + 1, l + 1]`. A replicated stage appears once per device, in device order, each line
/// with the stage's whole layer range. Throws UsageError when hosts.size() differs from
/// plan.device_count(), or a host name is empty or given twice.
std::string schedule_yaml(const Plan& plan, const std::vector<std::string>& hosts);

/// PipeEdge's runtime partition string (`-pt`): comma-separated 1-based inclusive
/// first,last layer pairs, one pair per stage (replication is not expressed), e.g.
/// "1,24,25,48". Empty for a plan without stages.
std::string partition_string(const Plan& plan);

/// `text` as a YAML scalar that reads back as the same string under YAML 1.1 and 1.2
/// (PyYAML safe_load, yaml-cpp): plain when it is made of letters, digits and `_ . / -`,
/// starts with a letter, `_` or `/`, and is not a boolean or null word (yes, no, on, off,
/// y, n, true, false, null, any case); otherwise double-quoted with `\` escapes.
std::string yaml_scalar(const std::string& text);

}  // namespace pe
