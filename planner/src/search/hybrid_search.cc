// The hybrid search for one global batch size: branch and bound on the simulated time.
// Candidates come from the seeds (one-stage and equal-work pipelines, accumulation plans, and
// on wide copies the plans of greedy and coarse passes; the fastest few polished by local
// moves, search/polish.h), from one dynamic-programming pass per pipeline shape, which returns
// the plans of the shape with the least path lower bound (cost/path_bound.h), and after the
// first round from greedy passes of the narrow shapes whose pass ran out; where 1F1B is
// searched, each GPipe plan with its 1F1B twin (one_f_one_b_twin). Candidates are simulated
// in order of their lower bounds while a bound is below the best simulated time found (the
// incumbent); the passes drop every plan whose bound cannot beat the incumbent. What no pass
// could rule out is the certificate: the least lower bound over every shape. The branch and
// bound is search/branch_and_bound.h; this file runs it on the whole cluster, then on its
// parts, then refines its answer.
#include "search/hybrid_search.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

#include "search/branch_and_bound.h"
#include "search/pipeline_shapes.h"
#include "search/shape_pass.h"

namespace pe::detail {
namespace {

// Whether each plan of a shape on the first `part` devices is, or is no faster than, a plan of
// `whole`, a shape of the whole cluster of `cost` with the same copies, micro-batches and
// schedule, whose bound then bounds it too:
// - one copy: the same devices (the whole cluster's copy leaves its last devices idle);
// - on machines of one size and one GPU type (`machine` GPUs each, 0 otherwise), copies that
//   start on machine boundaries in both: each copy sits on its machines as the first does, so
//   the plan costs the same there. (With GPU types that differ, the whole cluster's copies may
//   sit on slower machines than the part's: BERT-48 at GBS 128 on 2 machines of 2 H100s and 2
//   of 2 V100s reported a plan 0.7 % slower than its first 2 machines give, as exact.)
// - there too, copies that do not start on machine boundaries, where the whole cluster's do,
//   when no link inside a machine is slower than the links between machines, and no stage's
//   replicas in every copy can share one machine (copies `part / r` apart): the same stages
//   in the whole cluster's copies cross machines only where the part's first copy does, while
//   the part's cross where any of its copies does, and each stage all-reduces across machines
//   in both. Such a shape is not held (its plans are not the whole cluster's), but bounded:
//   on NASNet-A large at GBS 512 on 8 machines of 8 GPUs the shapes of 2 to 8 copies on the
//   first 6 and 7 machines were left at their floor (gap 24.1 %; 11.5 % with these bounds).
bool held_by(const CostModel& cost, const PipelineShapeChoice& shape, int part,
             const PipelineShapeChoice& whole, int machine) {
  const int r = shape.replicas;
  if (!same_shape(shape, whole)) return false;
  if (r == 1) return true;
  if (machine == 0 || (cost.device_count() / r) % machine != 0) return false;
  const int width = part / r;
  if (width % machine == 0) return true;
  const Network& links = cost.cluster().network;
  return links.intra >= links.inter_p2p && links.intra >= links.inter_allreduce &&
         (r - 1) * width + 1 > machine;
}

// The parts of a cluster: its first machines (largest first), and its first device when
// its first machine has more. Each is built when it is searched (part_cluster), never all at
// once: on 100,000 single-GPU machines they would hold 5 * 10^9 machine entries.
struct Parts {
  std::vector<int> machines;  // each part's machines; 0: the first device alone
  std::vector<int> devices;   // and its devices
};
Parts cluster_parts(const Cluster& cluster) {
  Parts parts;
  int devices = cluster.device_count();
  for (int m = cluster.machine_count() - 1; m >= 1; --m) {
    devices -= cluster.machine_gpus[static_cast<std::size_t>(m)];
    parts.machines.push_back(m), parts.devices.push_back(devices);
  }
  if (cluster.machine_gpus.front() > 1) parts.machines.push_back(0), parts.devices.push_back(1);
  return parts;
}

}  // namespace

Cluster part_cluster(const Cluster& cluster, int machines) {
  Cluster part = cluster;
  const auto kept = static_cast<std::size_t>(std::max(machines, 1));
  part.machine_gpus.resize(kept);
  if (machines == 0) part.machine_gpus = {1};
  if (!part.machine_gpu.empty()) part.machine_gpu.resize(kept);
  return part;
}

Seconds work_floor(const CostModel& cost, int global_batch, int used) {
  return cost.whole_model_time(global_batch) / (used * cost.fastest());
}

bool part_cannot_beat(const CostModel& part, int global_batch, const SearchResult& found) {
  return !found.plans.empty() &&
         work_floor(part, global_batch, part.device_count()) >= found.fastest;
}

using hybrid::Search;
using hybrid::ShapeOn;

struct HybridSearch::State {
  SearchOptions options;
  Search search;
  // The cost models of the parts with shapes searched, which refine() goes back to, and of
  // those of narrow passes; each part's (in the order of cluster_parts), or none. A part whose
  // shapes the whole cluster's bounds settle keeps none.
  std::deque<CostModel> part_models;
  std::vector<const CostModel*> model_of;
  // For narrow passes (refined()), where the search had parts: the whole cluster, the batch,
  // how to cost a part, and the cutoff once the parts were searched.
  const CostModel* whole = nullptr;
  int batch;
  PartCostModel part_cost;
  Seconds parts_cutoff = 0;
  ShapeBounds whole_bounds;  // shape_bounds()

