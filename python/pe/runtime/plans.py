"""A pe-plan plan as the runtime needs it: stages (operator ids and widths), micro-batches,
schedule, pipeline copies, and which process runs what. Reads the JSON of
`pe-plan --format json` (with or without `--plan`), of `pe.plan` and of `pe.evaluate`."""

import json
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .errors import PeRuntimeError


@dataclass
class StagePlan:
    operator_ids: List[str]
    width: int
    first_state: int
    last_state: int


@dataclass
class RunPlan:
    stages: List[StagePlan]
    micro_batches: int
    replicas: int  # pipeline copies
    schedule: str  # "1f1b" or "gpipe"
    global_batch: int
    stages_string: str
    predicted: Dict  # the plan as pe-plan wrote it (simulated_time_s, estimate_s, ...)

    @property
    def devices_per_copy(self) -> int:
        return sum(s.width for s in self.stages)

    @property
    def world_size(self) -> int:
        return self.replicas * self.devices_per_copy

    def rank(self, copy: int, stage: int, replica: int) -> int:
        """Copies take consecutive blocks of ranks; in a copy, stages take consecutive
        ranks from its first one (as pe-plan numbers devices)."""
        return copy * self.devices_per_copy + sum(s.width for s in self.stages[:stage]) + replica

    def position(self, rank: int) -> Tuple[int, int, int]:
        """(copy, stage, replica) of a rank."""
        copy, offset = divmod(rank, self.devices_per_copy)
        for s, stage in enumerate(self.stages):
            if offset < stage.width:
                return copy, s, offset
            offset -= stage.width
        raise ValueError(f"rank {rank} outside the plan")

    def describe(self) -> str:
        return (f"{self.stages_string}, {self.micro_batches} micro-batch(es), "
                f"{self.replicas} copy(ies), {self.schedule}")


def _one_plan(doc: Dict, gbs: Optional[int], rank: int, source: str) -> Dict:
    """The plan inside any of the JSON shapes pe-plan and the Python API produce."""
    if "stages" in doc and "micro_batches" in doc:
        return doc
    if doc.get("given_plan"):
        return doc["given_plan"]
    points = doc["points"] if "points" in doc else [doc] if "plans" in doc else None
    if points is None:
        raise PeRuntimeError(f"{source}: not a pe-plan JSON plan (no 'points', 'plans', "
                             "'given_plan' or 'stages')")
    if gbs is not None:
        points = [p for p in points if p.get("gbs") == gbs]
        if not points:
            raise PeRuntimeError(f"{source}: no plan for GBS {gbs}")
    point = points[-1]
    plans = [p for p in point.get("plans", []) if p.get("rank") == rank]
    if not plans:
        reason = point.get("no_plan_reason") or f"no plan of rank {rank}"
        raise PeRuntimeError(f"{source}: GBS {point.get('gbs')}: {reason}")
    return plans[0]


def parse_plan(doc: Dict, gbs: Optional[int] = None, rank: int = 1,
               source: str = "plan") -> RunPlan:
    plan = _one_plan(doc, gbs, rank, source)
    try:
        stages = [StagePlan(list(s["operator_ids"]), int(s["width"]), int(s["first_state"]),
                            int(s["last_state"])) for s in plan["stages"]]
        run = RunPlan(stages, int(plan["micro_batches"]), int(plan["pipeline_replicas"]),
                      str(plan["schedule"]), int(plan["global_batch"]), str(plan["stages_string"]),
                      plan)
    except (KeyError, TypeError, ValueError) as exc:
        raise PeRuntimeError(f"{source}: plan field missing or malformed: {exc}") from exc
    if run.schedule == "interleaved":
        raise PeRuntimeError(f"{source}: the plan is interleaved 1F1B, which this runtime does not "
                             "run (one range of layers per stage); plan with --schedule best")
    if run.schedule not in ("1f1b", "gpipe"):
        raise PeRuntimeError(f"{source}: unknown schedule '{run.schedule}'")
    if min([run.micro_batches, run.replicas, run.global_batch] + [s.width for s in stages]) < 1:
        raise PeRuntimeError(f"{source}: micro-batches, copies, batch and widths must be >= 1")
    return run


def load_plan(path: str, gbs: Optional[int] = None, rank: int = 1) -> RunPlan:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        raise PeRuntimeError(f"--plan '{path}': cannot read JSON: {exc}") from exc
    return parse_plan(doc, gbs, rank, path)
