"""Planning and costing through the Python API contract (docs/python-api.md):
`pe.plan(profile, cluster, gbs, **settings)` and `pe.evaluate(profile, cluster, gbs,
layout, **settings)`. When the compiled module is not built (no `pe.plan`), the same
dicts come from the pe-plan program (`PE_PLAN_BIN`, else build/planner/cli/pe-plan), whose
`--format json` the API mirrors."""

import json
import os
import subprocess
from typing import Dict, List

from .errors import PeRuntimeError

_DEFAULT_BINARY = os.path.join("build", "planner", "cli", "pe-plan")


def pe_plan_binary() -> str:
    """$PE_PLAN_BIN, else $PE_PLAN (as ctest sets it), else build/planner/cli/pe-plan."""
    path = os.environ.get("PE_PLAN_BIN") or os.environ.get("PE_PLAN") or _DEFAULT_BINARY
    if not os.access(path, os.X_OK):
        raise PeRuntimeError(f"pe-plan not found at '{path}': build the project or set "
                             "PE_PLAN_BIN")
    return path


def _api():
    try:
        import pe  # the package; pe.plan exists once pe._core is built
    except ImportError:
        return None
    return pe if hasattr(pe, "plan") and hasattr(pe, "evaluate") else None


def _flags(settings: Dict) -> List[str]:
    out = []
    for key, value in settings.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif value is not False and value is not None:
            out += [flag, str(value)]
    return out


def _cli(profile: str, cluster: str, gbs: int, extra: List[str]) -> Dict:
    yaml = cluster.endswith((".yml", ".yaml"))
    where = ["--cluster", cluster] if yaml else ["--devices", cluster]
    cmd = [pe_plan_binary(), "--profile", profile, *where, "--gbs", str(gbs), "--format", "json",
           *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PeRuntimeError(f"pe-plan failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def plan(profile: str, cluster: str, gbs: int, **settings) -> Dict:
    """One point of pe-plan's JSON: the best plans for `gbs`."""
    api = _api()
    if api is not None:
        return api.plan(profile, cluster, gbs, **settings)
    return _cli(profile, cluster, gbs, _flags(settings))["points"][0]


def evaluate(profile: str, cluster: str, gbs: int, layout: str, **settings) -> Dict:
    """A given plan costed: pe-plan's `given_plan` for `--plan layout`."""
    api = _api()
    if api is not None:
        return api.evaluate(profile, cluster, gbs, layout, **settings)
    return _cli(profile, cluster, gbs, ["--plan", layout, *_flags(settings)])["given_plan"]
