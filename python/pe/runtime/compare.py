"""`python3 -m pe.run --compare`: predicted next to measured. Profiles the model (or takes
a graph.txt), measures this host's gloo bandwidth into a cluster YAML, costs a set of plan
shapes through pe.plan / pe.evaluate (one stage; two replicas; two stages under 1F1B and
GPipe with several micro-batch counts; the planner's best), runs each for real and prints
the predicted (simulated and estimate) and measured iteration times, their errors, and
whether the predicted ranking agrees with the measured one."""

import json
import os
import statistics
import tempfile
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional

from . import planning
from .bandwidth import cluster_yaml, measure_bandwidth
from .errors import UsageError
from .execute import run_plan
from .graphtxt import profile_batch_size, read_operators
from .plans import parse_plan


@dataclass
class Row:
    label: str
    layout: str
    micro_batches: int
    copies: int
    schedule: str
    simulated_s: float
    estimate_s: float
    measured_s: float
    max_abs_diff: float

    @property
    def simulated_error(self) -> float:
        return (self.simulated_s - self.measured_s) / self.measured_s

    @property
    def estimate_error(self) -> float:
        return (self.estimate_s - self.measured_s) / self.measured_s


def add_compare_options(p) -> None:
    g = p.add_argument_group("--compare")
    g.add_argument("--compare", action="store_true", help="profile, measure bandwidth, plan, "
                   "run a set of plans and print predicted next to measured time")
    g.add_argument("--graph", help="use this graph.txt (from pe.profile) instead of profiling")
    g.add_argument("--batch", type=int, default=32, help="global batch size (and profile batch)")
    g.add_argument("--devices", type=int, default=2, help="processes of the measured cluster")
    g.add_argument("--micro-batches", default="1,2,4", help="micro-batch counts to run")
    g.add_argument("--rounds", type=int, default=1, help="run the whole set of plans this "
                   "many times, round after round; each plan's time is the median of all")
    g.add_argument("--workdir", help="where to write graph.txt and cluster.yml (default: a "
                   "temporary folder)")
    g.add_argument("--json", help="also write the comparison as JSON here")


def _two_stage_cut(graph: str, cluster: str, gbs: int, states: int, pbs: float) -> str:
    """The two-stage layout (one process each) pe.evaluate costs fastest, 2 micro-batches."""
    best = None
    for cut in range(states - 1):
        layout = f"0-{cut}:1;{cut + 1}-{states - 1}:1"
        cost = planning.evaluate(graph, cluster, gbs, layout, pbs=pbs, microbatches=2)
        if best is None or cost["simulated_time_s"] < best[0]:
            best = (cost["simulated_time_s"], layout)
    return best[1]


def plan_set(graph: str, cluster: str, gbs: int, pbs: float, devices: int,
             micro_batches: List[int]) -> List[tuple]:
    """(label, pe.evaluate / pe.plan dict) per plan shape that fits `devices` processes."""
    states = len(read_operators(graph))
    whole = f"0-{states - 1}:1"
    shapes = [("1 stage", whole, 1, 1, "1f1b")]
    if devices >= 2:
        shapes.append(("2 replicas", whole, 1, 2, "1f1b"))
        two = _two_stage_cut(graph, cluster, gbs, states, pbs)
        for m in micro_batches:
            if m <= gbs:
                shapes.append(("2 stages", two, m, 1, "1f1b"))
                if m > 1:
                    shapes.append(("2 stages", two, m, 1, "gpipe"))
    out = [(label, planning.evaluate(graph, cluster, gbs, layout, pbs=pbs, microbatches=m,
                                     plan_copies=r, schedule=sched))
           for label, layout, m, r, sched in shapes]
    best = planning.plan(graph, cluster, gbs, pbs=pbs)["plans"]
    if best:
        out.append(("planner's best", best[0]))
    return out


def measure_plans(model: str, costed: List[tuple], rounds: int, run_options: Dict) -> List[Row]:
    """Runs every plan once per round, round after round (so a change in the host's load
    touches every plan alike); a plan's measured time is the median of all its measured
    iterations, its numerics the worst difference of its runs."""
    plans = [parse_plan(c, source=label) for label, c in costed]
    times: List[List[float]] = [[] for _ in plans]
    worst = [0.0 for _ in plans]
    for _ in range(rounds):
        for i, plan in enumerate(plans):
            result = run_plan(model, plan, **run_options)
            times[i] += result.iteration_times_s
            if result.numerics:
                worst[i] = max(worst[i], result.numerics.max_abs_diff)
    return [Row(label, plan.stages_string, plan.micro_batches, plan.replicas, plan.schedule,
                c["simulated_time_s"], c["estimate_s"], statistics.median(t), w)
            for (label, c), plan, t, w in zip(costed, plans, times, worst)]


