"""`python3 -m pe.run`: run a pe-plan plan for real on this machine's CPU, one process per
device over torch.distributed (gloo on 127.0.0.1), and report the measured iteration time,
a measured Chrome trace and the numerics check against single-process training.

    python3 -m pe.run --model examples/python/mlp.py:make --plan plan.json

`--compare` profiles the model, measures this host's gloo bandwidth, plans, runs a set of
plans and prints predicted next to measured time (docs/python-runtime.md).

From Python: `pe.run.run("examples/python/mlp.py:make", "plan.json")` returns a RunResult."""

import argparse
import sys
from typing import Optional

from pe.runtime.errors import PeRuntimeError
from pe.runtime.execute import RunResult, run_plan
from pe.runtime.launch import default_max_processes
from pe.runtime.numerics import DEFAULT_TOLERANCE
from pe.runtime.plans import RunPlan, load_plan, parse_plan
from pe.runtime.trace import write_trace


def run(model: str, plan, gbs: Optional[int] = None, rank: int = 1, **options) -> RunResult:
    """Runs `plan` (a path to pe-plan's JSON, a JSON dict as pe.plan / pe.evaluate return,
    or a RunPlan) for MODULE:FACTORY `model`. Options: iterations, warmup, threads, port,
    max_processes, lr, seed, check, tolerance, timeout_s. Raises PeRuntimeError."""
    if isinstance(plan, str):
        source, plan = plan, load_plan(plan, gbs, rank)
    elif isinstance(plan, dict):
        source, plan = "plan", parse_plan(plan, gbs, rank)
    else:
        source = "plan"
    return run_plan(model, plan, source=source, **options)


def summary(result: RunResult) -> str:
    plan: RunPlan = result.plan
    predicted = plan.predicted
    lines = [f"plan {plan.describe()}, GBS {plan.global_batch}, {plan.world_size} process(es)",
             f"measured iteration {result.iteration_time_s * 1e3:.3f} ms (median of "
             f"{len(result.iteration_times_s)}; min {min(result.iteration_times_s) * 1e3:.3f}, "
             f"max {max(result.iteration_times_s) * 1e3:.3f})"]
    if "simulated_time_s" in predicted:
        lines.append(f"predicted: simulated {predicted['simulated_time_s'] * 1e3:.3f} ms, "
                     f"estimate {predicted['estimate_s'] * 1e3:.3f} ms")
    if result.numerics:
        n = result.numerics
        lines.append(f"numerics: {n.parameters} parameter tensors after {n.iterations} "
                     f"iterations, max abs difference to single-process training "
                     f"{n.max_abs_diff:.3g} (tolerance {n.tolerance:g}): "
                     f"{'OK' if n.ok else 'MISMATCH'}")
    return "\n".join(lines)


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--iterations", type=int, default=5, help="measured iterations (median)")
    p.add_argument("--warmup", type=int, default=2, help="iterations run before measuring")
    p.add_argument("--threads", type=int, default=1, help="torch threads per process")
    p.add_argument("--port", type=int, default=0, help="TCP port of the gloo rendezvous on "
                   "127.0.0.1; 0 picks a free one")
    p.add_argument("--max-processes", type=int, default=default_max_processes(),
                   help="refuse plans needing more processes (default 2 per core, at least 4)")
    p.add_argument("--lr", type=float, default=0.01, help="SGD learning rate")
    p.add_argument("--seed", type=int, default=0, help="seed of weights and data")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds before giving up")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python3 -m pe.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="MODULE:FACTORY, as for pe.profile")
    p.add_argument("--plan", help="pe-plan JSON (--format json, with or without --plan)")
    p.add_argument("--gbs", type=int, help="the batch size's plan, when the JSON has several")
    p.add_argument("--rank", type=int, default=1, help="which of the --top plans (1 = best)")
    p.add_argument("--trace", help="write the measured Chrome trace here")
    p.add_argument("--no-check", action="store_true", help="skip the numerics check")
    p.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE,
                   help="largest allowed absolute parameter difference")
    _add_run_options(p)
    from pe.runtime.compare import add_compare_options
    add_compare_options(p)
    return p


def main(argv=None) -> int:
    parser = parse_args(argv)
    args = parser.parse_args(argv)
    try:
        if args.compare:
            from pe.runtime.compare import compare_main
            for flag, value in (("--plan", args.plan), ("--trace", args.trace),
                                ("--gbs", args.gbs), ("--port", args.port),
                                ("--rank", args.rank != 1)):
                if value:
                    parser.error(f"{flag} is for running one plan, not with --compare")
            return compare_main(args)
        if not args.plan:
            parser.error("--plan is required (or --compare)")
        result = run(args.model, args.plan, args.gbs, args.rank, iterations=args.iterations,
                     warmup=args.warmup, threads=args.threads, port=args.port,
                     max_processes=args.max_processes, lr=args.lr, seed=args.seed,
                     check=not args.no_check, tolerance=args.tolerance, timeout_s=args.timeout)
    except PeRuntimeError as exc:
        print(f"pe.run: error: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.trace:
        write_trace(args.trace, result.trace)
    print(summary(result))
    if args.trace:
        print(f"wrote the measured trace to {args.trace}")
    return 0 if result.numerics is None or result.numerics.ok else 3


if __name__ == "__main__":
    sys.exit(main())
