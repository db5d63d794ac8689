"""pe.plan, pe.evaluate, pe.sweep and pe.sweep_json: pe-plan's answers as Python values.

Each call checks its keyword arguments as pe-plan checks the same flags (through pe-plan's
own option parser), builds the Planner pe-plan would build, and renders the result with
pe-plan's JSON reporter, so the dicts equal what `pe-plan --format json` prints."""

import json
import os

from . import _core

# Keyword arguments and the pe-plan flags they stand for.
_SETTINGS = (
    "pbs", "mbs", "optimizer_scaling", "activation_bytes_per_sample",
    "tensor_parallel", "tp_efficiency", "no_recompute", "zero",
    "intra_bw", "inter_bw", "inter_p2p_bw", "memory_gb",
    "schedule", "top", "search_effort", "search_memory_mb", "max_stage_width", "max_copies",
    "straight", "max_chunks",
)
_GIVEN_PLAN = ("microbatches", "plan_copies", "plan_first_device", "plan_copy_stride")
_ALIASES = {"micro_batches": "microbatches"}


def _keywords(given, allowed, function):
    settings = {}
    for key, value in given.items():
        name = _ALIASES.get(key, key)
        if name not in allowed:
            raise TypeError(f"{function}() got an unexpected keyword argument '{key}'")
        if value is not None:
            settings[name] = value
    return settings


def _text(value):
    return repr(value) if isinstance(value, float) else str(value)


def _batch_text(batch_sizes):
    if isinstance(batch_sizes, (list, tuple)):
        return ",".join(str(b) for b in batch_sizes)
    return str(batch_sizes)


def _is_cluster_file(cluster):
    """A cluster YAML path (as --cluster) rather than machine ends (as --devices)."""
    return os.path.exists(cluster) or "/" in cluster or cluster.endswith((".yml", ".yaml"))


def cli_arguments(profile, cluster, batch_sizes, layout=None, **settings):
    """The pe-plan arguments (argv[1:], with --format json) that ask what these do. A
    Profile object stands for its file at its batch size; a Cluster object has no flag (the
    arguments then plan on pe-plan's default cluster)."""
    settings = _keywords(settings, _SETTINGS + _GIVEN_PLAN, "cli_arguments")
    args = []
    if isinstance(profile, str):
        args += ["--profile", profile]
    elif getattr(profile, "transformer", False):
        args += ["--model", profile.path]
    elif getattr(profile, "path", ""):
        args += ["--profile", profile.path]
        if "pbs" not in settings:
            args += ["--pbs", _text(profile.profile_batch_size)]
    if isinstance(cluster, str):
        args += ["--cluster" if _is_cluster_file(cluster) else "--devices", cluster]
    args += ["--gbs", _batch_text(batch_sizes)]
    if layout is not None:
        args += ["--plan", str(layout)]
    for name, value in settings.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool) and name in ("straight", "no_recompute"):
            args += [flag] if value else []
        else:
            args += [flag, _text(value)]
    return args + ["--format", "json"]


def _profile(profile, pbs):
    if isinstance(profile, _core.Profile) and profile.transformer and pbs is not None:
        raise _core.UsageError("--pbs applies to --profile; a --model's times are per sequence")
    if isinstance(profile, _core.Profile):
        if pbs is None:
            return profile
        if not profile.path:
            raise _core.UsageError("pbs applies to a profile read from a file, not to "
                                   f"'{profile.name}', built in code")
        return _core.load_profile(profile.path, pbs)
    return _core.load_profile(profile, pbs)


def _cluster(cluster, settings, profile):
    overrides = {k: settings.get(k) for k in ("intra_bw", "inter_bw", "inter_p2p_bw", "memory_gb")}
    # As pe-plan --model: the devices get the transformer's GPU memory unless it is given.
    if profile.transformer and overrides["memory_gb"] is None and isinstance(cluster, str) \
            and not _is_cluster_file(cluster):
        overrides["memory_gb"] = profile.gpu_memory_gb
    if isinstance(cluster, _core.Cluster):
        return cluster.with_overrides(**overrides)
    if _is_cluster_file(cluster):
        return _core.load_cluster(cluster, **overrides)
    return _core.Cluster(cluster, **overrides)