  State(int global_batch, const SearchOptions& o)
      : options(o), search(global_batch, options), batch(global_batch) {}
};

HybridSearch::~HybridSearch() = default;

SearchResult HybridSearch::result() const { return state_->search.result(); }

const HybridSearch::ShapeBounds& HybridSearch::shape_bounds() const { return state_->whole_bounds; }

SearchResult HybridSearch::refined(const std::vector<Plan>& more, std::uint64_t more_effort) {
  State& s = *state_;
  s.search.offer_plans(more);
  s.search.add_refine_effort(more_effort);
  // Narrow passes first where the answer is open: a plan they find prunes the refining
  // passes, which then settle shapes for fewer steps. On GNMT-16 at GBS 512 on 32 machines of
  // 8 GPUs the best plan, 4 % faster than the search's, is a narrow pass's; after it, block
  // passes settle 6 of the 8 shapes that held the certificate for 4 to 5 M steps each, where
  // with the search's plan as the cutoff they took 91 M together (gap 43.3 % -> 4.5 %).
  if (s.whole && !s.search.exact()) narrow(s);
  s.search.refine();
  SearchResult result = s.search.result();
  result.refine_left = s.search.refine_left();
  return result;
}

// Narrow passes on the parts of at least two devices that could beat the cutoff once the
// parts were searched, fewest devices first. Those whose shapes were searched keep their cost
// models; the others get one when their passes run.
void HybridSearch::narrow(State& s) {
  const Parts parts = cluster_parts(s.whole->cluster());
  std::vector<std::size_t> which;
  for (std::size_t k = parts.devices.size(); k-- > 0;)
    if (parts.devices[k] > 1 && work_floor(*s.whole, s.batch, parts.devices[k]) <= s.parts_cutoff)
      which.push_back(k);
  s.search.narrow_passes(*s.whole, which.size(), [&](std::size_t i) -> const CostModel& {
    const CostModel*& model = s.model_of[which[i]];
    if (!model)
      model = &s.part_models.emplace_back(
          s.part_cost(part_cluster(s.whole->cluster(), parts.machines[which[i]])));
    return *model;
  });
}

HybridSearch::HybridSearch(const CostModel& cost, int global_batch, const SearchOptions& options,
                           const PartCostModel& part_cost, const std::vector<Plan>& hints,
                           const ShapeBounds& known)
    : state_(std::make_unique<State>(global_batch, options)) {
  Search& search = state_->search;
  search.offer_plans(hints);
  const std::vector<ShapeOn> whole =
      search.shapes(cost, [](const PipelineShapeChoice&) { return true; });
  ShapeBounds& proved = state_->whole_bounds;
  std::vector<Seconds> held;
  std::vector<std::uint64_t> ran_out;
  for (std::size_t i = 0; i < whole.size(); ++i) proved.shapes.push_back(whole[i].shape);
  const bool same = known.shapes.size() == whole.size() &&
                    std::equal(whole.begin(), whole.end(), known.shapes.begin(),
                               [](const ShapeOn& s, const PipelineShapeChoice& k) {
                                 return same_shape(s.shape, k);
                               });
  if (same) held = known.own, ran_out = known.ran_out_with;
  proved.own = search.run(cost, whole, held, {}, ran_out);
  proved.anywhere = search.anywhere();
  proved.ran_out_with = search.ran_out_with();
  if (same)
    for (std::size_t i = 0; i < whole.size(); ++i)
      proved.anywhere[i] = std::max(proved.anywhere[i], known.anywhere[i]);
  if (!part_cost) return;
  const std::vector<Seconds>& whole_bounds = proved.own;
  const std::vector<Seconds>& whole_anywhere = proved.anywhere;
  std::vector<Seconds> whole_classes(whole.size(), 0);  // Search::class_bounds
  bool classed = false;                                 // whole_classes is filled
  const int devices = cost.device_count();
  const int machine = uniform_machines(cost);
  const Parts parts = cluster_parts(cost.cluster());
  state_->model_of.assign(parts.devices.size(), nullptr);
  auto floor_on = [&](int used) { return work_floor(cost, global_batch, used); };
  // The fewest devices of a part that can beat the cutoff (which only falls): class_bounds
  // bound the plans of the parts searched.
  auto least_used = [&] {
    int least = devices;
    for (int used : parts.devices)
      if (floor_on(used) <= search.cutoff()) least = used;
    return least;
  };
  for (std::size_t k = 0; k < parts.devices.size(); ++k) {
    const int used = parts.devices[k];
    // Once a part cannot beat the cutoff, neither can the smaller ones.
    const Seconds floor = floor_on(used);
    if (floor > search.cutoff()) {
      search.bound_unsearched(floor, false);
      break;
    }
    const CostModel& part_model = state_->part_models.emplace_back(
        part_cost(part_cluster(cost.cluster(), parts.machines[k])));
    // A shape whose plans a shape of the whole cluster holds (or plans no faster than each,
    // held_by), and whose bound there is no less than the best time, has no faster plan; nor has
    // one whose plans that shape's placement-free bound covers (the same copies, micro-batches and
    // schedule, anywhere). The others are searched as the part's own search would, so the part's
    // best plans are candidates here too, and they keep those bounds where their own passes prove
    // less (they run out sooner on parts, which get only the effort the whole cluster left).
    if (!classed && search.unfinished())
      search.class_bounds(whole, least_used(), whole_classes), classed = true;
    // Each shape of the part, its bound from the whole cluster's shape, and that shape where
    // it holds its plans or bounds them (held_by), or -1.
    std::vector<ShapeOn> shapes;
    std::vector<Seconds> bounds;
    std::vector<int> holders;
    for (const ShapeOn& s :
         search.shapes(part_model, [](const PipelineShapeChoice&) { return true; })) {
      Seconds bound = 0;
      int holder = -1;
      for (std::size_t i = 0; i < whole.size(); ++i)
        if (same_shape(s.shape, whole[i].shape)) {
          const bool holds = held_by(cost, s.shape, used, whole[i].shape, machine);
          holder = holds ? static_cast<int>(i) : -1;
          bound = std::max(whole_anywhere[i], whole_classes[i]);
          if (holds) bound = std::max(bound, whole_bounds[i]);
        }
      // Within kTie of the best time is no faster either (the bound of the best plan's own
      // shape can come out that much below its simulated time, rounded differently: VGG-19 at
      // GBS 512 on 256 GPUs searched 5 parts' copies of that shape again, 100 M steps); the
      // certificate keeps that bound.
      if (bound >= search.best_time() * (1 - kTie)) {
        search.bound_unsearched(bound, false);
        continue;
      }
      shapes.push_back(s), bounds.push_back(bound), holders.push_back(holder);
    }
    // Parts get only the effort the whole cluster left: with less than a step a shape, their
    // shapes are only bounded (by relaxed passes). Searched with a few steps, each would be
    // seeded and polished for nothing: NASNet-A large at GBS 512 on 1,024 GPUs, 6 steps left
    // for 23,574 shapes of the parts, took 38 s instead of 24 s, with the same answer.
    if (search.effort_left() < shapes.size()) {
      // There the held shapes need nothing: the whole cluster's bound covers their plans.
      std::vector<ShapeOn> unheld;
      std::vector<Seconds> unheld_bounds;
      for (std::size_t i = 0; i < shapes.size(); ++i)
        if (holders[i] < 0) unheld.push_back(shapes[i]), unheld_bounds.push_back(bounds[i]);
      search.bound_only(part_model, unheld, unheld_bounds);
    } else
      search.run(part_model, shapes, bounds, holders);
    // Its seeds are plans (values); with no shape searched, no pass holds its cost model.
    if (shapes.empty())
      state_->part_models.pop_back();
    else
      state_->model_of[k] = &part_model;
  }
  state_->whole = &cost;
  state_->part_cost = part_cost;
  state_->parts_cutoff = search.cutoff();
}

SearchResult search_plans(const CostModel& cost, int global_batch, const SearchOptions& options,
                          const PartCostModel& part_cost, const std::vector<Plan>& hints,
                          std::uint64_t refine_effort) {
  return HybridSearch(cost, global_batch, options, part_cost, hints).refined({}, refine_effort);
}

}  // namespace pe::detail
