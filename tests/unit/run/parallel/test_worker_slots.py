"""The N of `--jobs N` counts features at work, not features waiting for the merge queue; and
the run's end summary runs beside its final verification.

Units for `WorkerSlots`, then the real CLI: a feature starts while another is being merged, no
more than N are ever at work, and the end summary's call is in flight while the final
verification's checks run.
"""

from __future__ import annotations

import threading
import time

import pytest

from orchestrator.run.parallel.worker_slots import WorkerSlots


def _slots(jobs: int) -> tuple[WorkerSlots, list[str]]:
    woken: list[str] = []
    return WorkerSlots(jobs, on_free=lambda: woken.append("free")), woken


def test_a_feature_going_to_the_merge_queue_frees_its_slot_and_wakes_the_loop() -> None:
    slots, woken = _slots(2)
    slots.started("a")
    slots.started("b")
    assert slots.free() == 0
    slots.merging("a")
    assert slots.free() == 1 and woken == ["free"]
    assert slots.at_work() == {"b"}
    slots.ended("a")
    slots.ended("b")
    assert slots.free() == 2


def test_past_n_features_waiting_for_the_merge_queue_each_one_more_holds_a_slot() -> None:
    slots, _ = _slots(2)
    for feature_id in ("a", "b", "c"):
        slots.started(feature_id)
        slots.merging(feature_id)
    assert slots.free() == 1  # a queue slower than the workers does not grow without end
    slots.started("d")
    assert slots.free() == 0
    slots.ended("a")
    assert slots.free() == 1


def test_a_feature_whose_merge_failed_waits_for_a_slot_and_goes_before_new_ones() -> None:
    slots, _ = _slots(1)
    slots.started("a")
    slots.merging("a")
    slots.started("b")  # the loop filled a's slot
    back = threading.Thread(target=slots.back_to_work, args=("a", lambda: False))
    back.start()
    deadline = time.monotonic() + 10
    while slots.free() != -1 and time.monotonic() < deadline:  # a is waiting: no new feature may start
        time.sleep(0.01)
    assert slots.free() == -1
    assert back.is_alive()
    slots.merging("b")  # b's slot is a's now, not a new feature's
    back.join(10)
    assert not back.is_alive()
    assert slots.at_work() == {"a"} and slots.free() == 0


def test_a_feature_a_dependent_awaits_keeps_its_slot_until_it_has_passed() -> None:
    woken: list[str] = []
    slots = WorkerSlots(2, on_free=lambda: woken.append("free"), awaited=lambda feature_id: feature_id == "a")
    slots.started("a")
    slots.started("b")
    slots.merging("a")  # its dependent is next in line for this slot, not a feature behind it
    assert slots.free() == 0 and woken == []
    slots.back_to_work("a", lambda: True)  # its merge failed: it still has its slot, nothing to wait for
    assert slots.at_work() == {"a", "b"}
    slots.merging("a")
    slots.passed("a")
    assert slots.free() == 1 and woken == ["free"]


def test_waiting_for_a_slot_ends_when_the_run_stops() -> None:
    slots, _ = _slots(1)
    slots.started("b")
    stopping = threading.Event()
    stopping.set()
    with pytest.raises(KeyboardInterrupt):
        slots.back_to_work("a", stopping.is_set)
    assert slots.free() == 0  # a is not counted any more