def _training(profile, settings):
    training = profile.settings
    for name in ("mbs", "optimizer_scaling", "activation_bytes_per_sample"):
        if name in settings:
            setattr(training, name, settings[name])
    renamed = {"tensor_parallel": "max_tensor_parallel", "tp_efficiency":
               "tensor_parallel_efficiency", "zero": "zero_stage"}
    for name, field in renamed.items():
        if name in settings:
            setattr(training, field, settings[name])
    if settings.get("no_recompute"):
        training.recomputation = False
    return training


def _search(settings):
    names = ("schedule", "top", "search_effort", "search_memory_mb", "max_stage_width",
             "max_copies", "straight", "max_chunks")
    return _core.SearchOptions(**{k: settings[k] for k in names if k in settings})


def _report(profile, cluster, batch_sizes, layout, settings, function):
    """pe-plan's JSON report, as text, of these inputs (what its `plan` step does)."""
    allowed = _SETTINGS + (_GIVEN_PLAN if layout is not None else ())
    settings = _keywords(settings, allowed, function)
    args = cli_arguments(profile, cluster, batch_sizes, layout, **settings)
    _core.check_arguments(args)
    batches = _core.parse_batch_sizes(_batch_text(batch_sizes))
    loaded = _profile(profile, settings.get("pbs"))
    planner = _core.Planner(loaded, _cluster(cluster, settings, loaded),
                            _training(loaded, settings),
                            _search(settings))
    given = None
    if layout is not None:
        schedule = settings.get("schedule", "best")
        given = planner.evaluate(batches[-1], str(layout),
                                 microbatches=settings.get("microbatches", 1),
                                 schedule=schedule, plan_copies=settings.get("plan_copies", 1),
                                 plan_first_device=settings.get("plan_first_device", 0),
                                 plan_copy_stride=settings.get("plan_copy_stride", 0))
    points = planner.sweep(batches)
    return planner.json(points, given, args)


def sweep_json(profile, cluster, batch_sizes, layout=None, **settings):
    """The text `pe-plan --format json` prints for these inputs (batch_sizes: an int, a
    list or "FIRST:LAST:STEP"; layout: a plan of your own, as --plan), with the equivalent
    pe-plan arguments (cli_arguments) as its command_line."""
    return _report(profile, cluster, batch_sizes, layout, settings, "sweep_json")


def sweep(profile, cluster, batch_sizes, **settings):
    """The "points" of pe-plan's JSON for these batch sizes: one dict per batch size."""
    return json.loads(_report(profile, cluster, batch_sizes, None, settings, "sweep"))["points"]


def _one_batch_size(gbs, function):
    if isinstance(gbs, bool) or not isinstance(gbs, (int, str)):
        raise TypeError(f"{function}(): gbs must be one batch size (an int), not {gbs!r}")
    if len(_core.parse_batch_sizes(str(gbs))) != 1:
        raise _core.UsageError(f"--gbs: expected one batch size, got '{gbs}'")
    return gbs


def plan(profile, cluster, gbs, **settings):
    """The best plans of one global batch size: one point of pe-plan's JSON, as a dict."""
    text = _report(profile, cluster, _one_batch_size(gbs, "plan"), None, settings, "plan")
    return json.loads(text)["points"][0]


def evaluate(profile, cluster, gbs, layout, **settings):
    """A plan of your own (layout as pe-plan's --plan, e.g. "0-20:15;21-24:1"; microbatches,
    plan_copies, plan_first_device, plan_copy_stride and schedule as --microbatches,
    --plan-copies, --plan-first-device, --plan-copy-stride and --schedule) costed at gbs: the
    "given_plan" of pe-plan's JSON, as a dict."""
    text = _report(profile, cluster, _one_batch_size(gbs, "evaluate"), layout, settings,
                   "evaluate")
    return json.loads(text)["given_plan"]
