"""`BackgroundSummary`: one summarization at a time off the run's thread; its error reaches the run."""

from __future__ import annotations

import threading
import time

import pytest

from orchestrator.run.background_summary import BackgroundSummary


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
