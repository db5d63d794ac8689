"""Point-to-point exchange of stage values over torch.distributed (gloo): activations
forward, gradients backward, each micro-batch's samples routed between the replicas of
neighbouring stages that share them. Sends are asynchronous (a blocking send could wait on
a neighbour that is itself sending); receives block."""

import time
from typing import List, Tuple

import torch
import torch.distributed as dist
from torch.utils._pytree import tree_flatten, tree_unflatten

from .partition import CrossingValue

FORWARD, BACKWARD = 0, 1
_LEAVES_PER_MESSAGE = 1024


def tag(micro_batch: int, direction: int, leaf: int) -> int:
    return (micro_batch * 2 + direction) * _LEAVES_PER_MESSAGE + leaf


class Outbox:
    """Sends in flight. Each send is recorded as an event from its start to when it was
    first seen complete (checked after every operation), for the measured trace."""

    def __init__(self):
        self._pending: List[Tuple[object, List[torch.Tensor], str, int, float]] = []
        self.events: List[Tuple[str, int, float, float]] = []

    def post(self, tensors: List[torch.Tensor], dst: int, micro_batch: int, direction: int,
             leaf_ids: List[int]):
        start = time.perf_counter()
        kind = "send-activation" if direction == FORWARD else "send-gradient"
        for t, leaf in zip(tensors, leaf_ids):
            work = dist.isend(t, dst, tag=tag(micro_batch, direction, leaf))
            self._pending.append((work, [t], kind, micro_batch, start))

    def poll(self):
        now = time.perf_counter()
        still = []
        for item in self._pending:
            if item[0].is_completed():
                self.events.append((item[2], item[3], item[4], now))
            else:
                still.append(item)
        self._pending = still

    def drain(self):
        for work, _, kind, micro_batch, start in self._pending:
            work.wait()
            self.events.append((kind, micro_batch, start, time.perf_counter()))
        self._pending = []


def tensor_leaves_of(value, crossing: CrossingValue) -> List[torch.Tensor]:
    leaves, _ = tree_flatten(value)
    return [leaf for leaf, const in zip(leaves, crossing.constants) if const is None]


def rebuild(crossing: CrossingValue, tensors: List[torch.Tensor]):
    """The value of `crossing` from its tensor leaves and its constants."""
    it = iter(tensors)
    leaves = [next(it) if const is None else const for const in crossing.constants]
    return tree_unflatten(leaves, crossing.spec)


def receive_pieces(crossings: List[CrossingValue], pieces: List[Tuple[int, int]],
                   micro_batch: int, direction: int, only_grads: bool) -> List[List[torch.Tensor]]:
    """Per crossing value, its tensor leaves (or, with `only_grads`, the gradients of the
    leaves that need them), assembled from `pieces` = [(source rank, samples), ...] in
    sample order."""
    out = []
    leaf = 0
    for c in crossings:
        tensors = []
        for shape, dtype, grad in zip(c.tensor_shapes, c.tensor_dtypes, c.needs_grad):
            if not only_grads or grad:
                parts = []
                for src, samples in pieces:
                    buf = torch.empty((samples, *shape), dtype=dtype)
                    dist.recv(buf, src, tag=tag(micro_batch, direction, leaf))
                    parts.append(buf)
                tensors.append(parts[0] if len(parts) == 1 else torch.cat(parts))
            leaf += 1
        out.append(tensors)
    return out


def send_slices(outbox: Outbox, crossings: List[CrossingValue], tensors: List[List[torch.Tensor]],
                targets: List[Tuple[int, int, int]], micro_batch: int, direction: int,
                only_grads: bool):
    """Sends rows [a, b) of each tensor leaf (or gradient) to each (rank, a, b) target;
    `tensors` holds per crossing value the tensors in leaf order (only those needing
    gradients when `only_grads`)."""
    leaf = 0
    for c, values in zip(crossings, tensors):
        it = iter(values)
        for grad in c.needs_grad:
            if not only_grads or grad:
                t = next(it).detach()
                for dst, a, b in targets:
                    outbox.post([t[a:b].contiguous()], dst, micro_batch, direction, [leaf])
            leaf += 1

