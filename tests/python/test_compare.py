"""pe.run --compare's parts: the measured cluster YAML that pe-plan reads, the set of plan
shapes costed through pe.plan / pe.evaluate, and the ranking agreement."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from pe.profile import profile_model
from pe.runtime.bandwidth import Bandwidth, cluster_yaml
from pe.runtime.compare import Row, measure_plans, plan_set, ranking_agreement
from pe.runtime.errors import PeRuntimeError
from pe.runtime.planning import pe_plan_binary

SOURCE = Path(os.environ.get("PE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MLP = f"{SOURCE / 'examples' / 'python' / 'mlp'}.py:make"


def _row(label, simulated, measured):
    return Row(label, "0-6:1", 1, 1, "1f1b", simulated, simulated, measured, 0.0)


def test_ranking_agreement_counts_pairs_and_the_best():
    rows = [_row("a", 1.0, 3.0), _row("b", 2.0, 2.0), _row("c", 3.0, 1.0)]
    rank = ranking_agreement(rows)
    assert not rank["best_agrees"]
    assert (rank["predicted_best"], rank["measured_best"]) == (0, 2)
    assert (rank["pairs"], rank["pairs_agreeing"]) == (3, 0)
    same = ranking_agreement([_row("a", 1.0, 1.5), _row("b", 2.0, 2.5), _row("c", 3.0, 2.6)])
    assert same["best_agrees"] and same["pairs_agreeing"] == 3
    # Two plans predicted alike: either measured fastest agrees, and their pair is not ranked.
    tie = ranking_agreement([_row("a", 1.0, 1.6), _row("b", 1.0005, 1.5), _row("c", 3.0, 2.6)])
    assert tie["best_agrees"] and tie["predicted_tied"] == [0, 1]
    assert tie["pairs"] == 2 and tie["pairs_agreeing"] == 2


def test_errors_are_relative_to_the_measured_time():
    row = _row("a", 1.5, 1.0)
    assert row.simulated_error == pytest.approx(0.5)
    assert _row("a", 0.5, 2.0).estimate_error == pytest.approx(-0.75)


def test_measured_cluster_yaml_is_what_pe_plan_reads(tmp_path):
    try:
        binary = pe_plan_binary()
    except PeRuntimeError as exc:
        pytest.skip(str(exc))
    graph = tmp_path / "mlp.txt"
    profile_model(MLP, 4, str(graph), runs=1, warmup=0)
    cluster = tmp_path / "cluster.yml"
    cluster.write_text(cluster_yaml(Bandwidth(0.5, 0.25, 1000, 2000, 3)))
    done = subprocess.run([binary, "--profile", str(graph), "--pbs", "4", "--cluster",
                           str(cluster), "--gbs", "8", "--format", "json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["context"]
    assert context["machine_gpus"] == [1, 1, 1]
    assert context["inter_p2p_bw"] == pytest.approx(0.5e9)
    assert context["inter_allreduce_bw"] == pytest.approx(0.25e9)


def test_plan_set_holds_each_shape_that_fits(tmp_path):
    graph = tmp_path / "mlp.txt"
    profile_model(MLP, 4, str(graph), runs=1, warmup=0)
    try:
        shapes = plan_set(str(graph), "1,2", 8, 4.0, 2, [1, 2, 4])
    except PeRuntimeError as exc:
        pytest.skip(str(exc))
    seen = [(label, c["micro_batches"], c["pipeline_replicas"], c["schedule"],
             len(c["stages"])) for label, c in shapes]
    assert ("1 stage", 1, 1, "1f1b", 1) in seen
    assert ("2 replicas", 1, 2, "1f1b", 1) in seen
    for m in (1, 2, 4):
        assert ("2 stages", m, 1, "1f1b", 2) in seen
    for m in (2, 4):
        assert ("2 stages", m, 1, "gpipe", 2) in seen
    assert seen[-1][0] == "planner's best"
    single = plan_set(str(graph), "1", 8, 4.0, 1, [1, 2])
    assert [label for label, _ in single] == ["1 stage", "planner's best"]


def test_measure_plans_runs_each_plan_every_round(tmp_path):
    graph = tmp_path / "mlp.txt"
    profile_model(MLP, 4, str(graph), runs=1, warmup=0)
    try:
        shapes = plan_set(str(graph), "1", 4, 4.0, 1, [1])
    except PeRuntimeError as exc:
        pytest.skip(str(exc))
    rows = measure_plans(MLP, shapes, 2, dict(iterations=1, warmup=0, timeout_s=120))
    assert [r.label for r in rows] == ["1 stage", "planner's best"]
    for row, (_, costed) in zip(rows, shapes):
        assert row.measured_s > 0
        assert row.simulated_s == costed["simulated_time_s"]
        assert row.max_abs_diff <= 1e-5
