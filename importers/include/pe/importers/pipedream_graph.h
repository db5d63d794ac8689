// PipeDream / HPGO `graph.txt` training profiles.
//
// Grammar, one item per line (blank lines ignored, a trailing '\r' tolerated):
//
//   ID -- DESCRIPTION -- forward_compute_time=MS, backward_compute_time=MS,
//         activation_size=BYTES, parameter_size=BYTES[ -- stage_id=K]      (node, one line)
//   <whitespace>SRC_ID -- DST_ID                                               (edge)
//
// Times are milliseconds at the profile batch size and are stored as seconds.
// activation_size may be a list `[a; b; c]`, which is summed. The four metadata keys must
// each appear exactly once (any order); values must be finite and non-negative.
// `stage_id=K` (a PipeDream partition label) must be a non-negative integer and is
// otherwise ignored.
//
// Decisions where the original tool was silent or stricter:
// - Edges may appear before the nodes they name; an edge naming a node that is never
//   defined is an error at the edge's line.
// - An exact duplicate edge is ignored. A duplicate node id is an error.
// - Sources whose description starts with `Input` are model inputs and sinks whose
//   description starts with `__getitem__` are tracing artefacts: both are removed with
//   their edges (their metrics do not count, their edges carry no crossing bytes).
//
// Cut states are every cut of the remaining operators (every downward-closed set, as
// PipeDream and HPGO enumerate them), sorted by size so that a contained cut comes first;
// a chain has one per operator. A graph with more than `max_cuts` cuts gets the prefixes of
// one deterministic topological order instead (n states for n operators;
// ModelProfile::cut_limit says so): Kahn's algorithm choosing, among ready operators, the
// one that leaves the fewest bytes crossing the new prefix (ties: earlier line in the
// file). The prefixes of that order are cuts too: with every cut they form the model's
// spine (ModelProfile::spine). See profiles/README.md.
#pragma once

#include <cstddef>
#include <string>

#include "pe/model.h"
#include "pe/plan.h"

namespace pe {

/// The most cuts of a graph the importer makes states of by default (a graph with more
/// gets the prefixes of one order); 0 always gives that order.
inline constexpr std::size_t kDefaultMaxCuts = 500;

/// Reads a graph.txt file into cut states. `profile_batch_size` (> 0) is the batch size
/// the profile was taken at; it is recorded in the result, values are not rescaled.
/// The model's name is the file's folder for `.../NAME/graph.txt`, else the file's stem.
/// Throws InputError (naming file:line, the value seen and what was expected) for an
/// unreadable file, malformed lines, unknown nodes, a cycle, a graph with no operators, or
/// operators that edges do not connect into one graph (after the clean-up above).
ModelProfile import_pipedream_graph(const std::string& path, double profile_batch_size,
                                    std::size_t max_cuts = kDefaultMaxCuts);

/// Same from text; `file_label` names the input in errors and gives the model's name.
ModelProfile parse_pipedream_graph(const std::string& text, const std::string& file_label,
                                   double profile_batch_size,
                                   std::size_t max_cuts = kDefaultMaxCuts);

/// `text`, a graph.txt as parse_pipedream_graph reads it (file_label names it in errors),
/// with every node line's `stage_id` set to the stage of `plan` that runs it: the field
/// PipeDream's tools read to build one module per stage. `plan` must be a plan of the
/// model parse_pipedream_graph gives for this text (its stages cover the states 0..n-1 in
/// order, each stage's cut containing the one before); an operator gets the first stage
/// whose last state's cut holds it. Nodes the importer removes get a neighbour's stage: a model
/// input that of its first consumer, a tracing sink (`__getitem__`) that of its producer. Every
/// other line is kept as written (a byte order mark is dropped, lines end in '\n', and a stage_id
/// that was there is replaced), so the result imports to the same model. Throws InputError as
/// parse_pipedream_graph does, and UsageError (field "pipedream_graph_with_stages") when the
/// plan's stages do not cover the graph's states in order.
std::string pipedream_graph_with_stages(const std::string& text, const std::string& file_label,
                                        const Plan& plan, std::size_t max_cuts = kDefaultMaxCuts);

/// The same for the graph.txt at `path`.
std::string pipedream_graph_file_with_stages(const std::string& path, const Plan& plan,
                                             std::size_t max_cuts = kDefaultMaxCuts);

}  // namespace pe
