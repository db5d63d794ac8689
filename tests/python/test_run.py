"""pe.run: a 2-stage and a 2-replica plan run for a few iterations and end with the same
parameters as single-process training; a plan for another model, a port in use, more
processes than allowed and a process that dies are clear errors, and every child process
is gone afterwards."""

import json
import os
import socket
from pathlib import Path

import pytest
import torch

from pe.run import main, run
from pe.runtime import planning
from pe.runtime.errors import PeRuntimeError
from pe.runtime.graphtxt import profile_batch_size
from pe.runtime.numerics import compare_parameters, reference_parameters
from pe.profile import profile_model

SOURCE = Path(os.environ.get("PE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
EXAMPLES = SOURCE / "examples" / "python"
HERE = Path(__file__).resolve()
MLP = f"{EXAMPLES / 'mlp'}.py:make"
CNN = f"{EXAMPLES / 'cnn'}.py:make"
FAST = dict(iterations=2, warmup=0, timeout_s=120)


class Exit(torch.nn.Module):
    """Exits with status 7 in the runtime process of rank 1 (PE_RUN_RANK), nowhere else.
    Its branch on a tensor keeps torch.fx out, so the model runs in module order."""

    def forward(self, x):
        if x.sum() > -1e30 and os.environ.get("PE_RUN_RANK") == "1":
            os._exit(7)
        return x


def dies():
    return torch.nn.Sequential(torch.nn.Linear(4, 4), Exit(), torch.nn.Linear(4, 2)), \
        torch.randn(2, 4)


def _profile(tmp_path, model: str, name: str) -> str:
    out = tmp_path / f"{name}.txt"
    profile_model(model, 4, str(out), runs=1, warmup=0)
    return str(out)


def _costed(graph: str, layout: str, gbs: int = 8, **settings) -> dict:
    try:
        return planning.evaluate(graph, "1,2,3,4", gbs, layout, pbs=profile_batch_size(graph),
                                 **settings)
    except PeRuntimeError as exc:
        pytest.skip(str(exc))


def _assert_all_gone(pids):
    assert pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_two_stage_plan_matches_single_process_training(tmp_path):
    graph = _profile(tmp_path, MLP, "mlp")
    plan = _costed(graph, "0-3:1;4-6:1", microbatches=4)
    result = run(MLP, plan, **FAST)
    assert result.numerics.ok, result.numerics
    assert result.numerics.parameters == 8
    assert len(result.iteration_times_s) == 2
    events = [e for e in result.trace["traceEvents"] if e["ph"] == "X"]
    for stage in (0, 1):
        names = {e["name"] for e in events if e["pid"] == stage}
        assert {f"F{m}" for m in range(4)} <= names and {f"B{m}" for m in range(4)} <= names
    assert any(e["cat"] == "send-activation" and e["pid"] == 0 for e in events)
    assert any(e["cat"] == "send-gradient" and e["pid"] == 1 for e in events)
    _assert_all_gone(result.pids)


def test_two_replica_gpipe_plan_matches_single_process_training(tmp_path):
    graph = _profile(tmp_path, CNN, "cnn")
    plan = _costed(graph, "0-9:1", microbatches=2, plan_copies=2, schedule="gpipe")
    result = run(CNN, plan, **FAST)
    assert result.plan.replicas == 2 and result.plan.schedule == "gpipe"
    assert result.numerics.ok, result.numerics
    assert any(e.get("cat") == "allreduce" for e in result.trace["traceEvents"])


def test_replicated_stage_feeding_a_single_one_matches(tmp_path):
    """Stage 0 on two processes sends each half of a micro-batch to stage 1's one process
    and gets its gradients back; the stage's replicas all-reduce in their own group."""
    graph = _profile(tmp_path, MLP, "mlp")
    plan = _costed(graph, "0-3:2;4-6:1", gbs=6, microbatches=2)
    result = run(MLP, plan, **FAST)
    assert [s.width for s in result.plan.stages] == [2, 1]
    assert result.numerics.ok, result.numerics
    stage0 = {e["name"] for e in result.trace["traceEvents"] if e["pid"] == 0}
    assert "all-reduce" in stage0


def test_the_check_fails_for_other_training():
    """Parameters after training at another learning rate or for one iteration fewer
    differ by more than the tolerance: the check can fail."""
    reference = reference_parameters(MLP, 8, 2, 0.01, 0)
    assert not compare_parameters(reference_parameters(MLP, 8, 2, 0.02, 0), reference, 1e-5, 2).ok
    assert not compare_parameters(reference_parameters(MLP, 8, 1, 0.01, 0), reference, 1e-5, 2).ok
    assert compare_parameters(reference_parameters(MLP, 8, 2, 0.01, 0), reference, 1e-5, 2).ok


def test_plan_of_another_model_is_refused_before_starting(tmp_path, capsys):
    graph = _profile(tmp_path, CNN, "cnn")
    plan = _costed(graph, "0-4:1;5-9:1", microbatches=2)
    with pytest.raises(PeRuntimeError, match="has no operator of that id"):
        run(MLP, plan, **FAST)


def test_more_processes_than_allowed_is_an_error(tmp_path):
    graph = _profile(tmp_path, MLP, "mlp")
    plan = _costed(graph, "0-3:1;4-6:1", microbatches=2, plan_copies=2)
    with pytest.raises(PeRuntimeError, match="needs 4 processes .* at most 3"):
        run(MLP, plan, max_processes=3, **FAST)


def test_port_in_use_is_an_error(tmp_path, capsys):
    graph = _profile(tmp_path, MLP, "mlp")
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(_costed(graph, "0-6:1")))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["--model", MLP, "--plan", str(plan_path), "--port", str(port),
                     "--iterations", "1"])
    assert code == 1
    assert f"127.0.0.1:{port} is in use" in capsys.readouterr().err


def test_a_dying_process_stops_the_run_and_every_child(tmp_path):
    model = f"{HERE}:dies"
    graph = _profile(tmp_path, model, "dies")
    plan = _costed(graph, "0-1:1;2-2:1", gbs=4, microbatches=2)
    with pytest.raises(PeRuntimeError, match="process 1 .* died with exit code 7") as caught:
        run(model, plan, **FAST)
    _assert_all_gone(caught.value.pids)
