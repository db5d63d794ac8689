"""The object API under pe.plan & co.: Profile, Cluster, Planner, PointResult, Plan,
PlanStage, Baselines, the bubbles and LayoutCost, their attributes and to_dict()."""

import json

import pytest

import pe

SIXTEEN = ",".join(str(i) for i in range(1, 17))


@pytest.fixture(scope="module")
def vgg19_planner():
    return pe.Planner(pe.load_profile("vgg19"), pe.Cluster(SIXTEEN))


def test_profile_attributes(pe_plan_json):
    profile = pe.load_profile("resnet50")
    entry = next(p for p in pe.bundled_profiles() if p["name"] == "resnet50")
    states = pe_plan_json(["--profile", "resnet50", "--states", "--format", "json"])
    assert len(profile) == profile.states == len(states["states"])
    assert profile.name == "resnet50" and profile.path == entry["path"]
    assert profile.profile_batch_size == entry["profile_batch_size"]
    assert profile.settings.mbs == entry["mbs"]
    assert profile.settings.optimizer_scaling == entry["optimizer_scaling"]
    assert profile.state_names == [s["name"] for s in states["states"]]
    assert pe.load_profile("resnet50", pbs=64).profile_batch_size == 64


def test_cluster_attributes():
    cluster = pe.Cluster("1,2,4", inter_bw=2, memory_gb=40)
    assert cluster.machine_gpus == [1, 1, 2]
    assert (cluster.device_count, cluster.machine_count) == (4, 3)
    assert (cluster.intra_bw, cluster.inter_bw, cluster.inter_p2p_bw) == (25, 2, 2)
    assert cluster.memory_gb == 40
    changed = cluster.with_overrides(inter_p2p_bw=0.5)
    assert (changed.inter_bw, changed.inter_p2p_bw) == (2, 0.5)
    assert cluster.inter_p2p_bw == 2  # a copy was changed
    assert pe.Cluster().machine_gpus == [8, 8]


def test_planner_results_are_the_numbers_of_the_json(vgg19_planner):
    point = vgg19_planner.plan(512)
    expected = pe.plan("vgg19", SIXTEEN, 512)
    assert point.global_batch == expected["gbs"] == 512
    assert point.exact == expected["exact"]
    assert point.lower_bound == expected["lower_bound_s"]
    assert point.baselines.dp == expected["baselines"]["dp"]
    assert len(point.plans) == len(expected["plans"]) == 1
    best, plan = point.best, expected["plans"][0]
    assert best.stages_string == plan["stages_string"]
    assert (best.micro_batches, best.micro_batch_size, best.pipeline_replicas) == (
        plan["micro_batches"], plan["micro_batch_size"], plan["pipeline_replicas"])
    assert best.schedule == plan["schedule"] and best.limiter == plan["limiter"]
    assert best.simulated_time == plan["simulated_time_s"]
    assert best.estimate == plan["estimate_s"]
    assert best.device_count == plan["devices_used"]
    for stage, stage_json in zip(best.stages, plan["stages"]):
        assert stage.devices == stage_json["devices"]
        assert stage.forward == stage_json["forward_s"]
        assert stage.peak_memory == stage_json["peak_memory_bytes"]
    assert best.bubbles.makespan == plan["bubbles"]["makespan_s"]


def test_sweep_takes_a_list_or_text(vgg19_planner):
    points = vgg19_planner.sweep("128:512:128")
    assert [p.global_batch for p in points] == [128, 256, 384, 512]
    again = vgg19_planner.sweep([512, 128])
    assert [p.global_batch for p in again] == [512, 128]
    assert again[0].best.stages_string == points[3].best.stages_string


def test_to_dict(vgg19_planner):
    point = vgg19_planner.plan(256)
    d = point.to_dict()
    assert set(d) == {"global_batch", "baselines", "plans", "no_plan_reason", "exact",
                      "lower_bound", "gap"}
    plan = d["plans"][0]
    best = point.best
    assert plan["stages_string"] == best.stages_string
    assert plan["simulated_time"] == best.simulated_time
    assert [s["width"] for s in plan["stages"]] == [s.width for s in best.stages]
    assert plan["stages"][0]["devices"] == best.stages[0].devices
    assert d["baselines"]["fits"] is True and d["baselines"]["dp"] == point.baselines.dp
    bubbles = plan["bubbles"]
    for stage in bubbles["stages"]:
        assert stage["busy"] + stage["idle"] == pytest.approx(bubbles["makespan"])
    json.dumps(d)  # plain values only
    assert pe.Cluster("4,8").to_dict()["machine_gpus"] == [4, 4]


def test_evaluate_a_plan_of_your_own():
    vgg19 = pe.load_profile("vgg19")
    planner = pe.Planner(vgg19, pe.Cluster("8,16", memory_gb=4))
    cost = planner.evaluate(512, "0-24:1")
    assert cost.fits is False and cost.memory_note.startswith("stage 0 needs")
    assert cost.plan.stages_string == "0-24:1"
    good = pe.Planner(vgg19, pe.Cluster("8,16")).evaluate(512, "0-20:8;21-24:8",
                                                          microbatches=8, schedule="gpipe")
    assert good.fits and good.memory_note == ""
    assert (good.plan.micro_batches, good.plan.micro_batch_size, good.plan.schedule) == (
        8, 64, "gpipe")
    assert good.to_dict()["plan"]["stages_string"] == "0-20:8;21-24:8"


