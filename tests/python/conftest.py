"""Shared fixtures of the Python tests. ctest passes PYTHONPATH (BUILD/python), PE_PLAN (the
pe-plan program) and PE_SOURCE_DIR; run by hand, the defaults are build/ of this checkout."""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("PE_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
PE_PLAN = os.environ.get("PE_PLAN", str(SOURCE_DIR / "build" / "planner" / "cli" / "pe-plan"))


@pytest.fixture
def source_dir():
    """The repository's root folder (profiles/, tests/data/, ...)."""
    return SOURCE_DIR


@pytest.fixture
def pe_plan():
    """Runs pe-plan with a list of arguments; returns the CompletedProcess (text)."""

    def run(args):
        return subprocess.run([PE_PLAN, *args], capture_output=True, text=True, check=False)

    return run


@pytest.fixture
def pe_plan_json(pe_plan):
    """Runs pe-plan with arguments that end in --format json; returns the parsed report."""

    def run(args):
        done = pe_plan(args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    return run


@pytest.fixture
def cli_error(pe_plan):
    """Runs pe-plan expecting an error; returns (exit code, message without 'pe-plan: ')."""

    def run(args):
        done = pe_plan(args)
        assert done.returncode != 0, done.stdout
        prefix = "pe-plan: "
        assert done.stderr.startswith(prefix), done.stderr
        return done.returncode, done.stderr[len(prefix):].rstrip("\n")

    return run
