"""One runtime process: a replica of one stage in one pipeline copy. It builds the model
from the factory (same seed everywhere), keeps its stage, runs the plan's schedule over
gloo for every iteration, all-reduces its stage's gradients in the stage's own process
group (every replica of the stage in every copy), steps SGD, and reports its timings,
events and (replica 0 of copy 0) its parameters to the launcher."""

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Dict, List, Optional

import torch
import torch.distributed as dist

from .comm import BACKWARD, FORWARD, Outbox, rebuild, receive_pieces, send_slices
from .data import iteration_batch
from .factory import build_model
from .launch import guarded
from .partition import Stage, build_stages
from .plans import RunPlan
from .samples import overlaps, sample_range
from .schedule import stage_operations
from .tracing import evaluate_all, tensor_leaves, trace_model


@dataclass
class RunConfig:
    model: str
    plan: RunPlan
    port: int
    iterations: int
    warmup: int
    threads: int
    lr: float
    seed: int
    timeout_s: float


class StageRunner:
    """The schedule of one stage replica for one iteration."""

    def __init__(self, cfg: RunConfig, stage: Stage, rank: int, loss_fn, group):
        self.cfg, self.stage, self.loss_fn, self.group = cfg, stage, loss_fn, group
        self.plan = cfg.plan
        self.copy, self.s, self.replica = self.plan.position(rank)
        self.last = self.s == len(self.plan.stages) - 1
        self.params = list(dict.fromkeys(stage.parameters.values()))
        self.optimizer = torch.optim.SGD(self.params, lr=cfg.lr) if self.params else None

    def _route(self, other: int, m: int):
        """(rank, samples, local start, local end) per overlapping replica of stage `other`."""
        lo, _ = sample_range(self.plan, self.copy, self.s, self.replica, m)
        return [(self.plan.rank(self.copy, other, r), b - a, a - lo, b - lo)
                for r, (a, b) in overlaps(self.plan, self.copy, self.s, self.replica, other, m)]

    def _forward(self, m: int, batch, saved: Dict, outbox: Outbox):
        lo, hi = sample_range(self.plan, self.copy, self.s, self.replica, m)
        if self.s == 0:
            received = [[batch[0][lo:hi]]]
        else:
            pieces = [(rank, n) for rank, n, _, _ in self._route(self.s - 1, m)]
            received = receive_pieces(self.stage.receives, pieces, m, FORWARD, False)
        leaves = []
        for crossing, tensors in zip(self.stage.receives, received):
            for t, grad in zip(tensors, crossing.needs_grad):
                if grad:
                    t.requires_grad_(True)
                    leaves.append(t)
        args = [rebuild(c, t) for c, t in zip(self.stage.receives, received)]
        out = self.stage.module(*args)
        if self.last:
            share = (hi - lo) / self.plan.global_batch  # summed over chunks: the batch mean
            saved[m] = (leaves, self.loss_fn(out, batch[1][lo:hi]) * share, None)
            return
        outs = [tensor_leaves(v) for v in out]
        targets = [(rank, a, b) for rank, _, a, b in self._route(self.s + 1, m)]
        send_slices(outbox, self.stage.sends, outs, targets, m, FORWARD, False)
        saved[m] = (leaves, None, outs)

    def _backward(self, m: int, saved: Dict, outbox: Outbox):
        leaves, loss, outs = saved.pop(m)
        if self.last:
            loss.backward()
        else:
            pieces = [(rank, n) for rank, n, _, _ in self._route(self.s + 1, m)]
            grads = receive_pieces(self.stage.sends, pieces, m, BACKWARD, True)
            roots, root_grads = [], []
            for crossing, tensors, gs in zip(self.stage.sends, outs, grads):
                needing = [t for t, g in zip(tensors, crossing.needs_grad) if g]
                for t, g in zip(needing, gs):
                    if t.requires_grad:
                        roots.append(t)
                        root_grads.append(g)
            if roots:
                torch.autograd.backward(roots, root_grads)
        if self.s > 0:
            grads_back, it = [], iter(leaves)
            for crossing in self.stage.receives:
                grads_back.append([_grad_or_zeros(next(it)) for g in crossing.needs_grad if g])
            targets = [(rank, a, b) for rank, _, a, b in self._route(self.s - 1, m)]
            send_slices(outbox, self.stage.receives, grads_back, targets, m, BACKWARD, True)

    def _allreduce(self):
        if self.group is None or not self.params:
            return
        grads = [_grad_or_zeros(p) for p in self.params]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat, group=self.group)
        at = 0
        for p, g in zip(self.params, grads):
            p.grad = flat[at:at + g.numel()].view_as(g).clone()
            at += g.numel()

    def iteration(self, data) -> List[tuple]:
        """Runs one iteration; returns its events (kind, micro-batch, start, end)."""
        outbox, saved, events = Outbox(), {}, []
        ops = stage_operations(self.plan.schedule, self.plan.micro_batches,
                               len(self.plan.stages), self.s)
        for kind, m in ops:
            lo, hi = sample_range(self.plan, self.copy, self.s, self.replica, m)
            if hi == lo:
                continue
            start = time.perf_counter()
            if kind == "F":
                self._forward(m, data, saved, outbox)
            else:
                self._backward(m, saved, outbox)
            events.append(("forward" if kind == "F" else "backward", m, start, time.perf_counter()))
            outbox.poll()
        outbox.drain()
        start = time.perf_counter()
        self._allreduce()
        if self.group is not None and self.params:
            events.append(("allreduce", -1, start, time.perf_counter()))
        if self.optimizer is not None:
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
        return events + outbox.events


