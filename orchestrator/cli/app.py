"""The `orchestrate` command group and the options several commands share.

Commands register on `app` in `orchestrator.cli.commands` (building: run, validate, plan) and
`orchestrator.cli.project_commands` (a project's records: status, logs, context, verify, summarize,
doctor, export, combine); `orchestrator.cli.commands.main` runs it and maps errors to exit codes.
"""

from __future__ import annotations

import typer

from orchestrator import __version__
from orchestrator.cli.presentation import PROG_NAME, Group

app = typer.Typer(
    name=PROG_NAME,
    cls=Group,
    help="Build software feature by feature with Claude: every feature verified by its own check, resumable, within budget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},  # -h as gh, uv and pytest take it; every command inherits it
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"orchestrate {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """orchestrate: build software feature by feature with Claude."""


ProjectDirOption = typer.Option(
    None, "--project-dir", metavar="DIR", help="The project directory (default: the current directory)."
)
SpecArgument = typer.Argument(..., metavar="SPEC", help="The feature spec (JSON).", show_default=False)

# `run`'s options whose help takes more than a line.
BranchOption = typer.Option(
    None, "--branch", metavar="NAME",
    help="Checkpoint to branch NAME (created from HEAD if missing) in a worktree; your checkout is left alone.",
)
StrictChecksOption = typer.Option(
    False, "--strict-checks",
    help="Fail an attempt that changed files which can sway its check (conftest.py, pytest config, sitecustomize, .pth, stdlib-named modules).",
)
JobsOption = typer.Option(
    None, "--jobs", "-j", metavar="N",
    help="Run up to N features at once, each in a git worktree, merged one at a time (default 1).",
)
RegressionOption = typer.Option(
    None, "--regression", metavar="MODE",
    help="After each feature, re-run the checks of passed features it may affect: affected | all | none (default affected).",
)
SandboxOption = typer.Option(
    None, "--sandbox", metavar="MODE",
    help="auto | bwrap | none: run the agent's commands and the checks in a bubblewrap sandbox (default auto: when it works).",
)
CheckSandboxOption = typer.Option(  # verify, validate, combine: no agent at work, only checks
    None, "--sandbox", metavar="MODE",
    help="auto | bwrap | none: run the checks in a bubblewrap sandbox (default auto: when it works).",
)
AgentOption = typer.Option(
    None, "--agent", metavar="NAME",
    help="builtin (default) | claude-code: who makes each attempt; claude-code needs pip install 'orchestrate[claude-code]'.",
)
McpConfigOption = typer.Option(
    None, "--mcp-config", metavar="FILE", help="Claude Code only: give it the MCP servers of FILE ({\"mcpServers\": {...}}).",
)
ClaudeSettingsOption = typer.Option(
    None, "--claude-settings", metavar="WHICH",
    help="Claude Code only: none (default) | project (read the project's CLAUDE.md and .claude/settings.json).",
)
ClaudeCodeAllowOption = typer.Option(
    None, "--claude-code-allow", metavar="KINDS",
    help="Claude Code only: load these kinds of the project's configuration as they were when the run began, "
         "comma-separated: settings, claude-md, agents, mcp (hooks and env never).",
)
