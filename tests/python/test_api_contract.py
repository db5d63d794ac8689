"""pe.plan, pe.evaluate, pe.sweep and pe.sweep_json answer what `pe-plan --format json`
prints for the same inputs (the two programs' outputs are parsed and compared)."""

import json

import pytest

import pe

SIXTEEN_SINGLE_GPU_MACHINES = ",".join(str(i) for i in range(1, 17))

CLUSTER_YAML = """\
machines:
  - count: 2
    gpus: 4
  - gpus: 2
bandwidth_GBps:
  intra: 50
  inter_allreduce: 5
memory_GB: 8
"""

POINT_CASES = [
    ("resnet50", "8,16", 512, {}),
    ("vgg19", SIXTEEN_SINGLE_GPU_MACHINES, 512, {"top": 3}),
    ("vgg19", "8,16", 256, {"schedule": "gpipe", "mbs": 8, "inter_bw": 1.5}),
    ("alexnet", "4,8", 128, {"max_stage_width": 2, "memory_gb": 4.5, "optimizer_scaling": 3}),
    ("dapple/bert-24-pbs-6", "8,16", 64, {"straight": True, "search_effort": 100000}),
    ("vgg19", "8,16", 256, {"zero": 2, "memory_gb": 2, "no_recompute": True,
                            "tensor_parallel": 1, "tp_efficiency": 0.5}),
    ("vgg19", "8,16", 1024, {"schedule": "interleaved", "max_chunks": 3}),
]


@pytest.mark.parametrize("profile,devices,gbs,settings", POINT_CASES)
def test_plan_is_the_point_pe_plan_prints(pe_plan_json, profile, devices, gbs, settings):
    args = pe.cli_arguments(profile, devices, gbs, **settings)
    assert args[:4] == ["--profile", profile, "--devices", devices]
    expected = pe_plan_json(args)["points"]
    assert len(expected) == 1
    assert pe.plan(profile, devices, gbs, **settings) == expected[0]


def test_plan_on_a_cluster_file_with_overrides(pe_plan_json, tmp_path):
    cluster = tmp_path / "cluster.yml"
    cluster.write_text(CLUSTER_YAML)
    expected = pe_plan_json(["--profile", "vgg19", "--cluster", str(cluster), "--gbs", "128",
                             "--inter-p2p-bw", "0.5", "--format", "json"])
    got = pe.plan("vgg19", str(cluster), 128, inter_p2p_bw=0.5)
    assert got == expected["points"][0]
    # The same cluster as an object, and the profile as an object.
    loaded = pe.load_cluster(str(cluster))
    assert loaded.machine_gpus == [4, 4, 2]
    assert pe.plan(pe.load_profile("vgg19"), loaded, 128, inter_p2p_bw=0.5) == got


def test_a_transformer_plans_as_pe_plan_model_does(pe_plan_json):
    model = pe.load_transformer("llama2-7b")
    assert model.transformer and model.gpu_memory_gb == 80
    settings = {"zero": 1, "tensor_parallel": 4, "intra_bw": 450, "inter_bw": 50}
    args = pe.cli_arguments(model, "8,16", 256, **settings)
    assert args[:2] == ["--model", model.path]
    expected = pe_plan_json(args)["points"][0]
    got = pe.plan(model, "8,16", 256, **settings)
    assert got == expected
    stages = got["plans"][0]["stages"]
    assert all(s["tensor_parallel"] <= 4 for s in stages)
    assert got["plans"][0]["mfu"] > 0
    with pytest.raises(pe.UsageError, match="--pbs applies to --profile"):
        pe.plan(model, "8,16", 256, pbs=2)


def test_a_point_where_nothing_fits_says_why_as_pe_plan_does(pe_plan_json):
    args = ["--profile", "vgg19", "--devices", "2", "--gbs", "64", "--memory-gb", "0.5",
            "--max-copies", "1", "--format", "json"]
    expected = pe_plan_json(args)["points"][0]
    got = pe.plan("vgg19", "2", 64, memory_gb=0.5, max_copies=1)
    assert got == expected
    assert got["plans"] == []
    assert "--max-copies" in got["no_plan_reason"]  # worded with the flag, as pe-plan does


def test_profile_file_with_its_batch_size(pe_plan_json):
    graph = next(p["path"] for p in pe.bundled_profiles() if p["name"] == "vgg19")
    expected = pe_plan_json(["--profile", graph, "--pbs", "16", "--gbs", "256",
                             "--format", "json"])
    assert expected["context"]["profile_batch_size"] == 16
    assert pe.plan(graph, "8,16", 256, pbs=16) == expected["points"][0]
    assert pe.plan(graph, "8,16", 256) != expected["points"][0]  # the catalogue's 32


