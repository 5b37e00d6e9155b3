"""The feature job through its seams: a scripted `Agent` (no model), the real verifier running a
real one-line check in the workspace, and a `Landing` that records when it is asked to land.

What the job owes whoever drives it: a pass ends the feature and is landed (only a pass is);
a failed check's output is in the next attempt's prompt; attempts run out into `failed`; a stop
raised inside an attempt leaves the feature unpassed, unlanded, and re-raises.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from orchestrator.commands.rendering.output import PlainRenderer
from orchestrator.config import RunConfig
from orchestrator.json_types import ApiMessage
from orchestrator.llm.errors import LimitReached
from orchestrator.run.attempt.agent_loop import AgentSession, AttemptOutcome
from orchestrator.run.attempt.feature_job import FeatureJob, JobSettings
from orchestrator.run.attempt.feature_prompt import strategy_system_prompt
from orchestrator.run.attempt.recorder import FeatureRecorder, LogHeading
from orchestrator.run.base.books import RunBooks
from orchestrator.run.checks.running.check_command import CheckVerifier
from orchestrator.run.factory import build_parts
from orchestrator.run.finishing import PassFinisher
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.spec.load import load_spec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.events import EventSink
from orchestrator.store.run_state import RunState
from orchestrator.tools.report import FeatureReport
from shared_base.check_result import CheckResult
from tests.cli_helpers import write_spec
from tests.environments import unsandboxed
from tests.sdk_doubles import StreamsCreate

# The real check: passes once the agent made `done.txt`; otherwise prints FAILURE (which the
# prompt's copy of the command does not hold: `tr` makes it) and exits 1.
CHECK = "test -f done.txt || { echo DONE_TXT_MISSING | tr _ -; exit 1; }"
FAILURE = "DONE-TXT-MISSING"

# What one attempt does in the workspace, given the attempt's number.
Work = Callable[[Path, int], None]


class NoModel(StreamsCreate):
    """The SDK the run's client is built on: a scripted agent never calls it."""

    def __init__(self) -> None:
        self.messages = self

    def create(self, **request: Any) -> NoReturn:
        raise AssertionError("the scripted agent made a model call")


@dataclass
class ScriptedAgent:
    """An `Agent` that does `work` in the workspace and reports, keeping each prompt it was given."""

    work: Work
    prompts: list[str] = field(default_factory=list)
    name: str = "builtin"

    def system_prompt(self, spec: FeatureSpec, strategy: str) -> str:
        return "You build software."

    def attempt(self, session: AgentSession, history: list[ApiMessage], prompt: str, feature_id: str) -> AttemptOutcome:
        self.prompts.append(prompt)
        self.work(session.tool_context.environment.workspace, len(self.prompts))
        return AttemptOutcome(stop="reported", report=FeatureReport(summary=f"attempt {len(self.prompts)}"), turns=1)

    def run_began(self, state: RunState, root: Path) -> None:
        return None


@dataclass
class Landing:
    """Lands nothing; keeps which attempts it was asked to land, and can refuse the first ones."""

    refuse: int = 0  # how many passes to turn into a failure (as a merge conflict would)
    landed: list[int] = field(default_factory=list)
    settled_count: int = 0

    def land(self, job: FeatureJob, attempt: int) -> CheckResult | None:
        self.landed.append(attempt)
        if len(self.landed) <= self.refuse:
            return CheckResult(command="merge", success=False, exit_code=1, attempt=attempt, output="CONFLICT in a.txt")
        return None

    def settled(self, job: FeatureJob) -> None:
        self.settled_count += 1


