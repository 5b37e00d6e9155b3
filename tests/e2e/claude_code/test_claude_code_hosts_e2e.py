"""On a Claude plan the CLI's own hosts are not its commands' hosts (issue 40, break 8).

The CLI signs in and calls the model at Anthropic's hosts, through a proxy of its own; the
agent's commands, which it runs through the shell prefix in a nested sandbox, used to inherit
that proxy and reach `*.anthropic.com` and `claude.ai` with no `allow_hosts` (data could leave
with an attacker's own key). Now the CLI's proxy carries only the CLI's connections, and its
commands get the project's proxy (its `allow_hosts`) or none.

Mode: `--agent claude-code` on a Claude plan under `--sandbox bwrap` (without a sandbox there is
no boundary; with `network = true` the user gave every host). A plan run cannot reach Anthropic
offline, so the CLI is a stand-in started exactly as a run starts the real one (`CliLaunch`, no
endpoint): it runs one agent command through `CLAUDE_CODE_SHELL_PREFIX` as Claude Code does.
Nothing leaves this machine: every probe is refused by a proxy here before it connects.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.safety.bubblewrap.sandbox import choose_sandbox
from orchestrator.safety.environment import CommandEnvironment
from tests.e2e.safety.test_sandbox import bwrap_problem

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")

# A CONNECT through a proxy at 127.0.0.1:PORT; prints what came back (empty: the bridge refused the connection).
PROBE = r"""python3 - "$@" <<'PY'
import socket, sys
port, host = int(sys.argv[1]), sys.argv[2]
try:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
        print(sys.argv[3], repr(s.recv(200)))
except OSError as err:
    print(sys.argv[3], "no route", err)
PY"""
COMMAND = (f'echo "commands proxy=${{HTTPS_PROXY:-none}}"; set -- 3129 api.anthropic.com own-bridge; {PROBE}\n'
           f'set -- 3128 api.anthropic.com commands-bridge; {PROBE}\n')


def _stand_in(directory: Path) -> Path:
    """A CLI that probes its own proxy, then runs one agent command through the shell prefix."""
    directory.mkdir()
    cli = directory / "claude"
    cli.write_text(f"""#!/bin/bash
echo "cli proxy=$HTTPS_PROXY"
set -- 3129 unlisted.example cli; {PROBE}
"$CLAUDE_CODE_SHELL_PREFIX" {_quoted(COMMAND)}
""")
    cli.chmod(0o755)
    return cli


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@pytest.mark.attack
@pytest.mark.parametrize("allow_hosts", [[], ["pypi.org"]], ids=["no-hosts", "pypi-listed"])
def test_the_agents_commands_do_not_get_the_clis_hosts_on_a_plan(tmp_path: Path, allow_hosts: list[str]) -> None:
    from orchestrator.claude_code.session.launch import CliLaunch

    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir()
    sandbox = choose_sandbox("bwrap", project, allow_hosts=allow_hosts)
    environment = CommandEnvironment(workspace=project, sandbox=sandbox,
                                     variables={"PATH": os.environ["PATH"], "HOME": str(home)})
    with CliLaunch(_stand_in(tmp_path / "cli"), environment, None, max_output_tokens=4096) as launch:
        done = subprocess.run([str(launch.wrapper)], capture_output=True, text=True, timeout=120, cwd=project)
    said = done.stdout
    assert "cli proxy=http://127.0.0.1:3129" in said, done.stderr
    assert "cli b'HTTP/1.1 403" in said  # the CLI reaches its own proxy (which refuses an unlisted host)
    # The CLI's bridge carries nothing for its commands: it closes their connection unanswered, which the
    # probe sees as an empty read or, when the close finds its request unread, a reset.
    assert "own-bridge b''" in said or "own-bridge no route [Errno 104]" in said, said
    if allow_hosts:  # the project's proxy, which refuses Anthropic's hosts it does not list
        assert "commands proxy=http://127.0.0.1:3128" in said and "commands-bridge b'HTTP/1.1 403" in said
    else:
        assert "commands proxy=none" in said and "commands-bridge no route" in said
