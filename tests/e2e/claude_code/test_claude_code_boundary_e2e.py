"""The process boundary under `--agent claude-code`: the same attacks as
`tests/e2e/safety/test_sandbox_boundary_e2e.py`, run by the real bundled Claude Code CLI's Bash
tool, i.e. through its shell prefix (a bubblewrap nested in the CLI's own sandbox), and by the
feature's check. Started by root, the CLI's sandbox must drop every capability too, and the
nested one must still be able to start (issue 40, break 2)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli, write_spec
from tests.e2e.safety.test_sandbox import bwrap_problem
from tests.e2e.safety.test_sandbox_boundary_e2e import CHECK, Target, _assert_held, _attacking_agent, target
from tests.fake_api_fixtures import running_fake_api

claude_agent_sdk = pytest.importorskip(
    "claude_agent_sdk", reason="the claude-code extra is not installed: pip install 'orchestrate[claude-code]'"
)
CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
pytestmark = [
    pytest.mark.attack,
    pytest.mark.skipif(not CLI.exists(), reason="this claude-agent-sdk wheel bundles no Claude Code CLI"),
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]
__all__ = ["target"]  # the fixture


def test_no_attack_on_the_boundary_works_through_claude_codes_shell_prefix(target: Target) -> None:
    """Mode: `--agent claude-code --sandbox bwrap`, the CLI's Bash tool and the check."""
    write_spec(target.spec.parent, 1, verify=CHECK)
    fake: Any
    with running_fake_api(plans={"feat-01": _attacking_agent(target.script())}) as fake:
        result = run_cli(["run", str(target.spec), "--agent", "claude-code", "--sandbox", "bwrap"], target.project, fake,
                         timeout=600, **target.env())
        _assert_held(target, fake, result)
