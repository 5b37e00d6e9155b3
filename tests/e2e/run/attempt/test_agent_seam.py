"""The seam between a feature job and its agent: a job makes its attempts with the agent it is
given (`JobSettings.agent`), hands it the attempt's session and prompt, and treats its outcome
as it treats the built-in loop's (the report to the Context Agent, the failure fed back)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from orchestrator.json_types import ApiMessage
from orchestrator.run.attempt.agent_loop import AgentSession, AttemptOutcome
from orchestrator.run.attempt.agent_seam import BUILTIN_AGENT, Agent
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.tools.report import FeatureReport
from tests.e2e.run.attempt.test_feature_job import InProcessModel, ScriptedVerifier, _job


class RecordingAgent:
    """An agent that writes one file per attempt and reports, without any model."""

    name = "recording"

    def __init__(self) -> None:
        self.sessions: list[tuple[AgentSession, str]] = []

    def system_prompt(self, spec: FeatureSpec, strategy: str) -> str:
        return "own system prompt"

    def attempt(self, session: AgentSession, history: list[ApiMessage], prompt: str, feature_id: str) -> AttemptOutcome:
        self.sessions.append((session, prompt))
        (session.tool_context.environment.workspace / f"attempt-{session.attempt}.txt").write_text("work\n")
        report = FeatureReport(summary=f"attempt {session.attempt}", decisions=[f"decision {session.attempt}"])
        return AttemptOutcome(stop="reported", report=report, turns=2, tool_calls=1, model=session.model)


def test_a_job_makes_its_attempts_with_the_agent_it_is_given(tmp_path: Path):
    project, workspace = tmp_path / "project", tmp_path / "worktree"
    project.mkdir()
    workspace.mkdir()
    model, agent = InProcessModel(), RecordingAgent()
    job, books = _job(project, workspace, model, ScriptedVerifier())
    job.settings = dataclasses.replace(job.settings, agent=agent)

    job.run()

    assert model.requests == []  # the built-in loop never ran
    assert [session.attempt for session, _ in agent.sessions] == [1, 2]
    first, second = (prompt for _, prompt in agent.sessions)
    assert "## Feature" in first and "## Last Verification Result" not in first
    assert second.startswith("## Last Verification Result") and "slugify('A B')" in second
    session = agent.sessions[0][0]
    assert session.tool_context.environment.workspace == workspace and session.max_turns == job.settings.config.max_turns
    entry = books.state.feature("feat-01")
    assert entry.status == "passed" and entry.attempts == 2
    assert sorted(path.name for path in workspace.iterdir()) == ["attempt-1.txt", "attempt-2.txt"]


def test_the_builtin_agent_is_the_default_and_keeps_the_builtin_system_prompt(tmp_path: Path):
    project, workspace = tmp_path / "project", tmp_path / "worktree"
    project.mkdir()
    workspace.mkdir()
    job, _ = _job(project, workspace, InProcessModel(), ScriptedVerifier())
    agent: Agent = job.settings.agent
    assert agent is BUILTIN_AGENT and agent.name == "builtin"
    assert "`bash` runs a shell command" in agent.system_prompt(job.settings.spec, "compressed")
