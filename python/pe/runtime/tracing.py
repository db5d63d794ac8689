"""A model as a graph of operators: torch.fx where it traces, the top-level child modules
in order otherwise. The same function runs in the profiler and in every runtime process,
so operator ids (fx node names) agree between graph.txt, the plan and the stages."""

from dataclasses import dataclass, field
from typing import Any, Dict, List

import torch
import torch.fx
from torch.utils._pytree import tree_flatten

from .errors import PeRuntimeError

# Node kinds that run code and become graph.txt operators. `get_attr` nodes (parameters or
# buffers read directly) are folded into the operators that use them.
OPERATOR_OPS = ("call_module", "call_function", "call_method")


@dataclass
class TracedModel:
    gm: torch.fx.GraphModule
    method: str  # "torch.fx" or "module order"
    input_id: str  # the placeholder's name
    operators: List[torch.fx.Node] = field(default_factory=list)  # in execution order
    output_node: Any = None  # the fx node whose value the model returns


def _describe(gm: torch.fx.GraphModule, node: torch.fx.Node) -> str:
    """A graph.txt description. It never starts with `Input` or `__getitem__`, which the
    importer removes, and never holds ' -- '."""
    if node.op == "call_module":
        text = f"{node.target} ({type(gm.get_submodule(node.target)).__name__})"
    elif node.op == "call_function":
        text = f"fn {getattr(node.target, '__name__', str(node.target))}"
    else:
        text = f"method {node.target}"
    return text.replace(" -- ", " - ")


def describe(traced: TracedModel, node: torch.fx.Node) -> str:
    return _describe(traced.gm, node)


def _module_order_graph(model: torch.nn.Module) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    value = graph.placeholder("x")
    for name, _ in model.named_children():
        value = graph.call_module(name, (value,))
    graph.output(value)
    return torch.fx.GraphModule(model, graph)


def _same_output(gm: torch.fx.GraphModule, model: torch.nn.Module, example) -> bool:
    with torch.no_grad():
        try:
            got, want = gm(example), model(example)
        except Exception:
            return False
    return isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor) and \
        got.shape == want.shape and torch.allclose(got, want)


def _trace_graph_module(model: torch.nn.Module, example: torch.Tensor, name: str):
    try:
        return torch.fx.symbolic_trace(model), "torch.fx"
    except Exception as exc:
        fx_error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    if len(list(model.children())) > 0:
        gm = _module_order_graph(model)
        if _same_output(gm, model, example):
            return gm, "module order"
    raise PeRuntimeError(
        f"model '{name}' cannot be traced: torch.fx failed ({fx_error}) and running its "
        "child modules in order does not reproduce its output; make the forward traceable "
        "(no data-dependent control flow) or an nn.Sequential")


def trace_model(model: torch.nn.Module, example: torch.Tensor, name: str) -> TracedModel:
    """Traces `model`; raises PeRuntimeError naming the model when it cannot, or when the
    graph is not one tensor input and one tensor output."""
    gm, method = _trace_graph_module(model, example, name)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != 1:
        raise PeRuntimeError(f"model '{name}': forward must take exactly one input tensor, "
                             f"it takes {len(placeholders)}")
    out = next(n for n in gm.graph.nodes if n.op == "output")
    if not isinstance(out.args[0], torch.fx.Node):
        raise PeRuntimeError(f"model '{name}': forward must return one tensor")
    ops = [n for n in gm.graph.nodes if n.op in OPERATOR_OPS]
    if not ops:
        raise PeRuntimeError(f"model '{name}': the traced graph has no operators")
    return TracedModel(gm, method, placeholders[0].name, ops, out.args[0])


def node_inputs(node: torch.fx.Node) -> List[torch.fx.Node]:
    """The nodes whose values `node` reads, in first-use order, without repeats."""
    seen: Dict[str, torch.fx.Node] = {}
    for arg in node.all_input_nodes:
        seen.setdefault(arg.name, arg)
    return list(seen.values())


def run_node(gm: torch.fx.GraphModule, node: torch.fx.Node, env: Dict[str, Any]):
    """Runs one operator node on the values in `env` (keyed by node name)."""
    args = torch.fx.node.map_arg(node.args, lambda n: env[n.name])
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n.name])
    if node.op == "call_module":
        return gm.get_submodule(node.target)(*args, **kwargs)
    if node.op == "call_function":
        return node.target(*args, **kwargs)
    return getattr(args[0], node.target)(*args[1:], **kwargs)


def fetch_attr(gm: torch.fx.GraphModule, target: str):
    value: Any = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


def evaluate_all(traced: TracedModel, x: torch.Tensor) -> Dict[str, Any]:
    """Every node's value for input `x` (autograd on), keyed by node name."""
    env: Dict[str, Any] = {traced.input_id: x}
    for node in traced.gm.graph.nodes:
        if node.op == "get_attr":
            env[node.name] = fetch_attr(traced.gm, node.target)
        elif node.op in OPERATOR_OPS:
            env[node.name] = run_node(traced.gm, node, env)
    return env


def tensor_leaves(value) -> List[torch.Tensor]:
    leaves, _ = tree_flatten(value)
    return [v for v in leaves if isinstance(v, torch.Tensor)]


def value_bytes(value) -> int:
    return sum(t.numel() * t.element_size() for t in tensor_leaves(value))


def node_parameters(gm: torch.fx.GraphModule, node: torch.fx.Node) -> Dict[str, torch.Tensor]:
    """Parameters an operator owns: its module's, and those it reads through get_attr."""
    params: Dict[str, torch.Tensor] = {}
    if node.op == "call_module":
        for pname, p in gm.get_submodule(node.target).named_parameters():
            params[f"{node.target}.{pname}"] = p
    for arg in node.all_input_nodes:
        if arg.op == "get_attr":
            value = fetch_attr(gm, arg.target)
            if isinstance(value, torch.nn.Parameter):
                params[arg.target] = value
    return params