def _job(tmp_path: Path, agent: ScriptedAgent, landing: Landing, max_attempts: int = 3) -> tuple[FeatureJob, RunBooks]:
    project = tmp_path / "project"
    project.mkdir()
    loaded, config = load_spec(write_spec(project, 1, verify=CHECK)), RunConfig(commit=False)
    paths = ProjectPaths.for_project(project)
    events = EventSink(PlainRenderer(out=io.StringIO(), err=io.StringIO()), paths.events_log)
    parts = build_parts(loaded, config, paths, events, sdk=NoModel(), agent=agent)
    books = RunBooks(parts.store, parts.spend)
    feature = loaded.spec.features[0]
    environment = unsandboxed(project, {"PATH": "/usr/bin:/bin"})
    settings = JobSettings(config=config, spec=loaded.spec, system=strategy_system_prompt(loaded.spec, config.context),
                           environment=environment, max_attempts=max_attempts, index=1, total=1, agent=agent)
    recorder = FeatureRecorder(feature, books, parts.logs, events, parts.memory,
                               LogHeading(config.model, config.context, CHECK))
    finisher = PassFinisher(books, parts.context, project, config.commit, events)
    job = FeatureJob(feature, workspace=project, client=parts.client, context=parts.context,
                     verifier=CheckVerifier(environment), recorder=recorder, settings=settings,
                     finish_pass=finisher.finish, landing=landing)
    return job, books


def _done_on(*attempts: int) -> Work:
    def work(workspace: Path, attempt: int) -> None:
        if attempt in attempts:
            (workspace / "done.txt").write_text("done\n")
    return work


def test_a_pass_on_the_first_attempt_ends_the_feature_and_is_landed_once(tmp_path: Path) -> None:
    agent, landing = ScriptedAgent(_done_on(1)), Landing()
    job, books = _job(tmp_path, agent, landing)

    job.run()

    entry = books.state.feature("feat-01")
    assert (entry.status, entry.attempts, len(agent.prompts)) == ("passed", 1, 1)
    assert landing.landed == [1] and landing.settled_count == 1
    assert "## Last Verification Result" not in agent.prompts[0]


def test_a_failed_check_is_fed_into_the_next_prompt_and_only_the_pass_is_landed(tmp_path: Path) -> None:
    agent, landing = ScriptedAgent(_done_on(2)), Landing()
    job, books = _job(tmp_path, agent, landing)

    job.run()

    entry = books.state.feature("feat-01")
    assert (entry.status, entry.attempts) == ("passed", 2)
    assert FAILURE not in agent.prompts[0]
    assert FAILURE in agent.prompts[1]
    assert landing.landed == [2] and landing.settled_count == 2


def test_attempts_used_up_fail_the_feature_and_nothing_is_landed(tmp_path: Path) -> None:
    agent, landing = ScriptedAgent(_done_on()), Landing()
    job, books = _job(tmp_path, agent, landing, max_attempts=2)

    job.run()

    entry = books.state.feature("feat-01")
    assert (entry.status, entry.attempts, len(agent.prompts)) == ("failed", 2, 2)
    assert entry.reason == "check still failing after 2 attempt(s)"
    assert landing.landed == []


def test_a_pass_the_landing_refuses_becomes_that_attempts_failure_and_the_next_attempt_sees_it(tmp_path: Path) -> None:
    agent, landing = ScriptedAgent(_done_on(1, 2)), Landing(refuse=1)
    job, books = _job(tmp_path, agent, landing)

    job.run()

    entry = books.state.feature("feat-01")
    assert (entry.status, entry.attempts) == ("passed", 2)
    assert landing.landed == [1, 2]
    assert "CONFLICT in a.txt" in agent.prompts[1]


def test_a_cap_reached_inside_an_attempt_stops_the_job_unpassed_and_unlanded(tmp_path: Path) -> None:
    def capped(workspace: Path, attempt: int) -> None:
        (workspace / "done.txt").write_text("done\n")  # the work is there: only the stop keeps it from a pass
        if attempt == 2:
            raise LimitReached("the next call would pass --max-cost")

    agent, landing = ScriptedAgent(capped), Landing(refuse=1)
    job, books = _job(tmp_path, agent, landing)

    with pytest.raises(LimitReached):
        job.run()

    entry = books.state.feature("feat-01")
    assert entry.status != "passed" and entry.attempts == 1
    assert landing.landed == [1]  # the first pass (refused); the stopped attempt's work is never landed
    stored = books.store.load()
    assert stored is not None and stored.feature("feat-01").attempts == 1  # recorded before the stop
