"""Timing one operator's forward and backward on CPU: warm-up runs, then the median of
N timed runs, on fresh copies of its inputs each time."""

import statistics
import time
from dataclasses import dataclass
from typing import Any, Dict, List

import torch
import torch.fx
from torch.utils._pytree import tree_map

from .tracing import TracedModel, run_node, tensor_leaves


@dataclass
class OperatorTime:
    forward_ms: float
    backward_ms: float


def _fresh(value):
    """A copy of `value` for one run: tensors that needed gradients become clones of new
    leaves (so in-place operators and backward both work), others plain copies."""

    def copy(v):
        if not isinstance(v, torch.Tensor):
            return v
        if v.requires_grad:
            return v.detach().clone().requires_grad_(True).clone()
        return v.detach().clone()

    return tree_map(copy, value)


def _median_ms(samples: List[float]) -> float:
    return statistics.median(samples) * 1e3


def time_operator(traced: TracedModel, node: torch.fx.Node, env: Dict[str, Any], warmup: int,
                  runs: int) -> OperatorTime:
    """Forward: the operator alone. Backward: autograd from its outputs (gradients of ones)
    to its inputs and parameters. Parameter gradients are cleared afterwards."""

    def inputs():
        return {n.name: _fresh(env[n.name]) for n in node.all_input_nodes}

    forward: List[float] = []
    backward: List[float] = []
    for i in range(warmup + runs):
        local = inputs()
        start = time.perf_counter()
        out = run_node(traced.gm, node, local)
        forward_end = time.perf_counter()
        leaves = [t for t in tensor_leaves(out) if t.requires_grad]
        grads = [torch.ones_like(t) for t in leaves]
        backward_start = time.perf_counter()
        if leaves:
            torch.autograd.backward(leaves, grads)
        backward_end = time.perf_counter()
        if i >= warmup:
            forward.append(forward_end - start)
            backward.append(backward_end - backward_start if leaves else 0.0)
    traced.gm.zero_grad(set_to_none=True)
    return OperatorTime(_median_ms(forward), _median_ms(backward))
