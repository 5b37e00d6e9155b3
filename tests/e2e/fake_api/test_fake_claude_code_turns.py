"""The fake's scripted agent speaks Claude Code when a request offers Claude Code's tools, and
the built-in agent's tools otherwise; seen over HTTP with the `anthropic` SDK, as a client would."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, edit_str_replace, edit_view, report, text
from fake_messages_api.server import FakeAPI
from tests.fake_api_fixtures import running_fake_api

MODEL = "claude-sonnet-5"
PROJECT = "/work/project"
_SCHEMA = {"type": "object", "properties": {}}
# What the bundled Claude Code CLI offers (a subset: the fake only needs these names).
CLAUDE_CODE_TOOLS = [
    {"name": name, "description": f"Claude Code's {name}", "input_schema": _SCHEMA}
    for name in ("Bash", "Edit", "Read", "Write", "Agent", "ToolSearch")
]
BUILTIN_TOOLS: list[dict[str, Any]] = [
    {"type": "bash_20250124", "name": "bash"},
    {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
    {"name": "report_feature", "description": "Report what was done.", "input_schema": _SCHEMA},
]
# Where Claude Code states its working directory: a system-reminder in the first user message.
ENVIRONMENT = (
    "<system-reminder>\n# Environment\nYou have been invoked in the following environment: \n"
    f" - Primary working directory: {PROJECT}\n - Is a git repository: true\n</system-reminder>"
)
FEATURE = "## Feature\nID: feat-01\nName: the first feature\n"


@pytest.fixture
def fake() -> Iterator[FakeAPI]:
    with running_fake_api() as fake:
        yield fake


def _first_reply(fake: FakeAPI, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    client = fake.client()
    message = client.messages.create(
        model=MODEL, max_tokens=1024, tools=tools,
        messages=[{"role": "user", "content": [{"type": "text", "text": ENVIRONMENT}, {"type": "text", "text": FEATURE}]}],
    )
    return [block.model_dump() for block in message.content if block.type != "thinking"]


def _calls(blocks: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]


def test_a_created_file_is_read_then_written_at_its_absolute_path(fake: FakeAPI) -> None:
    fake.plans["feat-01"] = [[text("Writing."), edit_create("pkg/mod.py", "x = 1\n"), edit_create("/elsewhere/a.txt", "a")]]

    blocks = _first_reply(fake, CLAUDE_CODE_TOOLS)

    assert blocks[0] == {"type": "text", "text": "Writing.", "citations": None}
    assert _calls(blocks) == [
        ("Read", {"file_path": f"{PROJECT}/pkg/mod.py"}),
        ("Write", {"file_path": f"{PROJECT}/pkg/mod.py", "content": "x = 1\n"}),
        ("Read", {"file_path": "/elsewhere/a.txt"}),  # an absolute path is the model's to choose
        ("Write", {"file_path": "/elsewhere/a.txt", "content": "a"}),
    ]
    ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    assert len(set(ids)) == len(ids)


def test_edits_views_commands_and_the_report_become_claude_codes_calls(fake: FakeAPI) -> None:
    fake.plans["feat-01"] = [[
        edit_str_replace("a.py", "old", "new"), edit_view("b.py"), bash("pytest -q"),
        report("Did it", decisions=["d1"], constraints=["c1"], notes="n"),
    ]]

    calls = _calls(_first_reply(fake, CLAUDE_CODE_TOOLS))

    assert calls == [
        ("Read", {"file_path": f"{PROJECT}/a.py"}),
        ("Edit", {"file_path": f"{PROJECT}/a.py", "old_string": "old", "new_string": "new"}),
        ("Read", {"file_path": f"{PROJECT}/b.py"}),
        ("Bash", {"command": "pytest -q"}),
        ("mcp__orchestrate__report_feature",
         {"summary": "Did it", "decisions": ["d1"], "constraints": ["c1"], "notes": "n"}),
    ]


def test_the_builtin_agent_still_gets_the_builtin_tools(fake: FakeAPI) -> None:
    fake.plans["feat-01"] = [[edit_create("pkg/mod.py", "x = 1\n"), bash("ls"), report("Did it")]]

    calls = _calls(_first_reply(fake, BUILTIN_TOOLS))

    assert [name for name, _ in calls] == ["str_replace_based_edit_tool", "bash", "report_feature"]
    assert calls[0][1] == {"command": "create", "path": "pkg/mod.py", "file_text": "x = 1\n"}


def test_steps_count_replies_so_a_read_riding_along_adds_no_step(fake: FakeAPI) -> None:
    fake.plans["feat-01"] = [[edit_create("a.txt", "a")], [bash("cat a.txt")]]
    client = fake.client()
    first = client.messages.create(
        model=MODEL, max_tokens=1024, tools=CLAUDE_CODE_TOOLS,
        messages=[{"role": "user", "content": ENVIRONMENT + "\n" + FEATURE}],
    )
    uses = [b for b in first.content if b.type == "tool_use"]
    results = [{"type": "tool_result", "tool_use_id": b.id, "content": "ok"} for b in uses]

    second = client.messages.create(
        model=MODEL, max_tokens=1024, tools=CLAUDE_CODE_TOOLS,
        messages=[
            {"role": "user", "content": ENVIRONMENT + "\n" + FEATURE},
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": results},
        ],
    )

    assert [(b.name, b.input) for b in second.content if b.type == "tool_use"] == [("Bash", {"command": "cat a.txt"})]


def _post(fake: FakeAPI, body: dict[str, Any], beta: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"x-api-key": "test-key", "anthropic-version": "2023-06-01", "content-type": "application/json"}
    if beta:
        headers["anthropic-beta"] = beta
    request = urllib.request.Request(f"{fake.base_url}/v1/messages?beta=true", json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_system_turn_is_taken_with_claude_codes_beta_and_refused_without_it(fake: FakeAPI) -> None:
    """Claude Code sends its environment as a `system`-role turn under the per-turn-control beta."""
    fake.plans["feat-01"] = [[edit_create("a.txt", "a")]]
    system_turn: dict[str, Any] = {
        "role": "system", "content": [{"type": "text", "text": ENVIRONMENT}], "output_config": {"effort": "medium"},
    }
    body = {"model": MODEL, "max_tokens": 1024, "tools": CLAUDE_CODE_TOOLS, "messages": [
        {"role": "user", "content": [{"type": "text", "text": FEATURE}]}, system_turn,
    ]}

    refused, error = _post(fake, body, None)
    taken, message = _post(fake, body, "claude-code-20250219,per-turn-control-2026-07-01")
    system_turn["content"] = [{"type": "image", "source": {"type": "url", "url": "http://x/y.png"}}]
    not_text, _ = _post(fake, body, "per-turn-control-2026-07-01")

    assert refused == 400 and "messages.1.role" in error["error"]["message"]
    assert taken == 200
    # ...and the working directory it states there is the one the agent's paths are made against.
    assert _calls(message["content"]) == [
        ("Read", {"file_path": f"{PROJECT}/a.txt"}), ("Write", {"file_path": f"{PROJECT}/a.txt", "content": "a"}),
    ]
    assert not_text == 400


# What Claude Code names for a model it does not know (the demo's `demo-scripted-sonnet`): no
# per-turn control, but still its environment as a `system`-role turn, which the API takes.
BETAS_FOR_AN_UNKNOWN_MODEL = ("claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,"
                              "mid-conversation-tool-changes-2026-07-01,effort-2025-11-24")


def test_a_system_turn_is_taken_under_the_betas_claude_code_names_for_any_model(fake: FakeAPI) -> None:
    fake.plans["feat-01"] = [[edit_create("a.txt", "a")]]
    body = {"model": MODEL, "max_tokens": 1024, "tools": CLAUDE_CODE_TOOLS, "messages": [
        {"role": "user", "content": [{"type": "text", "text": FEATURE}]},
        {"role": "system", "content": [{"type": "text", "text": ENVIRONMENT}]},
    ]}

    taken, message = _post(fake, body, BETAS_FOR_AN_UNKNOWN_MODEL)

    assert taken == 200, message