def test_reports_are_pe_plans(pe_plan, vgg19_planner):
    points = vgg19_planner.sweep([256, 512])
    args = ["--profile", "vgg19", "--devices", SIXTEEN, "--gbs", "256,512"]
    assert vgg19_planner.table(points) == pe_plan(args).stdout
    assert vgg19_planner.table(points, explained=256) == pe_plan(
        args + ["--plan-gbs", "256"]).stdout
    assert vgg19_planner.csv(points) == pe_plan(args + ["--format", "csv"]).stdout


def test_a_model_built_in_code():
    layers = [pe.Layer("embed", 0.004, 0.008, 25e6, 200e6),
              pe.Layer("block", 0.012, 0.024, 50e6, 400e6),
              pe.Layer("head", 0.002, 0.004, 1e6, 100e6)]
    profile = pe.chain_profile("mine", 8, layers)
    assert (profile.name, len(profile), profile.path) == ("mine", 3, "")
    point = pe.Planner(profile, pe.Cluster("2,4")).plan(64)
    assert point.best is not None and point.best.device_count <= 4
    assert pe.plan(profile, "2,4", 64)["plans"][0]["stages_string"] == point.best.stages_string
    with pytest.raises(pe.UsageError, match="built in code"):
        pe.plan(profile, "2,4", 64, pbs=4)


def test_search_options():
    options = pe.SearchOptions(straight=True, top=2, schedule="gpipe")
    assert (options.max_stage_width, options.max_copies, options.top) == (1, 1, 2)
    assert options.schedule == "gpipe" and pe.SearchOptions().schedule == "best"
    planner = pe.Planner(pe.load_profile("vgg19"), pe.Cluster("4,8"), search=options)
    point = planner.plan(256)
    assert len(point.plans) == 2
    assert all(s.width == 1 for p in point.plans for s in p.stages)
    assert all(p.schedule == "gpipe" and p.pipeline_replicas == 1 for p in point.plans)


def test_search_memory():
    assert pe.SearchOptions().search_memory_mb == 4096
    options = pe.SearchOptions(search_memory_mb=512)
    assert options.search_memory_mb == 512
    options.search_memory_mb = 0
    assert options.search_memory_mb == 0
    with pytest.raises(pe.UsageError, match="--search-memory-mb"):
        pe.SearchOptions(search_memory_mb=1000001)
    args = pe.cli_arguments("vgg19", "8,16", 64, search_memory_mb=1)
    assert args[-4:-2] == ["--search-memory-mb", "1"]
    assert pe.plan("vgg19", "8,16", 64, search_memory_mb=1)["plans"]


def test_interleaved_schedule():
    options = pe.SearchOptions(schedule="interleaved", max_chunks=3)
    assert options.schedule == "interleaved" and options.max_chunks == 3
    assert pe.SearchOptions(schedule="all").schedule == "all"
    point = pe.Planner(pe.load_profile("vgg19"), pe.Cluster("8,16"), search=options).plan(1024)
    best = point.plans[0]
    assert best.schedule == "interleaved" and 2 <= best.chunks <= 3
    assert len(best.stages) % best.chunks == 0 and "," in best.stages_string


def test_stage_variants_and_their_settings(vgg19_planner):
    settings = pe.TrainingSettings(max_tensor_parallel=4, tensor_parallel_efficiency=0.5,
                                   recomputation=False, zero_stage=2)
    assert (settings.max_tensor_parallel, settings.tensor_parallel_efficiency,
            settings.recomputation, settings.zero_stage) == (4, 0.5, False, 2)
    defaults = pe.TrainingSettings().to_dict()
    assert (defaults["max_tensor_parallel"], defaults["tensor_parallel_efficiency"],
            defaults["recomputation"], defaults["zero_stage"]) == (0, 1.0, True, 0)
    # A graph.txt profile never splits or recomputes: every stage is plain data parallelism.
    point = vgg19_planner.plan(256)
    plan = pe.plan("vgg19", SIXTEEN, 256)["plans"][0]
    for stage, d, j in zip(point.best.stages, point.to_dict()["plans"][0]["stages"],
                           plan["stages"]):
        assert (stage.tensor_parallel, stage.recompute, stage.zero_stage) == (1, False, 0)
        assert stage.data_parallel * stage.tensor_parallel == stage.width
        assert (stage.working_memory, stage.tensor_parallel_time, stage.recompute_time) == (0, 0, 0)
        assert stage.peak_memory == stage.weight_memory + stage.activation_memory
        for name in ("tensor_parallel", "data_parallel", "recompute", "zero_stage"):
            assert d[name] == j[name] == getattr(stage, name)
        assert d["working_memory"] == j["working_memory_bytes"]
        assert d["tensor_parallel_time"] == j["tensor_parallel_time_s"]
        assert d["recompute_time"] == j["recompute_time_s"]


def test_zero_sharding_reaches_every_stage():
    vgg19 = pe.load_profile("vgg19")
    settings = pe.TrainingSettings(mbs=vgg19.settings.mbs,
                                   optimizer_scaling=vgg19.settings.optimizer_scaling,
                                   zero_stage=1)
    point = pe.Planner(vgg19, pe.Cluster(SIXTEEN), settings).plan(512)
    assert point.best is not None
    assert all(stage.zero_stage == 1 for stage in point.best.stages)
    with pytest.raises(pe.UsageError):
        pe.Planner(vgg19, pe.Cluster(SIXTEEN), pe.TrainingSettings(zero_stage=4))
