"""The order of forwards and backwards on one stage, exactly as pe-plan's simulator runs
it: 1F1B warms up with min(M, stages from here to the end) forwards, then alternates a
backward and a forward, then drains the backwards; GPipe runs every forward, then every
backward (micro-batches in order)."""

from typing import List, Tuple


def warmup_forwards(schedule: str, micro_batches: int, stages: int, stage: int) -> int:
    if schedule == "gpipe":
        return micro_batches
    return min(micro_batches, stages - stage)


def stage_operations(schedule: str, micro_batches: int, stages: int,
                     stage: int) -> List[Tuple[str, int]]:
    """[("F" or "B", micro-batch), ...], 2 x micro_batches entries."""
    warmup = warmup_forwards(schedule, micro_batches, stages, stage)
    ops = []
    for index in range(2 * micro_batches):
        if index < warmup:
            ops.append(("F", index))
        elif index < 2 * micro_batches - warmup:
            step = index - warmup
            ops.append(("B", step // 2) if step % 2 == 0 else ("F", warmup + step // 2))
        else:
            ops.append(("B", index - micro_batches))
    return ops
