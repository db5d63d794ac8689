"""The measured timeline as a Chrome trace in pe-plan's `--trace` format: one process per
stage (its first replica in the first pipeline copy), threads compute, send-forward,
send-backward and all-reduce, events F<m>, B<m>, act <m>, grad <m>, all-reduce, times in
microseconds from the iteration's start."""

import json
import os
from typing import Dict, List

_THREADS = {"forward": 0, "backward": 0, "send-activation": 1, "send-gradient": 2,
            "allreduce": 3}
_THREAD_NAMES = ["compute", "send-forward", "send-backward", "all-reduce"]


def _name(kind: str, m: int) -> str:
    return {"forward": f"F{m}", "backward": f"B{m}", "send-activation": f"act {m}",
            "send-gradient": f"grad {m}"}.get(kind, "all-reduce")


def chrome_trace(events_by_stage: Dict[int, List[tuple]], stage_labels: List[str],
                 title: str) -> Dict:
    """`events_by_stage`: stage -> [(kind, micro-batch, start, end)] in seconds, on one
    clock (time.perf_counter is the system's monotonic clock, shared by processes)."""
    origin = min((e[2] for evs in events_by_stage.values() for e in evs), default=0.0)
    out: List[Dict] = []
    for s, label in enumerate(stage_labels):
        evs = events_by_stage.get(s, [])
        out.append({"name": "process_name", "ph": "M", "pid": s, "tid": 0, "args": {"name": label}})
        out.append({"name": "process_sort_index", "ph": "M", "pid": s, "tid": 0,
                    "args": {"sort_index": s}})
        for t in sorted({_THREADS[e[0]] for e in evs}):
            out.append({"name": "thread_name", "ph": "M", "pid": s, "tid": t,
                        "args": {"name": _THREAD_NAMES[t]}})
    for s in sorted(events_by_stage):
        for kind, m, start, end in sorted(events_by_stage[s], key=lambda e: (_THREADS[e[0]], e[2])):
            cat = "allreduce" if kind == "allreduce" else kind
            out.append({"name": _name(kind, m), "cat": cat, "ph": "X", "pid": s,
                        "tid": _THREADS[kind], "ts": round((start - origin) * 1e6, 3),
                        "dur": round((end - start) * 1e6, 3), "args": {"micro_batch": m}})
    return {"displayTimeUnit": "ms", "otherData": {"title": title}, "traceEvents": out}


def write_trace(path: str, trace: Dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(trace, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)
