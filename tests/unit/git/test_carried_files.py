"""When runs worked on the project: the spans that tell the run's ignored files from the user's."""

from __future__ import annotations

from pathlib import Path

from orchestrator.git.carried_files import RunTimes, run_began, run_ended

SECOND = 1_000_000_000


def test_a_file_changed_during_any_run_is_the_runs_and_one_from_between_runs_is_the_users() -> None:
    times = RunTimes().begun(100 * SECOND).ended(200 * SECOND).begun(300 * SECOND)
    assert times.during_a_run(150 * SECOND) and times.during_a_run(10**6 * SECOND)  # the open run: until now
    assert not times.during_a_run(250 * SECOND) and not times.during_a_run(50 * SECOND)


def test_a_run_killed_before_its_end_counts_until_the_next_run_began() -> None:
    times = RunTimes().begun(100 * SECOND).begun(300 * SECOND).ended(400 * SECOND)
    assert times.during_a_run(250 * SECOND) and not times.during_a_run(500 * SECOND)
    assert len(times.spans) == 1  # merged: the file stays small however many runs there were


def test_the_record_round_trips_and_a_damaged_one_carries_nothing(tmp_path: Path) -> None:
    path = tmp_path / "run-times.json"
    run_began(path)
    run_ended(path)
    assert len(RunTimes.load(path).spans) == 1 and RunTimes.load(path).spans[0][1] is not None
    assert RunTimes.load(tmp_path / "missing.json").spans == ()
    path.write_text("{not json")
    assert RunTimes.load(path).during_a_run(1)
