"""`BackgroundSummary`: one summarization at a time off the run's thread; its error reaches the run."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from orchestrator.run.parallel.background_summary import BackgroundSummary


def test_one_at_a_time_and_the_run_waits_for_it() -> None:
    release, triggers = threading.Event(), []

    def summarize(trigger: str) -> None:
        triggers.append(trigger)
        release.wait(10)

    summary = BackgroundSummary(summarize)
    assert summary.start("every-5") is True
    assert summary.start("every-5") is False and summary.busy  # the second waits for the next chance
    assert summary.wait(time.monotonic() + 0.05) is False  # a stop's deadline passes: still running
    release.set()
    assert summary.wait() is True and not summary.busy
    assert triggers == ["every-5"]


def test_what_a_summary_raised_is_raised_in_the_run() -> None:
    def summarize(_trigger: str) -> None:
        raise OSError("disk full")

    summary = BackgroundSummary(summarize)
    summary.start("every-5")
    with pytest.raises(OSError, match="disk full"):
        summary.wait()
    assert summary.wait() is True  # raised once


def test_when_the_run_stops_what_the_summary_raised_does_not_replace_the_reason() -> None:
    def summarize(_trigger: str) -> None:
        raise KeyboardInterrupt("the run is stopping")  # the pool's stop, met at the summarizer's call

    summary = BackgroundSummary(summarize)
    summary.start("every-5")
    assert summary.wait_when_stopping(time.monotonic() + 10) is True


def _state(statuses: dict[str, str]) -> Any:
    from orchestrator.store.run_state import RunState

    state = RunState()
    for feature_id, status in statuses.items():
        state.feature(feature_id).status = status  # type: ignore[assignment]
    return state


def _features(*ids: str, depends: dict[str, list[str]] | None = None) -> list[Any]:
    from orchestrator.spec.feature_spec import Feature

    return [Feature.model_validate({"id": fid, "name": fid, "description": "d", "depends_on": (depends or {}).get(fid, [])})
            for fid in ids]


def test_a_summary_is_worth_it_while_a_feature_is_left_to_start() -> None:
    from orchestrator.run.parallel.background_summary import worth_summarizing

    order = _features("a", "b", "c", "d")
    # Two workers busy on c and d; b waits for a slot: it starts later and reads the summary.
    assert worth_summarizing(_state({"a": "passed", "b": "pending", "c": "pending", "d": "pending"}), order,
                             {"c", "d"}, jobs=2)
    # d has just settled (its worker is still winding up): b takes its slot at once, nothing later reads it.
    assert not worth_summarizing(_state({"a": "passed", "b": "pending", "c": "pending", "d": "passed"}), order,
                                 {"c", "d"}, jobs=2)
    # Nothing left but what is running.
    assert not worth_summarizing(_state({"a": "passed", "b": "passed", "c": "pending", "d": "pending"}), order,
                                 {"c", "d"}, jobs=2)
    # b would have a slot, but waits for c: it starts after the summary.
    chained = _features("a", "b", "c", "d", depends={"b": ["c"]})
    assert worth_summarizing(_state({"a": "passed", "b": "pending", "c": "pending", "d": "passed"}), chained,
                             {"c", "d"}, jobs=2)
