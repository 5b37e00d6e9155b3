"""`orchestrate doctor`: what a run here would use, and where each choice came from.

The sandbox (which one, and why), the agent (with the Agent SDK's and Claude Code's versions,
and for Claude Code who pays: an API key metered per call, or the user's Claude plan capped
per attempt), the git and Python versions, whether an API key is set (never its value), the price table in use, and every setting with its value and its origin
(`default`, `orchestrate.toml`, `environment`, `command line`), and whether the `python3` the
checks call can import pytest. Exit 0 when a run could start as configured, 2 when it could
not (no API key for `--provider anthropic`, bad configuration, a `bwrap` sandbox that cannot run,
`--agent claude-code` without its SDK or on a provider it cannot be metered on).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import typer

from orchestrator import __version__
from orchestrator.config import ConfigError, RunConfig
from orchestrator.config_layers import load_config, setting_origins
from orchestrator.git.run_git import CheckpointError, run_git
from orchestrator.llm.costs.pricing import MODEL_PRICES
from orchestrator.run.checks.running.check_tools import module_problem
from orchestrator.safety.bubblewrap.sandbox import Sandbox, SandboxUnavailable
from orchestrator.safety.credentials.secrets import SECRET_VALUE_VARIABLES, scrubbed_environment
from orchestrator.tools.shell_policy import configured_policy
from orchestrator.user_errors import EXIT_OK, EXIT_USAGE

Row = tuple[str, str]
_KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")  # what `--provider anthropic` runs with


def print_doctor(project_root: Path, flags: Mapping[str, object]) -> int:
    """Print the diagnosis, one `name: value` line each; return the exit code."""
    rows, healthy = diagnose(project_root, flags, os.environ)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        typer.echo(f"{name.ljust(width)}  {value}")
    return EXIT_OK if healthy else EXIT_USAGE


def diagnose(project_root: Path, flags: Mapping[str, object], environ: Mapping[str, str]) -> tuple[list[Row], bool]:
    """The rows `doctor` prints, and whether a run could start as configured."""
    rows: list[Row] = [
        ("orchestrate", __version__),
        ("python", f"{platform.python_version()} ({sys.executable})"),
        ("git", _git_version()),
        ("project", str(project_root)),
        ("api key", _key_status(environ)),
    ]
    try:
        config = load_config(flags, project_root, environ)
        configured_policy(config.security.deny)
    except ConfigError as err:
        return [*rows, ("configuration", str(err))], False
    except ValueError as err:  # a bad `[security] deny` regex
        return [*rows, ("configuration", f"orchestrate.toml: security.deny: {err}")], False
    # The SDK would refuse to start a run without a key; the other providers' credentials are
    # the cloud's own chain, which only a call can test.
    healthy = config.provider != "anthropic" or any(environ.get(name) for name in _KEY_VARIABLES)
    healthy = healthy or config.agent == "claude-code"  # with no key, Claude Code runs on the user's Claude plan
    try:
        rows.append(("sandbox", _describe_sandbox(_sandbox(config, project_root))))
    except SandboxUnavailable as err:
        rows.append(("sandbox", f"unusable: {err}"))
        healthy = False
    from orchestrator.claude_code.availability import describe_agent, describe_payment

    agent, runnable = describe_agent(config.agent)
    rows.append(("agent", agent))
    healthy = healthy and runnable
    if config.agent == "claude-code":  # who pays for its calls, and how --max-cost holds then
        payment, payable = describe_payment(config.provider, config.max_cost, environ, config.plan_attempt_budget)
        rows.append(("billing", payment))
        healthy = healthy and payable
    rows.append(("prices", _price_source(config)))
    rows.append(("checks' python3", _checks_python(environ)))
    origins = setting_origins(flags, project_root, environ)
    rows += [(f"setting {name}", f"{_value(config, name)}  ({origins[name]})") for name in RunConfig.model_fields]
    return rows, healthy


def _sandbox(config: RunConfig, project_root: Path) -> Sandbox:
    from orchestrator.run.config_sandbox import sandbox_for

    return sandbox_for(config, project_root)


def _describe_sandbox(sandbox: Sandbox) -> str:
    if not sandbox.active:
        return f"none: {sandbox.reason}; the agent's commands and the checks run with your user's full access"
    network = "on" if sandbox.network else "off"
    shown = ", ".join(str(path) for path in sandbox.read) or "nothing"
    return f"bwrap: {sandbox.reason}; network {network}; home hidden, read-only there: {shown}"


def _key_status(environ: Mapping[str, str]) -> str:
    found = [name for name in SECRET_VALUE_VARIABLES if environ.get(name)]
    return f"set ({', '.join(found)})" if found else "not set: export ANTHROPIC_API_KEY=sk-ant-... before a run"


def _checks_python(environ: Mapping[str, str]) -> str:
    """Whether `python3 -m pytest`, the check most Python specs use (the demo's all do), can run here."""
    problem = module_problem("python3", "pytest", scrubbed_environment(environ))
    return f"imports pytest ({shutil.which('python3', path=environ.get('PATH', ''))})" if problem is None else problem


def _git_version() -> str:
    try:
        result = run_git(Path(os.sep), "--version")
    except CheckpointError:
        return "not installed (checkpoints are skipped without it)"
    return result.stdout.strip().removeprefix("git version ") or "unknown"


def _price_source(config: RunConfig) -> str:
    own = f"; orchestrate.toml [pricing] for {', '.join(sorted(config.pricing))}" if config.pricing else ""
    price = config.price_table().price_for(config.model)
    return f"built in (list prices of {len(MODEL_PRICES)} models; unknown models at the dearest){own}; {config.model}: ${price.input:g} in / ${price.output:g} out per MTok"


def _value(config: RunConfig, name: str) -> str:
    value = getattr(config, name)
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    elif isinstance(value, dict):
        value = {key: item.model_dump() if hasattr(item, "model_dump") else item for key, item in value.items()}
    return json.dumps(value) if not isinstance(value, str) else value
