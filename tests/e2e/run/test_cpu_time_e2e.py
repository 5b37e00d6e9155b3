"""The CPU time a run reports per feature (issue 29): `feature_finished` carries the orchestrator's
own CPU time (`cpuMs`) and its ended subprocesses' (`childrenCpuMs`) so far, the measure of a
feature's cost that a loaded machine does not inflate (bench/scale_1000.py reads it)."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.store.event_kinds import parse_event
from tests.cli_helpers import run_cli, write_spec


def _finished(project: Path) -> list[dict]:
    lines = (project / ".autonomous" / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, filter(str.strip, lines)) if e["type"] == "feature_finished"]


def test_each_finished_feature_reports_the_run_cpu_time_so_far(fake_api, project):
    spec = write_spec(project, 3)

    result = run_cli(["run", str(spec), "--no-commit"], project, fake_api)

    assert result.code == 0, result.stderr
    finished = _finished(project)
    assert [e["id"] for e in finished] == ["feat-01", "feat-02", "feat-03"]
    own = [e["cpuMs"] for e in finished]
    children = [e["childrenCpuMs"] for e in finished]
    assert all(isinstance(value, int) for value in own + children)
    assert own[0] > 0 and own == sorted(own)  # a running total: the bench takes differences
    assert children == sorted(children)


def test_a_feature_finished_event_without_cpu_times_still_reads():
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    old = {"type": "feature_finished", "ts": 1, "id": "feat-01", "status": "passed", "attempts": 1,
           "durationMs": 5, "tokens": 0, "usage": usage, "costUsd": 0.0}

    event = parse_event(old)

    assert event.dump() == {**old, "reason": None}
