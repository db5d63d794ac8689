"""Bad input raises pe.InputError (pe-plan's exit code 1) and bad usage pe.UsageError (exit
code 2), with the message pe-plan prints after 'pe-plan: '."""

import shutil

import pytest

import pe

INPUT, USAGE = 1, 2


def check_same_error(cli_error, exit_code, exception, call, args):
    code, message = cli_error(args)
    assert code == exit_code
    with pytest.raises(exception) as raised:
        call()
    assert str(raised.value) == message
    return message


def test_exception_classes():
    for cls in (pe.InputError, pe.UsageError):
        assert issubclass(cls, pe.Error) and issubclass(cls, ValueError)
    assert issubclass(pe.OutputError, pe.Error) and issubclass(pe.OutputError, OSError)
    assert issubclass(pe.Error, RuntimeError)


def test_unknown_profile(cli_error):
    message = check_same_error(cli_error, INPUT, pe.InputError,
                               lambda: pe.plan("no-such-model", "8,16", 64),
                               ["--profile", "no-such-model", "--gbs", "64"])
    assert message.startswith("no-such-model: ") and "resnet50" in message
    with pytest.raises(pe.InputError, match="^no-such-model: "):
        pe.load_profile("no-such-model")


@pytest.mark.parametrize("text,where", [
    ("machines:\n  - gpus: 8\nbandwidth_GBps:\n  intra: 25\n  inter: 3\n", ":5: inter"),
    ("machines:\n  - gpus: 0x8\n", ":2"),
    ("memory_GB: 16\n", "machines"),
])
def test_malformed_cluster_yaml(cli_error, tmp_path, text, where):
    cluster = tmp_path / "cluster.yml"
    cluster.write_text(text)
    message = check_same_error(cli_error, INPUT, pe.InputError,
                               lambda: pe.plan("resnet50", str(cluster), 64),
                               ["--cluster", str(cluster), "--gbs", "64"])
    assert message.startswith(str(cluster)) and where in message
    with pytest.raises(pe.InputError) as raised:
        pe.load_cluster(str(cluster))
    assert str(raised.value) == message


@pytest.mark.parametrize("gbs", ["0", "64:32:8", "12x", "-4"])
def test_bad_batch_size(cli_error, gbs):
    message = check_same_error(cli_error, USAGE, pe.UsageError,
                               lambda: pe.sweep("resnet50", "8,16", gbs),
                               ["--gbs", gbs])
    assert message.startswith("--gbs")


def test_bad_batch_size_of_one_point(cli_error):
    check_same_error(cli_error, USAGE, pe.UsageError, lambda: pe.plan("resnet50", "8,16", 0),
                     ["--gbs", "0"])


@pytest.mark.parametrize("settings,flags", [
    ({"mbs": 0}, ["--mbs", "0"]),
    ({"mbs": 2.5}, ["--mbs", "2.5"]),
    ({"memory_gb": -1.0}, ["--memory-gb", "-1.0"]),
    ({"schedule": "fastest"}, ["--schedule", "fastest"]),
    ({"optimizer_scaling": 0.5}, ["--optimizer-scaling", "0.5"]),
    ({"straight": True, "max_copies": 2}, ["--straight", "--max-copies", "2"]),
    ({"pbs": 0}, ["--pbs", "0"]),
])
def test_bad_settings(cli_error, settings, flags):
    message = check_same_error(cli_error, USAGE, pe.UsageError,
                               lambda: pe.plan("resnet50", "8,16", 64, **settings),
                               ["--gbs", "64", *flags])
    assert flags[0] in message


def test_bad_machine_ends(cli_error):
    check_same_error(cli_error, USAGE, pe.UsageError, lambda: pe.plan("resnet50", "8,4", 64),
                     ["--devices", "8,4", "--gbs", "64"])


@pytest.mark.parametrize("layout,settings,flags", [
    ("0-10:8", {}, []),
    ("0-20:8;20-24:8", {}, []),
    ("0-24:2", {"microbatches": 0}, ["--microbatches", "0"]),
    ("0-20:12;21-24:12", {}, []),
    ("0-20:8;21-24:8", {"microbatches": 3}, ["--microbatches", "3"]),
])
def test_bad_given_plan(cli_error, layout, settings, flags):
    check_same_error(cli_error, USAGE, pe.UsageError,
                     lambda: pe.evaluate("vgg19", "8,16", 512, layout, **settings),
                     ["--profile", "vgg19", "--gbs", "512", "--plan", layout, *flags])


def test_profile_file_without_a_batch_size(cli_error, tmp_path):
    entry = next(p for p in pe.bundled_profiles() if p["name"] == "alexnet")
    graph = tmp_path / "graph.txt"
    shutil.copy(entry["path"], graph)
    message = check_same_error(cli_error, USAGE, pe.UsageError,
                               lambda: pe.plan(str(graph), "8,16", 64),
                               ["--profile", str(graph), "--gbs", "64"])
    assert "--pbs" in message
    assert pe.plan(str(graph), "8,16", 64, pbs=32)["gbs"] == 64


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="'memory'"):
        pe.plan("resnet50", "8,16", 64, memory=8)
    with pytest.raises(TypeError, match="'microbatches'"):
        pe.plan("resnet50", "8,16", 64, microbatches=2)  # only for evaluate


def test_object_api_names_the_keyword_as_pe_plan_names_the_flag():
    profile = pe.load_profile("resnet50")
    with pytest.raises(pe.UsageError, match="--mbs"):
        pe.Planner(profile, pe.Cluster("8,16"), pe.TrainingSettings(mbs=0))
    with pytest.raises(pe.UsageError, match="--top"):
        pe.Planner(profile, pe.Cluster("8,16"), None, pe.SearchOptions(top=0))
    with pytest.raises(pe.InputError, match="^cluster: "):
        pe.Cluster("8,16", memory_gb=0)


def test_plan_and_evaluate_take_one_batch_size():
    with pytest.raises(TypeError, match="one batch size"):
        pe.plan("resnet50", "8,16", [64, 128])
    with pytest.raises(TypeError, match="one batch size"):
        pe.evaluate("resnet50", "8,16", 64.0, "0-175:16")
    with pytest.raises(pe.UsageError, match="^--gbs: expected one batch size, got '64,128'$"):
        pe.plan("resnet50", "8,16", "64,128")
    assert pe.plan("resnet50", "8,16", "64") == pe.plan("resnet50", "8,16", 64)
