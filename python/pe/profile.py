"""`python3 -m pe.profile`: profile a PyTorch model on this CPU into a graph.txt that
pe-plan reads (forward and backward time per operator, activation and parameter bytes,
the graph's edges), with the profile batch size in `<out>.meta.json`.

    python3 -m pe.profile --model examples/python/mlp.py:make --batch 32 --out mlp.txt

From Python: `pe.profile.profile_model("examples/python/mlp.py:make", 32, "mlp.txt")`."""

import argparse
import sys
from dataclasses import dataclass
from typing import List

import torch

from pe.runtime.data import random_like_batch
from pe.runtime.errors import PeRuntimeError, UsageError
from pe.runtime.factory import build_model
from pe.runtime.graphtxt import OperatorProfile, graph_text, write_profile
from pe.runtime.timing import time_operator
from pe.runtime.tracing import (describe, evaluate_all, node_inputs, node_parameters,
                                trace_model, value_bytes)


@dataclass
class ProfileResult:
    graph_path: str
    meta_path: str
    batch: int
    method: str
    operators: List[OperatorProfile]


def _edges(traced) -> List[tuple]:
    keep = {traced.input_id} | {n.name for n in traced.operators}
    return [(src.name, node.name) for node in traced.operators for src in node_inputs(node)
            if src.name in keep]


def profile_model(model: str, batch: int, out: str, runs: int = 10, warmup: int = 3,
                  threads: int = 1, seed: int = 0) -> ProfileResult:
    """Profiles MODULE:FACTORY `model` at batch size `batch` and writes `out` and its side
    file. Raises PeRuntimeError for a bad factory, an untraceable model or a bad path."""
    if batch < 1 or runs < 1 or warmup < 0 or threads < 1:
        raise UsageError("--batch, --runs and --threads must be >= 1, --warmup >= 0")
    torch.set_num_threads(threads)
    spec = build_model(model, seed)
    traced = trace_model(spec.model, spec.example, model)
    x = random_like_batch(spec.example, batch, torch.Generator().manual_seed(seed))
    env = evaluate_all(traced, x)
    operators = []
    for node in traced.operators:
        timed = time_operator(traced, node, env, warmup, runs)
        params = node_parameters(traced.gm, node)
        operators.append(OperatorProfile(
            node.name, describe(traced, node), timed.forward_ms, timed.backward_ms,
            value_bytes(env[node.name]), value_bytes(list(params.values()))))
    text = graph_text(traced.input_id, value_bytes(x), operators, _edges(traced))
    meta = {"profile_batch_size": batch, "model": model, "trace": traced.method,
            "threads": threads, "runs": runs, "warmup": warmup, "seed": seed,
            "operators": len(operators), "torch": torch.__version__}
    meta_path = write_profile(out, text, meta)
    return ProfileResult(out, meta_path, batch, traced.method, operators)


def _summary(r: ProfileResult, threads: int) -> str:
    fwd = sum(o.forward_ms for o in r.operators)
    bwd = sum(o.backward_ms for o in r.operators)
    params = sum(o.parameter_bytes for o in r.operators)
    return (f"profiled {len(r.operators)} operators ({r.method}) at batch {r.batch} on "
            f"{threads} thread(s): forward {fwd:.3f} ms, backward {bwd:.3f} ms, "
            f"parameters {params / 1e6:.3f} MB\n"
            f"wrote {r.graph_path} and {r.meta_path} (profile batch size {r.batch})\n"
            f"plan it: pe-plan --profile {r.graph_path} --pbs {r.batch} --devices 1,2 "
            f"--gbs {r.batch}")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python3 -m pe.profile", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="MODULE:FACTORY (MODULE a dotted name or a "
                   ".py path); the factory returns (model, example_input[, loss_fn])")
    p.add_argument("--batch", type=int, required=True, help="profile batch size (samples)")
    p.add_argument("--out", required=True, help="graph.txt to write (and OUT.meta.json)")
    p.add_argument("--runs", type=int, default=10, help="timed runs per operator (median)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--seed", type=int, default=0, help="seed of weights and data")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        result = profile_model(args.model, args.batch, args.out, args.runs, args.warmup,
                               args.threads, args.seed)
    except PeRuntimeError as exc:
        print(f"pe.profile: error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(_summary(result, args.threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
