"""The first request `orchestrate context` measures and counts is the one a run sends.

`first_request` builds it apart from the agent loop (no model, no max_tokens): if either one
changed how it builds the system prompt, tools, messages or their cache breakpoints, the
estimate and the count_tokens figure would describe a request nobody sends.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from orchestrator.config import RunConfig
from orchestrator.json_types import ApiMessage
from orchestrator.llm.attempt_model import attempt_model
from orchestrator.llm.client import ModelClient
from orchestrator.llm.conversation import assistant_text, user_text
from orchestrator.llm.costs.spend import Spend
from orchestrator.run.attempt.agent_loop import AgentSession, run_agent
from orchestrator.run.attempt.first_request import first_request
from orchestrator.tools.context import ToolContext
from tests.environments import unsandboxed
from tests.sdk_doubles import StreamsCreate

MODEL = "claude-sonnet-4-5"


class _OneAnswer(StreamsCreate):
    """Ends the attempt at its first call (no tool use) and keeps the request it was sent."""

    def __init__(self) -> None:
        self.messages = self
        self.requests: list[dict[str, Any]] = []

    def create(self, **request: Any) -> Any:
        self.requests.append(request)
        usage = SimpleNamespace(input_tokens=300, output_tokens=5, cache_read_input_tokens=0,
                                cache_creation_input_tokens=0)
        return SimpleNamespace(content=[SimpleNamespace(type="text", text="done")], usage=usage, stop_reason="end_turn")


def test_the_first_request_context_measures_is_the_one_the_agent_loop_sends(tmp_path: Path) -> None:
    config = RunConfig(model=MODEL, thinking="2048")
    sdk = _OneAnswer()
    session = AgentSession(
        client=ModelClient(config.client_settings(), sdk, Spend()), model=MODEL, system="You build software.",
        tool_context=ToolContext(environment=unsandboxed(tmp_path)), max_turns=1, max_output_tokens=4096,
        mask_after_tokens=1_000_000, request_fields=attempt_model(config, 1, 1).request_fields(),
    )
    history: list[ApiMessage] = [user_text("WM_KIND=text_input\nBuild the parser."), assistant_text("Built it.")]
    prompt = "## Feature\nID: feat-01\nBuild the widget."

    run_agent(session, history, prompt, "feat-01")
    draft = first_request(session.system, session.tools, history, prompt)

    sent = sdk.requests[0]
    assert set(sent) == {*draft, "model", "max_tokens", "thinking", "extra_headers"}
    # Byte for byte, as the SDK writes them into the body.
    assert {key: json.dumps(sent[key]) for key in draft} == {key: json.dumps(value) for key, value in draft.items()}
    assert history == [user_text("WM_KIND=text_input\nBuild the parser."), assistant_text("Built it.")]  # not marked