def _grad_or_zeros(t: torch.Tensor) -> torch.Tensor:
    return t.grad if t.grad is not None else torch.zeros_like(t)


def stage_groups(plan: RunPlan) -> List[Optional[object]]:
    """A process group per stage with more than one replica in all copies; every process
    creates every group, in the same order, as torch.distributed requires."""
    groups = []
    for s, stage in enumerate(plan.stages):
        ranks = [plan.rank(c, s, r) for c in range(plan.replicas) for r in range(stage.width)]
        groups.append(dist.new_group(ranks) if len(ranks) > 1 else None)
    return groups


def _run(rank: int, cfg: RunConfig, results) -> None:
    torch.set_num_threads(cfg.threads)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{cfg.port}", rank=rank,
                            world_size=cfg.plan.world_size,
                            timeout=timedelta(seconds=cfg.timeout_s))
    spec = build_model(cfg.model, cfg.seed)
    traced = trace_model(spec.model, spec.example, cfg.model)
    example_env = evaluate_all(traced, spec.example)
    stages = build_stages(traced, cfg.plan, example_env, spec.example.shape[0])
    groups = stage_groups(cfg.plan)
    copy, s, replica = cfg.plan.position(rank)
    runner = StageRunner(cfg, stages[s], rank, spec.loss_fn, groups[s])
    output = example_env[traced.output_node.name]
    spans, events = [], []
    for it in range(cfg.warmup + cfg.iterations):
        data = iteration_batch(spec.example, output, cfg.plan.global_batch, cfg.seed, it)
        dist.barrier()
        start = time.perf_counter()
        events = runner.iteration(data)
        spans.append((start, time.perf_counter()))
    dist.barrier()
    params = None
    if copy == 0 and replica == 0:
        # numpy arrays: torch tensors would travel as shared-memory handles that die with us
        params = {name: p.detach().numpy().copy() for name, p in stages[s].parameters.items()}
    results.put({"rank": rank, "copy": copy, "stage": s, "replica": replica, "spans": spans,
                 "events": events, "params": params})
    dist.destroy_process_group()


def worker_main(rank: int, cfg: RunConfig, results) -> None:
    """Entry point of a spawned process (PE_RUN_RANK holds its rank)."""
    guarded(rank, results, lambda: _run(rank, cfg, results))
