"""The seam between a feature job and the agent that makes its attempts.

An agent takes one attempt's `AgentSession` (model, turn limit, system text, the tool context
with its `CommandEnvironment` and protected files, the event sink) with the attempt's prompt,
and returns the `AttemptOutcome` the job needs: the report, how it stopped, turns, tool calls,
tokens and cost. The job neither knows nor cares which agent it was: the check decides.

The built-in agent is this program's own loop (`agent_loop.run_agent`). Claude Code
(`orchestrator.claude_code`) sits above this layer and is handed in by the command that
builds the run, so nothing here imports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from orchestrator.json_types import ApiMessage
from orchestrator.run.attempt.agent_loop import AgentSession, AttemptOutcome, run_agent
from orchestrator.run.attempt.feature_prompt import strategy_system_prompt
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.store.run_state import RunState


class Agent(Protocol):
    """What makes one attempt at a feature."""

    @property
    def name(self) -> str:
        """`builtin` or `claude-code`, as `--agent` names it."""
        ...

    def system_prompt(self, spec: FeatureSpec, strategy: str) -> str:
        """The system text of every attempt of the run (the same for all: it is cached)."""
        ...

    def attempt(self, session: AgentSession, history: list[ApiMessage], prompt: str, feature_id: str) -> AttemptOutcome:
        """Work on the feature from `prompt` (after `history`, for agents that replay it) until done."""
        ...

    def run_began(self, state: RunState, root: Path) -> None:
        """The run's state is loaded (new, or resumed) and no agent has worked yet: record in `state`
        what must be judged against the project as the run first found it."""
        ...


class BuiltinAgent:
    """This program's own three-tool loop."""

    name = "builtin"

    def system_prompt(self, spec: FeatureSpec, strategy: str) -> str:
        return strategy_system_prompt(spec, strategy)

    def attempt(self, session: AgentSession, history: list[ApiMessage], prompt: str, feature_id: str) -> AttemptOutcome:
        return run_agent(session, history, prompt, feature_id)

    def run_began(self, state: RunState, root: Path) -> None:
        """Nothing of the project configures this loop."""


BUILTIN_AGENT = BuiltinAgent()
