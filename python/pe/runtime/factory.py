"""Loading a model factory given as MODULE:FACTORY.

The factory takes no arguments and returns `(model, example_input)` or
`(model, example_input, loss_fn)`: a torch.nn.Module, one example input tensor whose first
dimension is the batch, and optionally `loss_fn(output, target)` that averages over the
samples (the default is mean squared error against a target of the output's shape)."""

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional

import torch

from .errors import PeRuntimeError


@dataclass
class ModelSpec:
    """What a factory returned, checked."""

    name: str  # the MODULE:FACTORY text
    model: torch.nn.Module
    example: torch.Tensor
    loss_fn: Callable


def default_loss(output, target):
    return torch.nn.functional.mse_loss(output, target)


def _import_module(module_text: str):
    """A module by dotted name, or a file path ending in .py."""
    if module_text.endswith(".py"):
        if not os.path.isfile(module_text):
            raise PeRuntimeError(f"--model: no such file '{module_text}'")
        name = "pe_model_" + os.path.splitext(os.path.basename(module_text))[0]
        spec = importlib.util.spec_from_file_location(name, module_text)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(module_text)


def load_factory(text: str) -> Callable:
    """The callable named by MODULE:FACTORY (MODULE a dotted name or a .py path)."""
    module_text, sep, attr = text.rpartition(":")
    if not sep or not module_text or not attr:
        raise PeRuntimeError(
            f"--model '{text}': expected MODULE:FACTORY, e.g. examples/python/mlp.py:make "
            "or mymodels.mlp:make")
    try:
        module = _import_module(module_text)
    except PeRuntimeError:
        raise
    except Exception as exc:  # the user's module failed to import
        raise PeRuntimeError(f"--model '{text}': cannot import '{module_text}': "
                             f"{type(exc).__name__}: {exc}") from exc
    factory = getattr(module, attr, None)
    if factory is None:
        raise PeRuntimeError(f"--model '{text}': module '{module_text}' has no '{attr}'")
    if not callable(factory):
        raise PeRuntimeError(f"--model '{text}': '{attr}' is not callable")
    return factory


def build_model(text: str, seed: int = 0) -> ModelSpec:
    """Calls the factory with torch's generator seeded, so every process gets the same
    initial weights, and checks what it returned."""
    factory = load_factory(text)
    torch.manual_seed(seed)
    try:
        made = factory()
    except Exception as exc:
        raise PeRuntimeError(f"--model '{text}': the factory raised "
                             f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(made, tuple) or len(made) not in (2, 3):
        raise PeRuntimeError(f"--model '{text}': the factory must return (model, example_input"
                             f"[, loss_fn]), got {type(made).__name__}")
    model, example = made[0], made[1]
    loss_fn: Optional[Callable] = made[2] if len(made) == 3 else None
    if not isinstance(model, torch.nn.Module):
        raise PeRuntimeError(f"--model '{text}': the factory's first value must be a "
                             f"torch.nn.Module, got {type(model).__name__}")
    if not isinstance(example, torch.Tensor) or example.dim() < 1:
        raise PeRuntimeError(f"--model '{text}': the example input must be a tensor whose "
                             f"first dimension is the batch, got {type(example).__name__}")
    if loss_fn is not None and not callable(loss_fn):
        raise PeRuntimeError(f"--model '{text}': the loss function is not callable")
    return ModelSpec(text, model, example, loss_fn or default_loss)
