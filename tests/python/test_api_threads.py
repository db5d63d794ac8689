"""The search runs without the GIL: other Python threads run while a Planner plans, and
plans made on several threads at once equal those made one after another."""

import sys
import threading
import time

import pytest

import pe


@pytest.fixture(autouse=True)
def no_forced_switches():
    """The interpreter never takes the GIL from a thread that holds it (switch interval of
    1000 s): a thread runs only when the one holding the GIL releases it, as the search
    does and as time.sleep does."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    yield
    sys.setswitchinterval(interval)


class Counter(threading.Thread):
    """Counts, sleeping briefly (without the GIL) after each step, until stopped. While
    another thread holds the GIL, it cannot count."""

    def __init__(self):
        super().__init__(daemon=True)
        self.count = 0
        self.started_counting = threading.Event()
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.count += 1
            self.started_counting.set()
            time.sleep(0.0002)


def test_other_threads_run_while_a_sweep_runs():
    planner = pe.Planner(pe.load_profile("vgg19"), pe.Cluster("8,16"))
    counter = Counter()
    counter.start()
    assert counter.started_counting.wait(10)
    try:
        # Had the sweep held the GIL, the counter could not count between these two reads.
        before = counter.count
        points = planner.sweep("64:1024:64")
        after = counter.count
    finally:
        counter.stop.set()
        counter.join()
    assert len(points) == 16 and all(p.best for p in points)
    assert after > before


def test_the_contract_functions_release_the_gil_too():
    counter = Counter()
    counter.start()
    assert counter.started_counting.wait(10)
    try:
        before = counter.count
        pe.sweep("vgg19", "8,16", "64:1024:64")
        after = counter.count
    finally:
        counter.stop.set()
        counter.join()
    assert after > before


def test_concurrent_plans_equal_sequential_ones():
    planner = pe.Planner(pe.load_profile("vgg19"), pe.Cluster("1,2,3,4,5,6,7,8"))
    batches = [64, 128, 256, 512]
    expected = {gbs: planner.plan(gbs).to_dict() for gbs in batches}
    got = {}

    def plan(gbs):
        got[gbs] = planner.plan(gbs).to_dict()

    threads = [threading.Thread(target=plan, args=(gbs,)) for gbs in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == expected
