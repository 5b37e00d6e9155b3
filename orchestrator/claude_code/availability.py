"""Whether `--agent claude-code` can run here: the optional SDK, its version, its bundled CLI.

The SDK is an optional extra (`pip install 'orchestrate[claude-code]'`); without it the run
stops before anything starts, with that command in the message (exit 2).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from orchestrator.user_errors import UsageError

DISTRIBUTION = "claude-agent-sdk"
INSTALL = "pip install 'orchestrate[claude-code]'"
_VERSION_TIMEOUT = 30.0


class ClaudeCodeMissing(UsageError):
    """`--agent claude-code` without the Agent SDK installed (exit 2)."""


def require_sdk() -> None:
    """Raise `ClaudeCodeMissing` unless the Agent SDK can be imported."""
    if importlib.util.find_spec("claude_agent_sdk") is None:
        raise ClaudeCodeMissing(
            f"--agent claude-code needs the Claude Agent SDK, which is not installed: run {INSTALL} "
            "(or use --agent builtin)"
        )


def sdk_version() -> str | None:
    """The installed Agent SDK's version; None when it is not installed."""
    if importlib.util.find_spec("claude_agent_sdk") is None:
        return None
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def bundled_cli() -> Path | None:
    """The Claude Code CLI the SDK's wheel ships (from the installed files' record), else `claude` on PATH."""
    try:
        files = importlib.metadata.distribution(DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.parts[-2:] in (("_bundled", "claude"), ("_bundled", "claude.exe")):
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    found = shutil.which("claude")
    return Path(found) if found else None


def cli_version(cli: Path) -> str:
    """What `claude --version` says, run with an empty home and no network traffic of its own."""
    with tempfile.TemporaryDirectory(prefix="orchestrate-claude-version-") as home:
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        try:
            done = subprocess.run([str(cli), "--version"], capture_output=True, text=True, env=env,
                                  timeout=_VERSION_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"unknown ({err})"
    return done.stdout.strip() or f"unknown (exit {done.returncode}: {done.stderr.strip()[:200]})"


def describe_agent(agent: str) -> tuple[str, bool]:
    """`doctor`'s line on the agent (with the SDK's and its CLI's versions), and whether it can run."""
    version = sdk_version()
    sdk = f"Claude Agent SDK {version}" if version else f"Claude Agent SDK not installed ({INSTALL})"
    cli = bundled_cli() if version else None
    tools = f"{sdk}, Claude Code {cli_version(cli)} at {cli}" if cli else sdk
    if agent == "builtin":
        return f"builtin (this program's own loop); for --agent claude-code: {tools}", True
    return f"claude-code: {tools}", cli is not None


def describe_payment(
    provider: str, max_cost: float | None, environ: Mapping[str, str], attempt_budget: float,
) -> tuple[str, bool]:
    """`doctor`'s line on who pays for Claude Code's calls (an API key, a Claude plan, Bedrock or
    Vertex through the metering proxy); False when it cannot run so (a CLAUDE_CODE_USE_* variable
    naming another provider)."""
    from orchestrator.claude_code.billing import billing_mode, describe_billing
    from orchestrator.config import ConfigError

    try:
        return describe_billing(billing_mode(provider, environ), max_cost, provider, attempt_budget), True
    except ConfigError as err:
        return f"unusable: {err}", False