def compare(model: str, gbs: int, devices: int, micro_batches: List[int], workdir: str,
            graph: Optional[str] = None, run_options: Optional[Dict] = None,
            rounds: int = 1) -> Dict:
    from pe.profile import profile_model

    if devices < 1 or rounds < 1:
        raise UsageError("--devices and --rounds must be >= 1")
    if graph is None:
        graph = os.path.join(workdir, "graph.txt")
        profile_model(model, gbs, graph)
    pbs = profile_batch_size(graph)
    ops = read_operators(graph)
    bw = measure_bandwidth(max(devices, 2), max(o.activation_bytes for o in ops),
                           sum(o.parameter_bytes for o in ops))
    cluster = os.path.join(workdir, "cluster.yml")
    with open(cluster, "w", encoding="utf-8") as f:
        f.write(cluster_yaml(bw))
    costed = plan_set(graph, cluster, gbs, pbs, devices, micro_batches)
    rows = measure_plans(model, costed, rounds, run_options or {})
    return {"model": model, "graph": graph, "cluster": cluster, "gbs": gbs, "pbs": pbs,
            "bandwidth": asdict(bw), "rounds": rounds, "rows": rows}


# Predicted times this close count as a tie, as pe-plan's search counts them (kSimpler).
TIE = 1e-3


def _tied(x: float, y: float) -> bool:
    return abs(x - y) <= TIE * min(x, y)


def ranking_agreement(rows: List[Row]) -> Dict:
    """Whether the measured fastest plan is one of those predicted fastest (simulated, ties
    within TIE), and the share of plan pairs that prediction and measurement order the same
    way (pairs whose predictions tie are not counted)."""
    pairs = agree = 0
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if _tied(a.simulated_s, b.simulated_s):
                continue
            pairs += 1
            agree += (a.simulated_s < b.simulated_s) == (a.measured_s < b.measured_s)
    fastest = min(r.simulated_s for r in rows)
    predicted = [i for i, r in enumerate(rows) if _tied(r.simulated_s, fastest)]
    measured = min(range(len(rows)), key=lambda i: rows[i].measured_s)
    return {"best_agrees": measured in predicted, "predicted_best": predicted[0],
            "predicted_tied": predicted, "measured_best": measured, "pairs": pairs,
            "pairs_agreeing": agree}


def table(report: Dict) -> str:
    bw = report["bandwidth"]
    lines = [f"{report['model']}: GBS {report['gbs']}, profile {report['graph']} (batch "
             f"{report['pbs']:g}); gloo on this host: point-to-point {bw['p2p_GBps']:.3f} GB/s, "
             f"all-reduce {bw['allreduce_GBps']:.3f} GB/s ({report['cluster']}); measured: "
             f"median of every measured iteration of {report['rounds']} round(s)",
             f"{'plan':<15} {'stages':<22} {'MB':>3} {'R':>2} {'sched':<6} {'simulated':>10} "
             f"{'estimate':>10} {'measured':>10} {'err sim':>8} {'err est':>8}"]
    for r in report["rows"]:
        lines.append(f"{r.label:<15} {r.layout:<22} {r.micro_batches:>3} {r.copies:>2} "
                     f"{r.schedule:<6} {r.simulated_s * 1e3:>8.2f}ms {r.estimate_s * 1e3:>8.2f}ms "
                     f"{r.measured_s * 1e3:>8.2f}ms {r.simulated_error * 100:>+7.1f}% "
                     f"{r.estimate_error * 100:>+7.1f}%")
    rank = ranking_agreement(report["rows"])
    rows = report["rows"]
    errors = [abs(r.simulated_error) for r in rows]
    lines.append(f"simulated error: median {statistics.median(errors) * 100:.1f}%, worst "
                 f"{max(errors) * 100:.1f}%; predicted best: "
                 + " = ".join(f"{rows[i].label} {rows[i].layout}" for i in rank["predicted_tied"])
                 + ", measured best: "
                 f"{rows[rank['measured_best']].label} {rows[rank['measured_best']].layout} "
                 f"({'agree' if rank['best_agrees'] else 'disagree'}); "
                 f"{rank['pairs_agreeing']} of {rank['pairs']} pairs ranked alike")
    return "\n".join(lines)


def compare_main(args) -> int:
    try:
        micro = [int(m) for m in args.micro_batches.split(",")]
    except ValueError as exc:
        raise UsageError(f"--micro-batches '{args.micro_batches}': expected a list like "
                         "1,2,4") from exc
    options = dict(iterations=args.iterations, warmup=args.warmup, threads=args.threads,
                   max_processes=args.max_processes, lr=args.lr, seed=args.seed,
                   timeout_s=args.timeout, check=not args.no_check, tolerance=args.tolerance)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        report = compare(args.model, args.batch, args.devices, micro, workdir, args.graph, options,
                         args.rounds)
        print(table(report))
    if args.json:
        out = dict(report, rows=[dict(asdict(r), simulated_error=r.simulated_error,
                                      estimate_error=r.estimate_error) for r in report["rows"]],
                   ranking=ranking_agreement(report["rows"]))
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    return 0
