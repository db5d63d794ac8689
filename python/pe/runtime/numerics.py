"""The numerics check: after the run's iterations, the parameters of the pipeline equal
those of plain single-process training (full batch, same data, same SGD) within a
tolerance on the largest absolute difference."""

from dataclasses import dataclass
from typing import Dict

import torch

from .data import iteration_batch
from .factory import build_model
from .tracing import evaluate_all, trace_model

DEFAULT_TOLERANCE = 1e-5


@dataclass
class NumericsCheck:
    max_abs_diff: float
    tolerance: float
    iterations: int
    parameters: int

    @property
    def ok(self) -> bool:
        return self.max_abs_diff <= self.tolerance


def reference_parameters(model: str, gbs: int, iterations: int, lr: float,
                         seed: int) -> Dict[str, torch.Tensor]:
    """Parameters after `iterations` single-process SGD steps on the run's data."""
    spec = build_model(model, seed)
    traced = trace_model(spec.model, spec.example, model)
    output = evaluate_all(traced, spec.example)[traced.output_node.name]
    optimizer = torch.optim.SGD(traced.gm.parameters(), lr=lr)
    for it in range(iterations):
        inputs, targets = iteration_batch(spec.example, output, gbs, seed, it)
        optimizer.zero_grad(set_to_none=True)
        spec.loss_fn(traced.gm(inputs), targets).backward()
        optimizer.step()
    return {name: p.detach() for name, p in traced.gm.named_parameters()}


def compare_parameters(measured: Dict[str, torch.Tensor], reference: Dict[str, torch.Tensor],
                       tolerance: float, iterations: int) -> NumericsCheck:
    missing = set(reference) - set(measured)
    if missing:
        raise ValueError(f"parameters not reported by any stage: {sorted(missing)[:5]}")
    worst = max((float((measured[n] - p).abs().max()) for n, p in reference.items()
                 if p.numel()), default=0.0)
    return NumericsCheck(worst, tolerance, iterations, len(reference))
