"""`orchestrate context`: its estimate of the whole first request covers what a run sends.

The request a run sends is the system prompt, the tools and the messages; with tools the API
also bills its own tool-use prompt and a block per Anthropic-defined tool. The estimate shown
before spending anything must count all of it, not just the feature's prompt.
"""

from __future__ import annotations

import re

from orchestrator.llm.tool_overhead import tool_overhead_tokens
from shared_base.tokens import estimate_json_tokens
from tests.cli_helpers import run_cli, write_spec

ESTIMATE = re.compile(
    r"whole first request \(estimate\): (\d+) tokens \(system prompt (\d+), tools (\d+), messages (\d+)\)"
)


def test_the_first_request_estimate_counts_system_prompt_tools_and_messages(fake_api, project):
    spec = write_spec(project, 1)
    shown = run_cli(["context", "feat-01", "--spec", str(spec)], project, None, key=None)
    assert shown.code == 0, shown.stderr
    match = ESTIMATE.search(shown.stdout)
    assert match, shown.stdout
    total, system, tools, messages = map(int, match.groups())

    assert run_cli(["run", str(spec)], project, fake_api).code == 0
    sent = fake_api.agent_requests("feat-01")[0].body

    assert system == estimate_json_tokens(sent["system"]) > 100
    assert tools == estimate_json_tokens(sent["tools"]) + tool_overhead_tokens(sent["tools"])
    assert messages == estimate_json_tokens(sent["messages"])
    assert total == system + tools + messages


def test_every_strategy_shows_the_whole_request(project):
    spec = write_spec(project, 2)

    shown = run_cli(["context", "feat-02", "--spec", str(spec), "--strategy", "all"], project, None, key=None)

    assert shown.code == 0, shown.stderr
    sizes = [tuple(map(int, m.groups())) for m in ESTIMATE.finditer(shown.stdout)]
    assert len(sizes) == 3
    for total, system, tools, messages in sizes:
        # Tools alone: the API's tool-use prompt (346) plus bash (245) and the editor (700).
        assert tools > 1291 and system > 100 and total == system + tools + messages
