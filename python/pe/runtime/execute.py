"""Running a plan for real and summarizing it: the launcher's reports turned into the
measured iteration time, the measured trace and the numerics check."""

import statistics
from dataclasses import dataclass
from typing import Dict, List, Optional

import torch

from .errors import PeRuntimeError
from .factory import build_model
from .launch import Launch, check_port, check_world, default_max_processes, free_port
from .numerics import DEFAULT_TOLERANCE, NumericsCheck, compare_parameters, reference_parameters
from .partition import build_stages
from .plans import RunPlan
from .trace import chrome_trace
from .tracing import evaluate_all, trace_model
from .worker import RunConfig, worker_main


@dataclass
class RunResult:
    plan: RunPlan
    iteration_times_s: List[float]  # measured iterations (after warm-up), in order
    trace: Dict  # Chrome trace of the last iteration
    numerics: Optional[NumericsCheck]
    pids: List[int]

    @property
    def iteration_time_s(self) -> float:
        return statistics.median(self.iteration_times_s)


def _who(plan: RunPlan, rank: int) -> str:
    copy, stage, replica = plan.position(rank)
    return f"process {rank} (stage {stage}, copy {copy}, replica {replica})"


def check_plan_matches(model: str, plan: RunPlan, source: str, seed: int) -> None:
    """Fails before any process starts when the plan's operators are not the model's."""
    spec = build_model(model, seed)
    traced = trace_model(spec.model, spec.example, model)
    build_stages(traced, plan, evaluate_all(traced, spec.example), spec.example.shape[0], source)


def _iteration_times(reports: Dict[int, dict], warmup: int) -> List[float]:
    count = len(next(iter(reports.values()))["spans"])
    times = []
    for it in range(warmup, count):
        start = min(r["spans"][it][0] for r in reports.values())
        end = max(r["spans"][it][1] for r in reports.values())
        times.append(end - start)
    return times


def _trace(reports: Dict[int, dict], plan: RunPlan, model: str) -> Dict:
    firsts = {r["stage"]: r["events"] for r in reports.values()
              if r["copy"] == 0 and r["replica"] == 0}
    labels = [f"stage {s} (states {st.first_state}-{st.last_state}, {st.width} process"
              f"{'es' if st.width > 1 else ''})" for s, st in enumerate(plan.stages)]
    return chrome_trace(firsts, labels, f"{model} measured: {plan.describe()}")


_PORT_TRIES = 3


def _launch(cfg: RunConfig, fixed_port: bool):
    """Runs the processes; a free port picked for them that another program takes before
    the rendezvous binds it is picked again (up to _PORT_TRIES times)."""
    pids: List[int] = []
    for attempt in range(_PORT_TRIES):
        if not fixed_port:
            cfg.port = free_port()
        launch = Launch(cfg.plan.world_size, worker_main, (cfg,), cfg.timeout_s,
                        lambda r: _who(cfg.plan, r))
        try:
            return launch.run(), pids + launch.pids
        except PeRuntimeError as exc:
            pids += launch.pids
            if fixed_port or "Address already in use" not in str(exc) or \
                    attempt + 1 == _PORT_TRIES:
                exc.pids = pids  # all stopped; tests check that none is left
                raise
    raise AssertionError("unreachable")


def run_plan(model: str, plan: RunPlan, iterations: int = 5, warmup: int = 2, threads: int = 1,
             port: int = 0, max_processes: Optional[int] = None, lr: float = 0.01,
             seed: int = 0, check: bool = True, tolerance: float = DEFAULT_TOLERANCE,
             timeout_s: float = 300.0, source: str = "plan") -> RunResult:
    if iterations < 1 or warmup < 0 or threads < 1:
        raise PeRuntimeError("iterations and threads must be >= 1, warm-up >= 0")
    torch.set_num_threads(threads)
    check_plan_matches(model, plan, source, seed)
    if port:
        check_port(port)
    check_world(plan.world_size, max_processes or default_max_processes())
    cfg = RunConfig(model, plan, port, iterations, warmup, threads, lr, seed, timeout_s)
    reports, pids = _launch(cfg, fixed_port=bool(port))
    numerics = None
    if check:
        measured = {n: torch.from_numpy(p) for r in reports.values() if r["params"]
                    for n, p in r["params"].items()}
        reference = reference_parameters(model, plan.global_batch, warmup + iterations, lr, seed)
        numerics = compare_parameters(measured, reference, tolerance, warmup + iterations)
    return RunResult(plan, _iteration_times(reports, warmup), _trace(reports, plan, model),
                     numerics, pids)