@pytest.mark.parametrize("layout,settings", [
    ("0-12:8;13-24:8", {"microbatches": 8}),
    ("0-20:15;21-24:1", {"micro_batches": 4, "schedule": "gpipe"}),
    ("0-24:4", {"plan_copies": 4, "microbatches": 2}),
    ("0-2,8-11:8;3-7,12-24:8", {"microbatches": 4}),
])
def test_evaluate_is_the_given_plan_pe_plan_prints(pe_plan_json, layout, settings):
    args = pe.cli_arguments("vgg19", SIXTEEN_SINGLE_GPU_MACHINES, 512, layout, **settings)
    assert args[args.index("--plan") + 1] == layout
    expected = pe_plan_json(args)["given_plan"]
    got = pe.evaluate("vgg19", SIXTEEN_SINGLE_GPU_MACHINES, 512, layout, **settings)
    assert got == expected
    assert got["stages_string"] == layout
    assert got["fits"] is True


def test_evaluate_on_the_machines_after_the_first(pe_plan_json):
    # VGG-19 at GBS 32 on a machine of 1 GPU then one of 8: the plan found runs on the
    # second alone, and evaluate costs that plan there (plan_first_device, --plan-first-device).
    best = pe.plan("vgg19", "1,9", 32)["plans"][0]
    assert best["first_device"] == 1
    settings = {"microbatches": best["micro_batches"], "plan_copies": best["pipeline_replicas"],
                "plan_first_device": 1}
    args = pe.cli_arguments("vgg19", "1,9", 32, best["stages_string"], **settings)
    assert args[args.index("--plan-first-device") + 1] == "1"
    got = pe.evaluate("vgg19", "1,9", 32, best["stages_string"], **settings)
    assert got == pe_plan_json(args)["given_plan"]
    assert got["first_device"] == 1 and got["simulated_time_over_best"] == 1


def test_evaluate_with_the_copies_of_the_plan_found(pe_plan_json):
    # ResNet-18 at GBS 8 on machines of 4, 4, 3 and 3 GPUs: two copies on the first two
    # machines, 4 devices apart (plan_copy_stride, --plan-copy-stride), not 7.
    best = pe.plan("resnet18", "4,8,11,14", 8)["plans"][0]
    assert best["pipeline_replicas"] == 2 and best["copy_stride"] == 4
    settings = {"microbatches": best["micro_batches"], "plan_copies": 2, "plan_copy_stride": 4}
    args = pe.cli_arguments("resnet18", "4,8,11,14", 8, best["stages_string"], **settings)
    got = pe.evaluate("resnet18", "4,8,11,14", 8, best["stages_string"], **settings)
    assert got == pe_plan_json(args)["given_plan"]
    assert got["copy_stride"] == 4 and got["simulated_time_over_best"] == 1


def test_evaluate_of_a_plan_that_does_not_fit_memory(pe_plan_json):
    args = ["--profile", "vgg19", "--devices", "8,16", "--gbs", "512", "--plan", "0-24:1",
            "--memory-gb", "4", "--format", "json"]
    expected = pe_plan_json(args)["given_plan"]
    got = pe.evaluate("vgg19", "8,16", 512, "0-24:1", memory_gb=4)
    assert got == expected
    assert got["fits"] is False and "stage 0" in got["memory_note"]


def test_sweep_json_is_the_text_pe_plan_prints(pe_plan):
    settings = {"top": 2, "schedule": "1f1b", "intra_bw": 30}
    args = pe.cli_arguments("resnet50", "8,16", "32:512:128", **settings)
    printed = pe_plan(args)
    assert printed.returncode == 0, printed.stderr
    text = pe.sweep_json("resnet50", "8,16", "32:512:128", **settings)
    assert text == printed.stdout
    report = json.loads(text)
    assert report["context"]["command_line"] == args
    assert [p["gbs"] for p in report["points"]] == [32, 128, 256, 384, 512]
    assert pe.sweep("resnet50", "8,16", [32, 128, 256, 384, 512], **settings) == report["points"]


def test_sweep_json_with_a_given_plan_is_the_text_pe_plan_prints(pe_plan):
    args = pe.cli_arguments("vgg19", "8,16", [256, 512], "0-20:12;21-24:4", microbatches=4)
    printed = pe_plan(args)
    assert printed.returncode == 0, printed.stderr
    assert pe.sweep_json("vgg19", "8,16", [256, 512], "0-20:12;21-24:4",
                         microbatches=4) == printed.stdout


def test_a_profile_object_stands_for_its_file_at_its_batch_size(pe_plan):
    profile = pe.load_profile("alexnet", pbs=64)
    args = pe.cli_arguments(profile, "4,8", 256)
    assert args[:4] == ["--profile", profile.path, "--pbs", "64.0"]
    printed = pe_plan(args)
    assert printed.returncode == 0, printed.stderr
    assert pe.sweep_json(profile, "4,8", 256) == printed.stdout
