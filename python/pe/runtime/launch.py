"""Starting one process per device (of a plan, or of a bandwidth measurement) on this
machine, collecting their reports, and stopping every one of them whatever happens (an
error, a process that dies, a timeout, Ctrl-C)."""

import multiprocessing
import os
import queue
import socket
import sys
import time
import traceback
from typing import Callable, Dict, List

from .errors import PeRuntimeError, UsageError


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


def guarded(rank: int, results, body: Callable[[], None]) -> None:
    """Runs a process's `body`; an exception is reported to the launcher, then the process
    exits with status 1."""
    os.environ["PE_RUN_RANK"] = str(rank)
    try:
        body()
    except Exception as exc:  # the launcher reports it and stops every process
        results.put({"rank": rank, "error": f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc()})
        results.close()
        results.join_thread()
        sys.exit(1)


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
    """Runs `target(rank, *args, results)` in `world` spawned processes, each putting one
    report (a dict with "rank", or "rank" and "error") on `results`. `who(rank)` names a
    process in errors; `pids` lists them afterwards (all stopped by the time run()
    returns or raises)."""

    def __init__(self, world: int, target: Callable, args: tuple, timeout_s: float,
                 who: Callable[[int], str] = lambda rank: f"process {rank}"):
        self.world, self.target, self.args = world, target, args
        self.timeout_s, self.who = timeout_s, who
        self.pids: List[int] = []

    def run(self) -> Dict[int, dict]:
        ctx = multiprocessing.get_context("spawn")
        results = ctx.Queue()
        processes = [ctx.Process(target=self.target, args=(rank, *self.args, results),
                                 daemon=True) for rank in range(self.world)]
        try:
            for p in processes:
                p.start()
                self.pids.append(p.pid)
            return self._collect(processes, results)
        finally:
            _stop(processes)

    def _collect(self, processes, results) -> Dict[int, dict]:
        reports: Dict[int, dict] = {}
        deadline = time.monotonic() + self.timeout_s
        while len(reports) < len(processes):
            try:
                report = results.get(timeout=0.2)
            except queue.Empty:
                self._check_alive(processes, reports, set(), (None, 0))
                if time.monotonic() > deadline:
                    raise PeRuntimeError(f"the run did not finish within {self.timeout_s:g} s "
                                         "(--timeout); every process was stopped")
                continue
            if "error" in report:
                self._blame(processes, reports, report)
            reports[report["rank"]] = report
        return reports

    def _blame(self, processes, reports, report) -> None:
        """A process reported an error. When another one died without a word (the usual
        cause of a lost connection), name that one instead: wait a moment for it."""
        until = time.monotonic() + 2.0
        while time.monotonic() < until:
            self._check_alive(processes, reports, {report["rank"]}, (None, 0, 1))
            time.sleep(0.05)
        raise PeRuntimeError(f"{self.who(report['rank'])} failed: {report['error']}")

    def _check_alive(self, processes, reports, reported, fine) -> None:
        """Raises for a process that ended with an exit code outside `fine` without a
        report (1 is fine while other processes' error reports may still be queued)."""
        for rank, p in enumerate(processes):
            if rank not in reports and rank not in reported and p.exitcode not in fine:
                raise PeRuntimeError(f"{self.who(rank)} died with exit code {p.exitcode}; "
                                     "every other process was stopped")
