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

/// Why PipeEdge's runtime cannot run `plan`: it turns every line of a schedule into the next
/// pipeline stage on one host, so it runs one pipeline copy whose stages have one device
/// each. Empty when the plan is such a plan; otherwise every obstacle, `; `-joined, e.g.
/// "stage 0 is replicated on 15 devices; the plan has 2 pipeline copies"; an interleaved plan
/// (several ranges per host) is one too. Plans searched with SearchOptions::max_stage_width
/// = 1 and max_pipeline_copies = 1 and the default schedules have none.
std::string pipeedge_obstacles(const Plan& plan);

/// A training plan as a sched-pipeline schedule: one line `- host: [first, last]` per stage,
/// in stage order, after a comment block that says which device and stage each host
/// stands for (`# h0: device 0, stage 0, states 0-20`). `hosts` names the plan's devices
/// in stage order, one per stage (host k runs stage k, on the device the plan gives that
/// stage). Plan state i is PipeEdge layer i + 1, so a stage of states f..l becomes
/// `[f + 1, l + 1]`. Throws UsageError (field "schedule_yaml") when PipeEdge cannot run the
/// plan (pipeedge_obstacles), when hosts.size() differs from the number of stages, or a
/// host name is empty or given twice. Comments are ignored by YAML readers, so the runtime
/// reads the same list as from sched-pipeline.
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
