"""The model endpoint is reachable only by the program meant to call it (issue 40, break 3).

With an API key, Claude Code's calls go through the attempt's metering proxy, which holds the
real key. The agent's shell used to find the proxy's address and key in its environment, and
the proxy passed on any body: another model, `speed`, server tools that fetch any URL from
Anthropic's side. Now, run with the real bundled CLI against the fake API:

- under `--sandbox bwrap` the agent's commands get neither the key nor a route: every port
  listening in the sandbox is tried, and the metering proxy answers none of them;
- under `--sandbox none` (no boundary: the commands run as the user) the shell still has both,
  and the proxy itself refuses every call the run did not configure; nothing reaches the API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.agent_turn import tool_results_of
from fake_messages_api.scripted_agent.plans import bash, edit_create, report
from fake_messages_api.server import FakeAPI
from tests.cli_helpers import run_cli, write_spec
from tests.e2e.safety.test_sandbox import bwrap_problem
from tests.git_helpers import init_repo

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")

MODEL = "claude-sonnet-5-5"
# Each a call the run did not configure: (what, request body changes, anthropic-beta header).
ROGUE_CALLS = {
    "another model": ({"model": "claude-opus-4-1"}, ""),
    "speed": ({"speed": "fast"}, ""),
    "web_fetch": ({"tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]}, ""),
    "web_search": ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, ""),
    "mcp_servers": ({"mcp_servers": [{"type": "url", "url": "https://example.com/mcp", "name": "x"}]}, ""),
    "1h cache": ({"system": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}, ""),
    "1M context": ({}, "context-1m-2025-08-07"),
}
# The agent's command: the endpoint its environment names and, with SCAN=1 (in the sandbox's own
# network namespace: only its bridges listen there), every listening port of its loopback, each
# sent every rogue call with whatever key the environment holds.
ATTACK = """python3 - <<'PY'
import json, os, socket, urllib.parse
key = os.environ.get("ANTHROPIC_API_KEY", "")
print("key:", key or "(none)")
listening = [line.split() for line in open("/proc/net/tcp").readlines()[1:]] if os.environ.get("SCAN") else []
ports = {int(row[1].split(":")[1], 16) for row in listening if row[3] == "0A" and row[1].startswith("0100007F")}
named = urllib.parse.urlsplit(os.environ.get("ANTHROPIC_BASE_URL", "")).port
ports |= {named} if named else set()
for what, (extra, beta) in json.loads(ROGUE_JSON).items():
    body = json.dumps({"model": "MODEL_ID", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}], **extra})
    for port in sorted(ports):
        head = (f"POST /v1/messages HTTP/1.1\\r\\nhost: 127.0.0.1\\r\\nx-api-key: {key}\\r\\n"
                f"anthropic-version: 2023-06-01\\r\\ncontent-type: application/json\\r\\nanthropic-beta: {beta}\\r\\n"
                f"content-length: {len(body)}\\r\\nconnection: close\\r\\n\\r\\n")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(head.encode() + body.encode())
                answer = b""
                while chunk := s.recv(4096):  # the whole answer: the connection closes after it
                    answer += chunk
                print("answer", what, port, answer[:600])
        except OSError as err:
            print("answer", what, port, "no route:", err)
PY""".replace("ROGUE_JSON", repr(json.dumps(ROGUE_CALLS))).replace("MODEL_ID", MODEL)


def _results(fake: FakeAPI) -> str:
    return "\n".join(r.content for req in fake.agent_requests() for r in tool_results_of(req.body["messages"][-1]))


def _run(fake_api: FakeAPI, tmp_path: Path, sandbox: str, jobs: str = "1") -> Any:
    scan = "export SCAN=1; " if sandbox == "bwrap" else ""
    features = int(jobs)
    for fid in (f"feat-{index:02d}" for index in range(1, features + 1)):
        fake_api.plans[fid] = [[bash(scan + ATTACK)], [edit_create(f"features/{fid}.txt", "done\n")], [report("done")]]
    project = tmp_path / "project"
    project.mkdir()
    if features > 1:  # --jobs works in worktrees of a repository
        init_repo(project)
    spec = write_spec(tmp_path, features)
    result = run_cli(["run", str(spec), "--agent", "claude-code", "--model", MODEL, "--sandbox", sandbox, "--json",
                      "--jobs", jobs], project, fake_api, timeout=600, HOME=str(tmp_path / "home"))
    assert result.code == 0, result.stderr[-3000:]
    assert "answer" in _results(fake_api), "the attack never ran"
    return result


def _only_the_runs_calls_reached_the_api(fake: FakeAPI) -> None:
    bodies = [r.body for r in fake.requests if r.kind == "agent"]
    assert bodies and {b["model"] for b in bodies} == {MODEL}
    assert not any({"speed", "mcp_servers"} & set(b) for b in bodies)
    assert not any(t.get("type") for b in bodies for t in b.get("tools", []))
    assert not any("context-1m" in r.headers.get("anthropic-beta", "") for r in fake.requests)
    assert '"1h"' not in json.dumps(bodies)


@pytest.mark.attack
@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_agents_commands_get_no_key_and_no_route_to_the_metering_proxy(fake_api: FakeAPI, tmp_path: Path,
                                                                          jobs: str) -> None:
    """Mode: `--agent claude-code` with an API key, `--sandbox bwrap` (Bash in the nested sandbox), serial and `--jobs 2`."""
    _run(fake_api, tmp_path, "bwrap", jobs)

    seen = _results(fake_api)
    assert "key: (none)" in seen and "orchestrate-proxy-" not in seen
    assert "metering proxy" not in seen  # no port the commands reach is the proxy's
    _only_the_runs_calls_reached_the_api(fake_api)


@pytest.mark.attack
def test_the_metering_proxy_passes_only_the_calls_the_run_configured(fake_api: FakeAPI, tmp_path: Path) -> None:
    """Mode: `--agent claude-code` with an API key, `--sandbox none`: the shell has the proxy's
    key and route (no boundary at all there), and the proxy refuses each rogue call itself."""
    result = _run(fake_api, tmp_path, "none")

    seen = _results(fake_api)
    assert "key: orchestrate-proxy-" in seen
    for what in ROGUE_CALLS:
        refused = [line for line in seen.splitlines() if line.startswith(f"answer {what} ") and "metering proxy" in line]
        assert refused and all("400" in line for line in refused), (what, seen)
    _only_the_runs_calls_reached_the_api(fake_api)
    assert "the metering proxy refused a call" in result.stdout
