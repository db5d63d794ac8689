"""pe.profile: each example model profiles into a graph.txt that pe-plan plans, with the
profile batch size in the side file; bad factories and untraceable models are clear
errors with a non-zero exit."""

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch

from pe.profile import main, profile_model
from pe.runtime.graphtxt import profile_batch_size, read_meta

SOURCE = Path(os.environ.get("PE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
EXAMPLES = SOURCE / "examples" / "python"
HERE = Path(__file__).resolve()


def pe_plan() -> str:
    path = os.environ.get("PE_PLAN_BIN") or os.environ.get("PE_PLAN") or \
        str(SOURCE / "build" / "planner" / "cli" / "pe-plan")
    if not os.access(path, os.X_OK):
        pytest.skip(f"pe-plan not built at {path}")
    return path


# Factories for the error cases, loaded as tests/python/test_profile.py:NAME.
def returns_a_tensor():
    return torch.zeros(2), torch.zeros(2, 3)


def raises():
    raise RuntimeError("no weights here")


class DataDependent(torch.nn.Module):
    def forward(self, x):
        return x * 2 if x.sum() > 0 else x  # torch.fx cannot trace this branch


class Untraceable(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.branch = DataDependent()

    def forward(self, x):
        return self.fc(x) + self.branch(x)  # not the children in order


def untraceable():
    return Untraceable(), torch.randn(2, 4)


def sequential_with_branch():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), DataDependent(), torch.nn.Linear(8, 2)), \
        torch.randn(2, 4)


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_example_profiles_into_a_graph_that_pe_plan_plans(tmp_path, name):
    out = tmp_path / f"{name}.txt"
    result = profile_model(f"{EXAMPLES / name}.py:make", 4, str(out), runs=1, warmup=0)
    assert profile_batch_size(str(out)) == 4
    assert read_meta(str(out))["operators"] == len(result.operators)
    assert all(o.forward_ms > 0 and o.activation_bytes > 0 for o in result.operators)
    assert sum(o.parameter_bytes for o in result.operators) > 0
    done = subprocess.run([pe_plan(), "--profile", str(out), "--pbs", "4", "--devices", "1,2",
                           "--gbs", "8", "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["context"]["states"] == len(result.operators)
    assert doc["context"]["profile_batch_size"] == 4
    best = doc["points"][0]["plans"][0]
    planned = [op for stage in best["stages"] for op in stage["operator_ids"]]
    assert sorted(planned) == sorted(o.id for o in result.operators)


def test_graph_txt_has_the_input_and_every_edge(tmp_path):
    out = tmp_path / "cnn.txt"
    profile_model(f"{EXAMPLES / 'cnn'}.py:make", 2, str(out), runs=1, warmup=0)
    lines = out.read_text().splitlines()
    nodes = [line for line in lines if not line.startswith("\t")]
    edges = [line.strip().split(" -- ") for line in lines if line.startswith("\t")]
    assert nodes[0].split(" -- ")[1] == "Input0"
    input_bytes = 2 * 3 * 32 * 32 * 4  # two float32 images of 3 x 32 x 32
    assert nodes[0].split(" -- ")[2].endswith(f"activation_size={input_bytes}, parameter_size=0")
    ids = {n.split(" -- ")[0] for n in nodes}
    assert all(src in ids and dst in ids for src, dst in edges)
    # the residual add reads two values: the stem's relu and conv2
    assert sum(1 for _, dst in edges if dst == "add") == 2


def test_untraceable_sequential_falls_back_to_module_order(tmp_path):
    result = profile_model(f"{HERE}:sequential_with_branch", 2, str(tmp_path / "g.txt"),
                           runs=1, warmup=0)
    assert result.method == "module order"
    assert [o.id for o in result.operators] == ["_0", "_1", "_2"]


@pytest.mark.parametrize("model, message", [
    ("no_colon", "expected MODULE:FACTORY"),
    ("no_such_module_xyz:make", "cannot import 'no_such_module_xyz'"),
    (f"{EXAMPLES / 'mlp'}.py:nothing", "has no 'nothing'"),
    (f"{HERE}:returns_a_tensor", "must be a torch.nn.Module"),
    (f"{HERE}:raises", "the factory raised RuntimeError: no weights here"),
    (f"{HERE}:untraceable", "cannot be traced"),
])
def test_bad_models_are_clear_errors(tmp_path, capsys, model, message):
    out = tmp_path / "g.txt"
    code = main(["--model", model, "--batch", "2", "--out", str(out), "--runs", "1"])
    assert code == 1
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_missing_output_folder_is_an_error(tmp_path, capsys):
    code = main(["--model", f"{EXAMPLES / 'mlp'}.py:make", "--batch", "2", "--runs", "1",
                 "--out", str(tmp_path / "nowhere" / "g.txt")])
    assert code == 1
    assert "does not exist" in capsys.readouterr().err
