"""One `FeatureJob`, built by hand from its seams: an in-process model (no HTTP), a scripted
verifier and a workspace that is not the project root, as a parallel worker's would be.

These tests pin what the job owes whoever drives it: it edits only its workspace, it feeds a
failed check back into the next attempt's prompt, and it records each attempt in the state and
the feature log.
"""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import Message

from orchestrator.commands.rendering.output import PlainRenderer
from orchestrator.config import RunConfig
from orchestrator.run.attempt.feature_job import FeatureJob, JobSettings
from orchestrator.run.attempt.feature_prompt import strategy_system_prompt
from orchestrator.run.attempt.recorder import FeatureRecorder, LogHeading
from orchestrator.run.base.books import RunBooks
from orchestrator.run.factory import build_parts
from orchestrator.run.finishing import PassFinisher
from orchestrator.spec.load import load_spec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.events import EventSink
from shared_base.check_result import CheckResult
from tests.cli_helpers import write_spec
from tests.environments import unsandboxed
from tests.sdk_doubles import StreamsCreate

_ids = itertools.count(1)


def _message(content: list[dict[str, Any]], stop_reason: str) -> Message:
    return Message.model_validate({
        "id": f"msg_{next(_ids)}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 0,
                  "cache_creation_input_tokens": 0},
    })


class InProcessModel(StreamsCreate):
    """Stands in for `anthropic.Anthropic`: each attempt writes `attempt-<n>.txt`, then stops."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.messages = self

    def create(self, **request: Any) -> Message:
        self.requests.append(request)
        if _is_tool_turn(request):  # a tool's result, or the reminder to report: the attempt's work is done
            return _message([{"type": "text", "text": "done"}], "end_turn")
        attempt = sum(1 for r in self.requests if not _is_tool_turn(r))
        command = f"echo work > attempt-{attempt}.txt"
        return _message([{"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": "bash",
                          "input": {"command": command}}], "tool_use")


def _is_tool_turn(request: dict[str, Any]) -> bool:
    """Any request of an attempt but its first (which holds the prompt alone)."""
    return len(request["messages"]) > 1


def _prompt_text(request: dict[str, Any]) -> str:
    content = request["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if isinstance(block, dict))


class ScriptedVerifier:
    """Fails the first attempt with a recognisable output, passes the rest."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def check(self, command: str | None, attempt: int) -> CheckResult:
        self.calls.append(attempt)
        if attempt == 1:
            return CheckResult(command=command, success=False, exit_code=1, attempt=attempt,
                                      output="AssertionError: slugify('A B') != 'a-b'")
        return CheckResult(command=command, success=True, exit_code=0, attempt=attempt, output="1 passed")


def _job(project: Path, workspace: Path, model: InProcessModel, verifier: ScriptedVerifier) -> tuple[FeatureJob, RunBooks]:
    spec_path = write_spec(project, 1, verify="true")
    loaded, config = load_spec(spec_path), RunConfig(commit=False)
    paths = ProjectPaths.for_project(project)
    events = EventSink(PlainRenderer(out=io.StringIO(), err=io.StringIO()), paths.events_log)
    parts = build_parts(loaded, config, paths, events, sdk=model)
    books = RunBooks(parts.store, parts.spend)
    feature = loaded.spec.features[0]
    settings = JobSettings(config=config, spec=loaded.spec, system=strategy_system_prompt(loaded.spec, config.context),
                           environment=unsandboxed(workspace, {"PATH": "/usr/bin:/bin"}), max_attempts=3, index=1, total=1)
    heading = LogHeading(config.model, config.context, loaded.spec.check_command(feature))
    recorder = FeatureRecorder(feature, books, parts.logs, events, parts.memory, heading)
    finisher = PassFinisher(books, parts.context, project, config.commit, events)
    job = FeatureJob(feature, workspace=workspace, client=parts.client, context=parts.context, verifier=verifier,
                     recorder=recorder, settings=settings, finish_pass=finisher.finish)
    return job, books


@pytest.fixture
def project_and_workspace(tmp_path: Path) -> tuple[Path, Path]:
    project, workspace = tmp_path / "project", tmp_path / "worktree"
    project.mkdir()
    workspace.mkdir()
    return project, workspace


def test_a_failed_check_is_fed_back_and_the_next_attempt_passes(project_and_workspace):
    project, workspace = project_and_workspace
    model, verifier = InProcessModel(), ScriptedVerifier()
    job, books = _job(project, workspace, model, verifier)

    job.run()

    entry = books.state.feature("feat-01")
    assert entry.status == "passed" and entry.attempts == 2
    assert verifier.calls == [1, 2]
    first_prompts = [_prompt_text(r) for r in model.requests if not _is_tool_turn(r)]
    assert len(first_prompts) == 2
    assert "## Last Verification Result" not in first_prompts[0]
    assert "## Last Verification Result" in first_prompts[1]
    assert "slugify('A B') != 'a-b'" in first_prompts[1]


def test_the_agent_edits_the_jobs_workspace_not_the_project(project_and_workspace):
    project, workspace = project_and_workspace
    job, _ = _job(project, workspace, InProcessModel(), ScriptedVerifier())

    job.run()

    assert sorted(p.name for p in workspace.glob("attempt-*.txt")) == ["attempt-1.txt", "attempt-2.txt"]
    assert not list(project.glob("attempt-*.txt"))


def test_each_attempt_is_in_the_feature_log_and_the_state_is_journaled(project_and_workspace):
    project, workspace = project_and_workspace
    job, _ = _job(project, workspace, InProcessModel(), ScriptedVerifier())

    job.run()

    log = json.loads((project / ".autonomous/logs/feat-01.json").read_text())
    assert log["status"] == "passed"
    assert [a["attempt"] for a in log["attemptHistory"]] == [1, 2]
    assert [a["verification"]["success"] for a in log["attemptHistory"]] == [False, True]
    journal = (project / ".autonomous/state/journal.jsonl").read_text().splitlines()
    assert any('"passed"' in line for line in journal)
