"""The runner in this process against the fake API: what it keeps in state, and how it stops when
its files cannot be written (a full disk): cleanly, resumable, without a traceback. The failing
writes come in through the runner's seams (`RunParts`: its feature logs, its state store)."""

from __future__ import annotations

import errno
import io
import json
from pathlib import Path

import anthropic
import pytest

from orchestrator.commands.rendering.output import PlainRenderer
from orchestrator.config import RunConfig
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.run.factory import build_parts
from orchestrator.run.runner import Runner, RunOptions
from orchestrator.spec.load import load_spec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.events import EventSink
from orchestrator.store.state import StateStore
from shared_base.files import LinkRefused
from tests.cli_helpers import write_spec


def run_once(project: Path, spec: Path, fake, *, logs=None, store=None) -> tuple[int, str]:
    """One run; `logs` and `store` (classes) replace the real feature logs and state store."""
    err = io.StringIO()
    paths = ProjectPaths.for_project(project)
    events = EventSink(PlainRenderer(out=io.StringIO(), err=err), paths.events_log)
    sdk = anthropic.Anthropic(base_url=fake.base_url, api_key="sk-ant-test-0123456789abcdef", max_retries=0)
    loaded, config = load_spec(spec), RunConfig(commit=False)
    parts = build_parts(loaded, config, paths, events, sdk=sdk,
                        store=store(paths, on_warning=events.warn) if store else None)
    if logs is not None:
        parts.logs = logs(paths)
    try:
        result = Runner(loaded, config, RunOptions(), paths, events, parts).run()
    finally:
        sdk.close()
    return result.exit_code, err.getvalue()


def test_a_full_disk_stops_the_run_with_exit_3_and_the_next_run_resumes(fake_api, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(project, 3)

    class DiskFullAtFeat02(FeatureLogs):
        def write(self, log):
            if log.id == "feat-02":
                raise OSError(errno.ENOSPC, "No space left on device")
            super().write(log)

    code, stderr = run_once(project, spec, fake_api, logs=DiskFullAtFeat02)

    assert code == 3
    assert "No space left on device" in stderr and "run again to resume" in stderr
    state = json.loads((project / ".autonomous/state/execution-state.json").read_text())
    assert state["features"]["feat-01"]["status"] == "passed"
    assert state["stopReason"] and "could not write" in state["stopReason"]

    fake_api.reset()
    code, stderr = run_once(project, spec, fake_api)

    assert code == 0, stderr
    assert not fake_api.agent_requests("feat-01")


def test_a_final_state_that_cannot_be_saved_is_reported_not_raised(fake_api, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(project, 1)

    saves = []

    class NoSpaceAfterTheFirstSave(StateStore):
        def save(self, state):  # the first save, at the start, goes through
            saves.append(state)
            if len(saves) > 1:
                raise OSError(errno.ENOSPC, "No space left on device")
            super().save(state)

    code, stderr = run_once(project, spec, fake_api, store=NoSpaceAfterTheFirstSave)

    assert code == 3
    assert "final state could not be saved" in stderr
    # The feature log, written as the feature finished, still proves the pass.
    assert json.loads((project / ".autonomous/logs/feat-01.json").read_text())["status"] == "passed"


def test_a_link_planted_in_the_state_directory_is_not_swallowed(fake_api, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(project, 1)
    outside = tmp_path / "outside"
    outside.mkdir()

    class PlantLinkThenWrite(FeatureLogs):
        def write(self, log):
            state_dir = project / ".autonomous/state"
            for child in state_dir.iterdir():
                child.unlink()
            state_dir.rmdir()
            state_dir.symlink_to(outside, target_is_directory=True)
            super().write(log)

    with pytest.raises(LinkRefused):
        run_once(project, spec, fake_api, logs=PlantLinkThenWrite)
    assert list(outside.iterdir()) == []


def test_a_passing_checks_output_stays_in_its_log_not_in_the_state(fake_api, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(project, 2, verify="test -f features/{id}.txt && echo 'collected 12 items: 12 passed'")

    code, stderr = run_once(project, spec, fake_api)

    assert code == 0, stderr
    state = json.loads((project / ".autonomous/state/execution-state.json").read_text())
    log = json.loads((project / ".autonomous/logs/feat-01.json").read_text())
    assert "12 passed" in log["verification"]["output"]
    assert state["features"]["feat-01"]["lastVerification"]["output"] == ""
    assert state["features"]["feat-01"]["lastVerification"]["success"] is True


@pytest.mark.parametrize("fault", [
    OSError(errno.ENAMETOOLONG, "File name too long", "x" * 300), ValueError("a bug"),
], ids=["oserror-not-a-write", "any-other-exception"])
def test_a_bug_is_an_internal_error_not_a_failed_write(fake_api, tmp_path, fault):
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(project, 2)

    class BugAtFeat02(FeatureLogs):
        def write(self, log):
            if log.id == "feat-02":
                raise fault
            super().write(log)

    code, stderr = run_once(project, spec, fake_api, logs=BugAtFeat02)

    assert code == 70, stderr
    assert "could not write" not in stderr
    assert "internal error" in stderr and "bug in orchestrate" in stderr and "report it" in stderr
    assert "test_runner_in_process.py" in stderr and "in write" in stderr  # where it was raised
    state = json.loads((project / ".autonomous/state/execution-state.json").read_text())
    assert state["features"]["feat-01"]["status"] == "passed"  # what was done is saved
