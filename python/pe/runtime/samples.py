"""Which samples of an iteration's global batch each process runs in each micro-batch.

The batch is split as evenly as possible over the pipeline copies, a copy's share into
the plan's micro-batches, and a micro-batch over the replicas of a stage (a stage of width
w runs about b / w samples of each micro-batch of b). A one-stage plan is data parallelism
inside the copy, as pe-plan costs it: the copy's share is split over the stage's devices
first, then each device's part into the micro-batches (micro-steps)."""

from typing import List, Tuple

from .plans import RunPlan

Range = Tuple[int, int]  # [start, end) in the iteration's batch


def even_split(start: int, end: int, parts: int) -> List[Range]:
    """`parts` consecutive ranges covering [start, end), sizes differing by at most one,
    the larger first (as torch.tensor_split)."""
    size, extra = divmod(end - start, parts)
    out, at = [], start
    for i in range(parts):
        n = size + (1 if i < extra else 0)
        out.append((at, at + n))
        at += n
    return out


def sample_range(plan: RunPlan, copy: int, stage: int, replica: int, micro_batch: int) -> Range:
    share = even_split(0, plan.global_batch, plan.replicas)[copy]
    width = plan.stages[stage].width
    if len(plan.stages) == 1:
        device = even_split(*share, width)[replica]
        return even_split(*device, plan.micro_batches)[micro_batch]
    micro = even_split(*share, plan.micro_batches)[micro_batch]
    return even_split(*micro, width)[replica]


def overlaps(plan: RunPlan, copy: int, stage: int, replica: int, other_stage: int,
             micro_batch: int) -> List[Tuple[int, Range]]:
    """(replica of `other_stage`, shared range) for each replica of the neighbouring
    stage whose samples of this micro-batch overlap ours, in sample order."""
    lo, hi = sample_range(plan, copy, stage, replica, micro_batch)
    out = []
    for r in range(plan.stages[other_stage].width):
        a, b = sample_range(plan, copy, other_stage, r, micro_batch)
        if max(a, lo) < min(b, hi):
            out.append((r, (max(a, lo), min(b, hi))))
    return out
