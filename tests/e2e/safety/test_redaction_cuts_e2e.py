"""A key cut in two by a truncation is still redacted: end to end, through the CLI.

Output is cut in three places before anyone sees it: the bash tool keeps the head and the
tail of long output, the check keeps a tail, and events keep the start of a command. A key
that straddles a cut must not come out as its two halves (only `sk-ant-` looks like a key;
the rest passes whole-value redaction). Here the user's key sits in a project file that the
agent's command and the check print, padded so that each cut falls inside the key; then no
16-character fragment of it may appear in any request the fake API received, in stdout or
stderr, or in any file the run wrote.
"""

from __future__ import annotations

import os
from pathlib import Path

from fake_messages_api.scripted_agent.plans import bash, report, text
from orchestrator.run.checks.running.check_command import DEFAULT_OUTPUT_LIMIT, _omitted_note
from orchestrator.tools.context import ToolContext
from tests.cli_helpers import read_json, run_cli, write_spec

KEY = "sk-ant-api03-CUTxyzQ7m2Lk9Pw4Rt6Vb8Nc1Dx3Fz5Hj7Kl0Mn2Pq4Rs6Tu8Vw0Xy-AbCdEfGhIjKlMnAA"
FRAGMENT = 16
BASH_CAP = ToolContext.__dataclass_fields__["output_cap"].default
KEY_FILE = "deploy.env"


def _fragments(secret: str) -> list[str]:
    return [secret[i : i + FRAGMENT] for i in range(len(secret) - FRAGMENT + 1)]


def _leaks(haystack: str) -> int:
    """How many 16-character fragments of the key `haystack` holds (never the fragments themselves)."""
    return sum(fragment in haystack for fragment in _fragments(KEY))


def _printer(before: int, after: int) -> str:
    """A command printing `before` characters, the key (read from the project file), then `after` characters."""
    program = f"import sys; sys.stdout.write('a' * {before} + open({KEY_FILE!r}).read().strip() + 'b' * {after})"
    return f'python3 -c "{program}"'


def test_a_key_cut_by_any_truncation_leaves_no_fragment_anywhere(fake_api, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / KEY_FILE).write_text(f"{KEY}\n")
    half = BASH_CAP // 2
    # The check's kept tail starts half-way through the key (no newline to move the cut).
    total = 6000 + len(KEY) + DEFAULT_OUTPUT_LIMIT
    kept = DEFAULT_OUTPUT_LIMIT - len(_omitted_note(total))
    (project / "check.py").write_text(
        "import sys\n"
        f"key = open({KEY_FILE!r}).read().strip()\n"
        f"sys.stdout.write('c' * 6000 + key + 'd' * {kept - len(KEY) // 2})\n"
        "sys.exit(1)\n"
    )
    commands = {
        # Output kept whole in memory, cut once: the kept tail starts inside the key.
        "tail_cut": _printer(half * 3, half - len(KEY) // 2),
        # The head kept ends inside the key, 20 characters after its start.
        "head_cut": _printer(half - 20, half * 3),
        # Past what bash keeps in memory: the tail piece kept starts inside the key.
        "dropped": _printer(BASH_CAP * 3, half - len(KEY) // 2),
    }
    fake_api.plans["feat-01"] = [
        [text("Reading the settings."), *(bash(command) for command in commands.values())],
        [report("Printed the settings.")],
    ]
    spec = write_spec(project, 1, verify="python3 check.py", extra={"feat-01": {"max_attempts": 2}})

    result = run_cli(["run", str(spec), "--json", "--report", str(project / "report.json")], project, fake_api, key=KEY)

    assert result.code == 1, result.stderr[-2000:]
    state = read_json(project / ".autonomous/state/execution-state.json")
    assert state["features"]["feat-01"]["attempts"] == 2
    # The cuts fell where this test means them to: the truncation notes are there, and the
    # check's output (fed back to the retry) is its cut tail.
    tool_results = [
        block["content"] if isinstance(block["content"], str) else "".join(p.get("text", "") for p in block["content"])
        for request in fake_api.agent_requests("feat-01")
        for message in request.body["messages"] if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"] if block.get("type") == "tool_result"
    ]
    assert sum("characters elided" in content for content in tool_results) >= len(commands)
    assert any("earlier characters omitted" in request.raw.decode() for request in fake_api.agent_requests("feat-01"))

    leaks = {"stdout": _leaks(result.stdout), "stderr": _leaks(result.stderr)}
    for request in fake_api.requests:
        leaks[f"request {request.index} ({request.kind})"] = _leaks(request.raw.decode("utf-8", "replace"))
    for current, _dirs, files in os.walk(project):
        for name in files:
            path = Path(current) / name
            if path.name != KEY_FILE:
                leaks[str(path.relative_to(project))] = _leaks(path.read_text("utf-8", "replace"))
    assert {where: count for where, count in leaks.items() if count} == {}
