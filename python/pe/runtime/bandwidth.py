"""This host's gloo bandwidth, measured, as a pe-plan cluster: N single-device "machines"
(one CPU process each) whose point-to-point and all-reduce bandwidths are what gloo
reaches on 127.0.0.1 for messages of the model's size."""

import statistics
import time
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist

from .launch import Launch, free_port, guarded


@dataclass
class Bandwidth:
    p2p_GBps: float
    allreduce_GBps: float
    p2p_bytes: int
    allreduce_bytes: int
    processes: int


def _measure(rank: int, world: int, port: int, p2p_bytes: int, allreduce_bytes: int, repeats: int,
             results) -> None:
    def body():
        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=world, timeout=timedelta(seconds=60))
        message = torch.zeros(max(1, p2p_bytes // 4))
        p2p = []
        for _ in range(repeats + 1):  # ping-pong between ranks 0 and 1; the first warms up
            dist.barrier()
            start = time.perf_counter()
            if rank == 0:
                dist.send(message, 1)
                dist.recv(message, 1)
            elif rank == 1:
                dist.recv(message, 0)
                dist.send(message, 0)
            p2p.append((time.perf_counter() - start) / 2)
        grads = torch.zeros(max(1, allreduce_bytes // 4))
        reduce = []
        for _ in range(repeats + 1):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(grads)
            reduce.append(time.perf_counter() - start)
        results.put({"rank": rank, "p2p_s": statistics.median(p2p[1:]),
                     "allreduce_s": statistics.median(reduce[1:])})
        dist.destroy_process_group()

    guarded(rank, results, body)


def measure_bandwidth(processes: int, p2p_bytes: int, allreduce_bytes: int,
                      repeats: int = 10) -> Bandwidth:
    """Gloo bandwidth between `processes` (>= 2) processes: point-to-point bytes / time of
    one send, and ring all-reduce 2 (n-1)/n x bytes / time, as pe-plan costs them."""
    p2p_bytes, allreduce_bytes = max(p2p_bytes, 4), max(allreduce_bytes, 4)
    reports = Launch(processes, _measure, (processes, free_port(), p2p_bytes, allreduce_bytes,
                                           repeats), 120.0).run()
    p2p_s = reports[0]["p2p_s"]
    allreduce_s = max(r["allreduce_s"] for r in reports.values())
    ring = 2 * (processes - 1) / processes
    return Bandwidth(p2p_bytes / p2p_s / 1e9, ring * allreduce_bytes / allreduce_s / 1e9,
                     p2p_bytes, allreduce_bytes, processes)


def cluster_yaml(bw: Bandwidth, memory_gb: float = 16.0) -> str:
    return (f"# this host measured with gloo on 127.0.0.1: point-to-point {bw.p2p_bytes} B, "
            f"all-reduce {bw.allreduce_bytes} B over {bw.processes} processes\n"
            "machines:\n"
            f"  - count: {bw.processes}\n"
            "    gpus: 1\n"
            "    type: CPU process\n"
            "bandwidth_GBps:\n"
            f"  intra: {bw.p2p_GBps:.6g}\n"
            f"  inter_allreduce: {bw.allreduce_GBps:.6g}\n"
            f"  inter_p2p: {bw.p2p_GBps:.6g}\n"
            f"memory_GB: {memory_gb:g}\n")
