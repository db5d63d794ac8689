"""Writing a profile as PipeDream's graph.txt (the format pe-plan imports unchanged) and
its side file `<graph>.meta.json`, which records the profile batch size (pe-plan's --pbs)
and how the profile was taken. graph.txt has no comment lines, so the batch size lives in
the side file, and also in the file name when it has the form `NAME-pbs-B.txt`."""

import json
import os
import re
from dataclasses import dataclass
from typing import Dict, List

from .errors import PeRuntimeError

META_SUFFIX = ".meta.json"


@dataclass
class OperatorProfile:
    id: str
    description: str
    forward_ms: float
    backward_ms: float
    activation_bytes: int
    parameter_bytes: int


def _node_line(node_id: str, description: str, forward_ms: float, backward_ms: float,
               activation: int, parameters: int) -> str:
    return (f"{node_id} -- {description} -- forward_compute_time={forward_ms:.6f}, "
            f"backward_compute_time={backward_ms:.6f}, activation_size={activation}, "
            f"parameter_size={parameters}")


def graph_text(input_id: str, input_bytes: int, operators: List[OperatorProfile],
               edges: List[tuple]) -> str:
    """The model input first (as `Input0`, which pe-plan drops), then one line per operator
    in execution order, then the edges, indented."""
    lines = [_node_line(input_id, "Input0", 0.0, 0.0, input_bytes, 0)]
    lines += [_node_line(o.id, o.description, o.forward_ms, o.backward_ms, o.activation_bytes,
                         o.parameter_bytes) for o in operators]
    lines += [f"\t{src} -- {dst}" for src, dst in edges]
    return "\n".join(lines) + "\n"


def read_operators(path: str) -> List[OperatorProfile]:
    """The operators of a graph.txt this module wrote (the model input left out)."""
    operators = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(" -- ")
            if line[:1].isspace() or len(fields) < 3 or fields[1].startswith("Input"):
                continue
            values = dict(item.split("=", 1) for item in fields[2].split(", "))
            operators.append(OperatorProfile(
                fields[0], fields[1], float(values["forward_compute_time"]),
                float(values["backward_compute_time"]), int(float(values["activation_size"])),
                int(float(values["parameter_size"]))))
    return operators


def write_profile(path: str, text: str, meta: Dict) -> str:
    """Writes graph.txt and its side file; returns the side file's path."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise PeRuntimeError(f"--out '{path}': folder '{folder}' does not exist")
    meta_path = path + META_SUFFIX
    for target, content in ((path, text), (meta_path, json.dumps(meta, indent=2) + "\n")):
        tmp = target + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(content)
        os.replace(tmp, target)
    return meta_path


def read_meta(graph_path: str) -> Dict:
    """The side file of a graph.txt, or {} when there is none."""
    meta_path = graph_path + META_SUFFIX
    if not os.path.exists(meta_path):
        return {}
    try:
        with open(meta_path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        raise PeRuntimeError(f"{meta_path}: not a readable profile side file: {exc}") from exc


def profile_batch_size(graph_path: str) -> float:
    """The profile batch size: from the side file, else from a `-pbs-B` file name."""
    meta = read_meta(graph_path)
    if "profile_batch_size" in meta:
        return float(meta["profile_batch_size"])
    found = re.search(r"-pbs-(\d+(?:\.\d+)?)", os.path.basename(graph_path))
    if found:
        return float(found.group(1))
    raise PeRuntimeError(f"{graph_path}: profile batch size unknown: no {META_SUFFIX} side "
                         "file and no '-pbs-B' in the file name")
