"""pe: pe-plan's planner for hybrid pipeline x data parallel training, from Python.

The functions pe.plan, pe.evaluate, pe.sweep and pe.sweep_json answer as
`pe-plan --format json` does; pe.Planner, pe.Plan, pe.PointResult, ... are the objects they
are built on. docs/python-api.md describes both."""

from ._core import (
    Baselines, BubbleReport, CancelledError, Cluster, Error, InputError, Layer, LayoutCost,
    OutputError, Plan, PlanStage, Planner, PointResult, Profile, SearchOptions, StageBubbles,
    TrainingSettings, UsageError, __version__, bundled_profiles, chain_profile, load_cluster,
    load_profile, load_transformer, parse_batch_sizes)
from ._contract import cli_arguments, evaluate, plan, sweep, sweep_json
from ._dicts import add_to_dict
from ._profiles import profiles_directory, register_installed_profiles

add_to_dict(Baselines, BubbleReport, Cluster, LayoutCost, Plan, PlanStage, PointResult, Profile,
            SearchOptions, StageBubbles, TrainingSettings)
del add_to_dict
register_installed_profiles()
del register_installed_profiles

__all__ = [
    "Baselines", "BubbleReport", "CancelledError", "Cluster", "Error", "InputError", "Layer",
    "LayoutCost", "OutputError", "Plan", "PlanStage", "Planner", "PointResult", "Profile",
    "SearchOptions", "StageBubbles", "TrainingSettings", "UsageError", "__version__",
    "bundled_profiles", "chain_profile", "cli_arguments", "evaluate", "load_cluster",
    "load_profile", "load_transformer", "parse_batch_sizes", "plan", "profiles_directory", "sweep", "sweep_json",
]
