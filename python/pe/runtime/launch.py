"""Starting one process per device of a plan on this machine, collecting their reports,
and stopping every one of them whatever happens (an error, a process that dies, a
timeout, Ctrl-C)."""

import multiprocessing
import os
import queue
import socket
import time
from typing import Dict, List

from .errors import PeRuntimeError, UsageError
from .worker import RunConfig, worker_main


def default_max_processes() -> int:
    """The most processes a run may start: 2 per core, at least 4."""
    return max(4, 2 * (os.cpu_count() or 1))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_port(port: int) -> None:
    if not 0 < port < 65536:
        raise UsageError(f"--port {port}: expected 1 to 65535, or 0 for a free port")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError as exc:
            raise PeRuntimeError(f"--port {port}: 127.0.0.1:{port} is in use ({exc.strerror}); "
                                 "pass another port or 0 for a free one") from exc


def check_world(world: int, max_processes: int) -> None:
    if world > max_processes:
        raise PeRuntimeError(
            f"the plan needs {world} processes (one per device) but this host allows at most "
            f"{max_processes} (--max-processes; default 2 per core, at least 4)")


def _who(cfg: RunConfig, rank: int) -> str:
    copy, stage, replica = cfg.plan.position(rank)
    return f"process {rank} (stage {stage}, copy {copy}, replica {replica})"


def _stop(processes) -> None:
    for p in processes:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 5
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()


class Launch:
    """Runs `cfg` on `cfg.plan.world_size` processes; `pids` lists them afterwards (all
    stopped by the time run() returns or raises)."""

    def __init__(self, cfg: RunConfig, max_processes: int):
        check_world(cfg.plan.world_size, max_processes)
        self.cfg = cfg
        self.pids: List[int] = []

    def run(self) -> Dict[int, dict]:
        ctx = multiprocessing.get_context("spawn")
        results = ctx.Queue()
        processes = [ctx.Process(target=worker_main, args=(rank, self.cfg, results), daemon=True)
                     for rank in range(self.cfg.plan.world_size)]
        try:
            for p in processes:
                p.start()
                self.pids.append(p.pid)
            return self._collect(processes, results)
        finally:
            _stop(processes)

    def _collect(self, processes, results) -> Dict[int, dict]:
        reports: Dict[int, dict] = {}
        deadline = time.monotonic() + self.cfg.timeout_s
        while len(reports) < len(processes):
            try:
                report = results.get(timeout=0.2)
            except queue.Empty:
                self._check_alive(processes, reports)
                if time.monotonic() > deadline:
                    raise PeRuntimeError(f"the run did not finish within {self.cfg.timeout_s:g} s "
                                         "(--timeout); every process was stopped")
                continue
            if "error" in report:
                raise PeRuntimeError(f"{_who(self.cfg, report['rank'])} failed: {report['error']}")
            reports[report["rank"]] = report
        return reports

    def _check_alive(self, processes, reports) -> None:
        for rank, p in enumerate(processes):
            if rank not in reports and p.exitcode is not None and p.exitcode != 0:
                raise PeRuntimeError(f"{_who(self.cfg, rank)} died with exit code {p.exitcode}; "
                                     "every other process was stopped")
