"""A plan's stages as torch.fx modules: each stage runs the operators the plan gives it
(by the operator ids the profiler wrote into graph.txt) and exchanges the values that
cross its cuts. A value crosses every cut between the stage that makes it and the last
stage that reads it (pass-through stages forward it), as pe-plan's importer counts bytes."""

from dataclasses import dataclass
from typing import Any, Dict, List

import torch
import torch.fx
from torch.utils._pytree import tree_flatten

from .errors import PeRuntimeError
from .plans import RunPlan
from .tracing import TracedModel, node_parameters


@dataclass
class CrossingValue:
    """A value sent between stages: its pytree structure, its leaves (tensors are sent,
    split along dimension 0; other leaves are constants), and which tensor leaves carry
    gradients back."""

    name: str
    spec: Any
    constants: List[Any]  # per leaf: None for a tensor leaf, else the constant
    tensor_shapes: List[tuple]  # per tensor leaf, without the batch dimension
    tensor_dtypes: List[torch.dtype]
    needs_grad: List[bool]  # per tensor leaf


@dataclass
class Stage:
    module: torch.fx.GraphModule
    receives: List[CrossingValue]  # the module's inputs, in order
    sends: List[CrossingValue]  # the module's outputs (last stage: the model's output)
    parameters: Dict[str, torch.nn.Parameter]


def check_operators(traced: TracedModel, plan: RunPlan, source: str) -> Dict[str, int]:
    """Stage of every operator; PeRuntimeError when the plan names operators the model
    does not have, or leaves some out, or names one twice."""
    known = {n.name for n in traced.operators}
    stage_of: Dict[str, int] = {}
    for s, stage in enumerate(plan.stages):
        for op in stage.operator_ids:
            if op not in known:
                raise PeRuntimeError(
                    f"{source}: stage {s} runs operator '{op}', but the model has no operator "
                    f"of that id; was the plan made from this model's graph.txt? "
                    f"(the model's operators: {', '.join(sorted(known)[:8])}...)")
            if op in stage_of:
                raise PeRuntimeError(f"{source}: operator '{op}' is in stages {stage_of[op]} "
                                     f"and {s}")
            stage_of[op] = s
    missing = [n.name for n in traced.operators if n.name not in stage_of]
    if missing:
        raise PeRuntimeError(f"{source}: the plan's stages leave out the model's operators "
                             f"{', '.join(missing[:8])}; was the plan made from another model?")
    return stage_of


def _crossing(name: str, value, batch: int, where: str) -> CrossingValue:
    leaves, spec = tree_flatten(value)
    constants, shapes, dtypes, grads = [], [], [], []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            if leaf.dim() == 0 or leaf.shape[0] != batch:
                raise PeRuntimeError(
                    f"value '{name}' crossing {where} has shape {tuple(leaf.shape)}, without "
                    f"the batch ({batch}) as its first dimension; the runtime splits "
                    "micro-batches along dimension 0")
            constants.append(None)
            shapes.append(tuple(leaf.shape[1:]))
            dtypes.append(leaf.dtype)
            grads.append(bool(leaf.requires_grad))
        else:
            constants.append(leaf)
    return CrossingValue(name, spec, constants, shapes, dtypes, grads)


def _last_reader(traced: TracedModel, stage_of: Dict[str, int], stages: int) -> Dict[str, int]:
    last: Dict[str, int] = {}
    for node in traced.operators:
        for arg in node.all_input_nodes:
            last[arg.name] = max(last.get(arg.name, -1), stage_of[node.name])
    last[traced.output_node.name] = stages - 1
    return last


def _stage_module(traced: TracedModel, receives: List[str], ops: List[torch.fx.Node],
                  outputs: List[str], last: bool) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    env: Dict[str, torch.fx.Node] = {name: graph.placeholder(name) for name in receives}

    def lookup(n: torch.fx.Node) -> torch.fx.Node:
        if n.name not in env:  # a get_attr node: copied into each stage that reads it
            env[n.name] = graph.node_copy(n)
        return env[n.name]

    for node in ops:
        env[node.name] = graph.node_copy(node, lookup)
    graph.output(env[outputs[0]] if last else tuple(env[o] for o in outputs))
    return torch.fx.GraphModule(traced.gm, graph)


def build_stages(traced: TracedModel, plan: RunPlan, example_env: Dict[str, Any], batch: int,
                 source: str = "plan") -> List[Stage]:
    """One Stage per plan stage. `example_env` holds every node's value for an example
    input of `batch` samples (shapes, dtypes and which values need gradients)."""
    stage_of = check_operators(traced, plan, source)
    count = len(plan.stages)
    last_reader = _last_reader(traced, stage_of, count)
    made = {traced.input_id: -1, **stage_of}
    order = [traced.input_id] + [n.name for n in traced.operators]
    crossings: Dict[str, CrossingValue] = {}
    stages, owner = [], {}
    for s in range(count):
        receives = [v for v in order if v in last_reader and made[v] < s <= last_reader[v]]
        sends = [v for v in order if v in last_reader and made[v] <= s < last_reader[v]]
        if s == count - 1:
            sends = [traced.output_node.name]
        for v in set(receives) | set(sends):
            if v not in crossings:
                crossings[v] = _crossing(v, example_env[v], batch, f"stage {s}'s boundary")
        ops = [n for n in traced.operators if stage_of[n.name] == s]
        module = _stage_module(traced, receives, ops, sends, s == count - 1)
        params: Dict[str, torch.nn.Parameter] = {}
        for node in ops:
            for pname, p in node_parameters(traced.gm, node).items():
                if id(p) in owner and owner[id(p)] != s:
                    raise PeRuntimeError(
                        f"{source}: parameter '{pname}' is used by stages {owner[id(p)]} and "
                        f"{s}; shared weights must stay in one stage")
                owner[id(p)] = s
                params[pname] = p
        stages.append(Stage(module, [crossings[v] for v in receives],
                            [crossings[v] for v in sends], params))
    return stages
