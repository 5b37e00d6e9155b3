"""The sign-in guard resolves a path as Claude Code's CLI does, in its sandbox (issue 40, break 5).

The agent's Bash makes a link to the sign-in in the sandbox's own `/tmp`, which this process
does not see; `Read` of the link used to pass the guard (resolved here, the link does not
exist) and return the file. Mode: `--agent claude-code` on a Claude plan under `--sandbox bwrap`,
the real bundled CLI against the fake (`test_claude_code_sign_in_e2e` says how a plan run is
simulated offline). In api-key mode the CLI's home holds no sign-in, and the same guard applies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.agent_turn import AgentTurn, tool_results_of
from fake_messages_api.scripted_agent.plans import text, tool_use
from fake_messages_api.server import FakeAPI
from tests.e2e.claude_code.test_claude_code_sign_in_e2e import CANARIES, _attempt, _signed_in_home, pytestmark  # noqa: F401


def _through_sandbox_links(home: Path) -> Any:
    attacks = [
        ("Bash", {"command": f"ln -s {home}/.claude.json /tmp/account.json; ln -s {home}/.claude /tmp/cdir; "
                             f"mkdir -p /tmp/a && ln -s /tmp/cdir /tmp/a/b; echo linked-in-tmp", "description": "links"}),
        ("Read", {"file_path": "/tmp/account.json"}),
        ("Read", {"file_path": "/tmp/cdir/.credentials.json"}),
        ("Read", {"file_path": "/tmp/a/b/../b/.credentials.json"}),
        ("Grep", {"pattern": "canary", "path": "/tmp/cdir", "output_mode": "content"}),
        ("Bash", {"command": "echo note > /tmp/note.txt; echo still-working > done.txt", "description": "work"}),
        ("Read", {"file_path": "/tmp/note.txt"}),  # a file of the sandbox's /tmp that leads nowhere: read
    ]

    def plan(turn: AgentTurn) -> list[Any]:
        return [tool_use(*attacks[turn.step])] if turn.step < len(attacks) else [text("done")]

    return plan


@pytest.mark.attack
def test_a_link_in_the_sandboxs_own_tmp_does_not_lead_read_to_the_sign_in(tmp_path: Path) -> None:
    home, project = _signed_in_home(tmp_path / "home"), tmp_path / "project"
    project.mkdir()
    with FakeAPI() as fake:
        fake.default_plan = _through_sandbox_links(home)
        messages = _attempt(fake, home, project)
        requests = list(fake.requests)
    assert type(messages[-1]).__name__ == "ResultMessage" and not messages[-1].is_error, messages[-1]
    results = "\n".join(r.content for request in requests for r in tool_results_of(request.body["messages"][-1]))
    assert "linked-in-tmp" in results and (project / "done.txt").read_text() == "still-working\n"
    for canary in CANARIES:
        assert canary not in results, f"{canary} reached the agent through a link: {results[-2000:]}"
    assert results.count("Claude Code's sign-in") >= 3  # each Read refused, saying why
    assert "note" in results  # an ordinary file of the sandbox's /tmp is still read
