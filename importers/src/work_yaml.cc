#include "pe/importers/work_yaml.h"

#include <map>
#include <set>

#include "yaml_input.h"

namespace pe {
namespace {

using namespace detail::yaml_input;

constexpr long long kMaxChunks = 1000000;
constexpr long long kMaxStage = 1000000;

bool per_micro_batch(WorkAfter after) {
  return after == WorkAfter::Forward || after == WorkAfter::Backward;
}

// duration_ms or total_ms (exactly one), in seconds.
void read_length(const YAML::Node& map, const std::string& file, WorkItem& item) {
  const YAML::Node duration = child(map, "duration_ms", file, false);
  const YAML::Node total = child(map, "total_ms", file, false);
  if (static_cast<bool>(duration) == static_cast<bool>(total))
    throw InputError(where(file, map, "duration_ms"),
                     "give exactly one of duration_ms (per piece) or total_ms (per stage)");
  item.split_total = static_cast<bool>(total);
  const char* key = total ? "total_ms" : "duration_ms";
  item.duration = non_negative(total ? total : duration, file, key, true) / 1e3;
}

std::vector<int> read_stages(const YAML::Node& node, const std::string& file) {
  if (node.IsScalar() && node.Scalar() == "all") return {};
  if (!node.IsSequence() || node.size() == 0)
    throw InputError(where(file, node, "stages"),
                     "expected 'all' or a non-empty list of stage numbers, e.g. [0, 2]");
  std::vector<int> stages;
  std::set<long long> seen;
  for (const YAML::Node& entry : node) {
    const long long stage = count(entry, file, "stages");
    if (stage > kMaxStage || !seen.insert(stage).second)
      throw InputError(where(file, entry, "stages"),
                       "stage " + entry.Scalar() + " is repeated or out of range");
    stages.push_back(static_cast<int>(stage));
  }
  return stages;
}

void read_after(const YAML::Node& node, const std::string& file, WorkItem& item) {
  const std::string value = text(node, file, "after");
  if (value == "forward") {
    item.after = WorkAfter::Forward;
  } else if (value == "backward") {
    item.after = WorkAfter::Backward;
  } else {
    item.after = WorkAfter::Item;
    item.after_item = value;
  }
}

void read_chunks(const YAML::Node& map, const std::string& file, WorkItem& item) {
  const YAML::Node node = child(map, "chunks", file, false);
  if (!node) return;
  if (per_micro_batch(item.after))
    throw InputError(where(file, node, "chunks"),
                     "after: forward/backward makes one piece per micro-batch; remove chunks");
  item.chunks = static_cast<int>(count_in(node, file, "chunks", 1, kMaxChunks, "pieces"));
}

// Pieces of a positive length in seconds: a subnormal duration_ms (or a tiny total_ms over
// many chunks) can become 0 s once converted from ms.
void check_piece_length(const YAML::Node& map, const std::string& file, const WorkItem& item) {
  const double piece = item.split_total ? item.duration / item.chunks : item.duration;
  if (piece > 0) return;
  const char* key = item.split_total ? "total_ms" : "duration_ms";
  const YAML::Node node = child(map, key, file, true);
  throw InputError(
      where(file, node, key),
      "expected pieces longer than 0 s, got '" + node.Scalar() + "'" +
          (item.split_total ? " over " + std::to_string(item.chunks) + " chunks" : "") +
          ", which is 0 s in seconds (below 5e-324 s)");
}

WorkItem read_item(const YAML::Node& map, const std::string& file) {
  if (!map.IsMap()) throw InputError(where(file, map, "items"), "expected a map per item");
  only_keys(map, {"name", "after", "duration_ms", "total_ms", "chunks", "stages"}, file,
            "a work item");
  WorkItem item;
  const YAML::Node name = child(map, "name", file, true);
  item.name = text(name, file, "name");
  if (item.name.empty() || item.name == "forward" || item.name == "backward")
    throw InputError(where(file, name, "name"),
                     "'" + item.name + "' is not a usable name (empty or reserved)");
  item.where = location(file, map.Mark().is_null() ? 0 : map.Mark().line + 1);
  if (YAML::Node after = child(map, "after", file, false)) read_after(after, file, item);
  read_length(map, file, item);
  read_chunks(map, file, item);
  check_piece_length(map, file, item);
  if (YAML::Node stages = child(map, "stages", file, false))
    item.stages = read_stages(stages, file);
  return item;
}

// For each item, whether following `after` links from it (next[i], -1 for none) runs into
// a cycle. Each item is walked once: O(n).
std::vector<bool> leads_to_cycle(const std::vector<long>& next) {
  enum class Walk : unsigned char { New, OnPath, Ends, Cycles };
  std::vector<Walk> state(next.size(), Walk::New);
  std::vector<std::size_t> path;
  for (std::size_t i = 0; i < next.size(); ++i) {
    long at = static_cast<long>(i);
    for (path.clear(); at >= 0 && state[at] == Walk::New; at = next[at]) {
      state[at] = Walk::OnPath;
      path.push_back(static_cast<std::size_t>(at));
    }
    const Walk end = at < 0 || state[at] == Walk::Ends ? Walk::Ends : Walk::Cycles;
    for (const std::size_t p : path) state[p] = end;
  }
  std::vector<bool> cycles(next.size());
  for (std::size_t i = 0; i < next.size(); ++i) cycles[i] = state[i] == Walk::Cycles;
  return cycles;
}

// Unknown names and cycles in `after`, reported at the item's `after` key, the first
// faulty item in list order. O(n log n).
void check_after(const WorkList& work, const std::vector<YAML::Node>& after_nodes,
                 const std::string& file) {
  std::map<std::string, long> position;
  for (std::size_t i = 0; i < work.items.size(); ++i)
    position.emplace(work.items[i].name, static_cast<long>(i));
  std::vector<long> next(work.items.size(), -1);
  for (std::size_t i = 0; i < work.items.size(); ++i)
    if (const auto it = position.find(work.items[i].after_item);
        work.items[i].after == WorkAfter::Item && it != position.end())
      next[i] = it->second;
  const std::vector<bool> cycles = leads_to_cycle(next);
  for (std::size_t i = 0; i < work.items.size(); ++i) {
    const WorkItem& item = work.items[i];
    if (item.after != WorkAfter::Item) continue;
    if (next[i] < 0)
      throw InputError(where(file, after_nodes[i], "after"), "no item named '" + item.after_item +
                                                                 "' (expected forward, backward "
                                                                 "or an item name)");
    if (cycles[i])
      throw InputError(where(file, after_nodes[i], "after"),
                       "'after' of item '" + item.name + "' leads back to itself (a cycle)");
  }
}

}  // namespace

WorkList parse_work_yaml(const std::string& text, const std::string& file) {
  YAML::Node root = parse(text, file);
  if (!root.IsMap()) throw InputError(file, "expected a map with an 'items' list");
  only_keys(root, {"items"}, file, "the work file");
  const YAML::Node items = child(root, "items", file, true);
  if (!items.IsSequence()) throw InputError(where(file, items, "items"), "expected a list");
  WorkList work;
  std::vector<YAML::Node> after_nodes;
  std::set<std::string> names;
  for (const YAML::Node& node : items) {
    work.items.push_back(read_item(node, file));
    if (!names.insert(work.items.back().name).second)
      throw InputError(where(file, node["name"], "name"),
                       "item name '" + work.items.back().name + "' is used twice");
    after_nodes.push_back(node["after"] ? node["after"] : node);
  }
  check_after(work, after_nodes, file);
  return work;
}

WorkList load_work_yaml(const std::string& path) { return parse_work_yaml(read_text(path), path); }

}  // namespace pe
