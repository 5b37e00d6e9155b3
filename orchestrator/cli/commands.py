"""The command line: parse the options, call a command (`orchestrator.commands`), map errors to exit codes.

The building commands (run, validate, plan) are here; the commands on a project's records are
in `orchestrator.cli.project_commands`, the group and shared options in `orchestrator.cli.app`.

Commands and the library below them raise; only `main` here turns an exception into an exit
code (`orchestrator.user_errors`) and one line on stderr. No other module exits the program.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

import typer

from orchestrator.cli.app import (
    AgentOption,
    BranchOption,
    CheckSandboxOption,
    ClaudeCodeAllowOption,
    ClaudeSettingsOption,
    JobsOption,
    McpConfigOption,
    ProjectDirOption,
    RegressionOption,
    SandboxOption,
    SpecArgument,
    StrictChecksOption,
    app,
)
from orchestrator.cli.presentation import PROG_NAME, Command, ParserError, show_usage_error
from orchestrator.commands.arguments import open_project, read_spec
from orchestrator.config_layers import load_config
from orchestrator.user_errors import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Interrupted,
    OrchestrateError,
)
from shared_base.files import LinkRefused


@app.command(cls=Command)
def run(
    spec: Path = SpecArgument,
    context: str | None = typer.Option(None, "--context", metavar="STRATEGY", help="compressed | replay | window (default compressed)."),
    context_depth: int | None = typer.Option(None, "--context-depth", metavar="N", help="Features shown by --context window (default 5)."),
    model: str | None = typer.Option(None, "--model", metavar="ID", help="Model for the coding agent (default: newest Sonnet)."),
    summarizer_model: str | None = typer.Option(None, "--summarizer-model", metavar="ID", help="Model for the summarizer (default: newest Haiku)."),
    impact_model: str | None = typer.Option(None, "--impact-model", metavar="ID", help="Also ask this (small) model which files each feature will change (off by default)."),
    max_attempts: int | None = typer.Option(None, "--max-attempts", metavar="N", help="Attempts per feature, overriding the spec."),
    escalate_model: str | None = typer.Option(None, "--escalate-model", metavar="ID", help="Stronger model for the attempt after a failed one."),
    escalate_on: str | None = typer.Option(None, "--escalate-on", metavar="WHEN", help="failure (every retry, default) | last (only the last attempt)."),
    thinking: str | None = typer.Option(None, "--thinking", metavar="MODE", help="Extended thinking: off (default) | auto | a token budget such as 4096."),
    provider: str | None = typer.Option(None, "--provider", metavar="NAME", help="anthropic (default) | bedrock | vertex."),
    summarize_every: int | None = typer.Option(None, "--summarize-every", metavar="N", help="Summarize after this many completed features (default 5)."),
    max_turns: int | None = typer.Option(None, "--max-turns", metavar="N", help="Model calls per attempt (default 40)."),
    max_cost: float | None = typer.Option(None, "--max-cost", metavar="USD", help="USD cap for the whole run; never overshot."),
    max_feature_tokens: int | None = typer.Option(None, "--max-feature-tokens", metavar="N", help="Token cap per feature."),
    only: str | None = typer.Option(None, "--only", metavar="ID,...", help="Run only these feature ids (comma-separated)."),
    shard: str | None = typer.Option(None, "--shard", metavar="I/N", help="Run shard I of N (e.g. 2/4); dependency chains stay together."),
    project_dir: Path | None = ProjectDirOption,
    fresh: bool = typer.Option(False, "--fresh", help="Start over; the old .autonomous is moved aside, not deleted."),
    reset: list[str] = typer.Option([], "--reset", metavar="ID", help="Redo this feature from scratch (repeatable).", show_default=False),
    no_commit: bool = typer.Option(False, "--no-commit", help="Do not commit a git checkpoint per passed feature."),
    branch: str | None = BranchOption,
    strict_checks: bool = StrictChecksOption,
    jobs: int | None = JobsOption,
    regression: str | None = RegressionOption,
    regression_budget: str | None = typer.Option(None, "--regression-budget", metavar="BUDGET", help="Time for the guard's checks after a feature: 3x its own check (default) or 20s; the rest wait for final verification."),
    no_final_verify: bool = typer.Option(False, "--no-final-verify", help="Do not re-run every passed feature's check at the end."),
    sandbox: str | None = SandboxOption,
    agent: str | None = AgentOption,
    mcp_config: Path | None = McpConfigOption,
    claude_settings: str | None = ClaudeSettingsOption,
    claude_code_allow: str | None = ClaudeCodeAllowOption,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print each feature's prompt; needs no key, changes nothing."),
    json_output: bool = typer.Option(False, "--json", help="One JSON event a line on stdout."),
    report: Path | None = typer.Option(None, "--report", metavar="PATH", help="Write a JSON report of the run here."),
    junit: Path | None = typer.Option(None, "--junit", metavar="PATH", help="Write a JUnit XML file here (one testcase per feature)."),
    html: Path | None = typer.Option(None, "--html", metavar="PATH", help="Write the HTML run report here (one self-contained file)."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, show_default=False, help="More output (tool calls); repeat for more."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the final line and errors."),
) -> None:
    """Run the features of SPEC in the project, resuming where the last run stopped."""
    from orchestrator.commands.run import RunRequest, run_command

    loaded = read_spec(spec)
    paths = open_project(project_dir, may_be_missing=True)
    flags = {
        "context": context, "context_depth": context_depth, "model": model, "summarizer_model": summarizer_model,
        "impact_model": impact_model, "max_attempts": max_attempts, "summarize_every": summarize_every, "max_turns": max_turns,
        "max_cost": max_cost, "max_feature_tokens": max_feature_tokens, "commit": False if no_commit else None,
        "strict_checks": True if strict_checks else None, "branch": branch, "sandbox": sandbox,
        "jobs": jobs, "regression": regression, "regression_budget": regression_budget, "final_verify": False if no_final_verify else None,
        "escalate_model": escalate_model, "escalate_on": escalate_on, "thinking": thinking, "provider": provider,
        "html": html, "agent": agent, "mcp_config": mcp_config, "claude_settings": claude_settings, "claude_code_allow": claude_code_allow,
    }
    request = RunRequest(
        only=only, shard=shard, fresh=fresh, resets=reset, dry_run=dry_run, json_mode=json_output,
        report=report, junit=junit, verbosity=-1 if quiet else verbose,
    )
    raise typer.Exit(run_command(loaded, config=load_config(flags, paths.root), paths=paths, request=request))


@app.command(cls=Command)
def validate(
    spec: Path = SpecArgument,
    run_checks: bool = typer.Option(
        False, "--run-checks", help="Also run each pending feature's check now and warn for every one that already passes.",
    ),
    project_dir: Path | None = ProjectDirOption,
    sandbox: str | None = CheckSandboxOption,
) -> None:
    """Check SPEC and list every problem; exit 0 when it is valid, 2 when not."""
    loaded = read_spec(spec)
    features = loaded.spec.features
    checked = sum(1 for feature in features if loaded.spec.check_command(feature) is not None)
    typer.echo(f"{spec}: valid ({loaded.source_format} format), {len(features)} feature(s), {checked} with a check")
    if checked < len(features) and loaded.source_format == "quickstart":
        typer.echo(f"next: orchestrate plan --from {spec}  (writes spec.json with a check for each feature, seen failing first)")
    if run_checks:
        from orchestrator.commands.check_red import run_pending_checks

        paths = open_project(project_dir)
        raise typer.Exit(run_pending_checks(loaded, paths, load_config({"sandbox": sandbox}, paths.root)))


@app.command(cls=Command)
def plan(
    description: Path | None = typer.Argument(None, metavar="DESCRIPTION.md", help="The product description (Markdown or text)."),
    output: Path | None = typer.Option(None, "-o", "--output", metavar="SPEC", help="Where to write the spec (default: spec.json in the project)."),
    features: int | None = typer.Option(None, "--features", metavar="N", help="Plan at most N features."),
    project_dir: Path | None = ProjectDirOption,
    write_checks: bool | None = typer.Option(
        None, "--write-checks/--no-write-checks",
        help="Write each feature's check first and see it fail (default: when a test runner is known, and with --from).",
        show_default=False,
    ),
    from_list: Path | None = typer.Option(None, "--from", metavar="feature_list.json", help="Upgrade a quickstart feature list: keep its features, add a check to each."),
    force: bool = typer.Option(False, "--force", help="Replace an existing spec file."),
    model: str | None = typer.Option(None, "--model", metavar="ID", help="Model for planning and checks (default: the agent's)."),
    provider: str | None = typer.Option(None, "--provider", metavar="NAME", help="anthropic (default) | bedrock | vertex."),
    max_cost: float | None = typer.Option(None, "--max-cost", metavar="USD", help="USD cap for the whole plan; never overshot."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the prompt; send nothing, write nothing."),
    json_output: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
    sandbox: str | None = CheckSandboxOption,
) -> None:
    """Plan a spec from a product description: features with checks written first and seen failing."""
    from orchestrator.commands.plan import PlanRequest, plan_command

    root = (project_dir or Path.cwd()).expanduser()
    request = PlanRequest(
        description=description, output=output or root / "spec.json", project_dir=root, features=features,
        write_checks=write_checks, from_list=from_list, force=force, dry_run=dry_run, json_mode=json_output,
    )
    raise typer.Exit(plan_command(request, load_config(
        {"model": model, "provider": provider, "max_cost": max_cost, "sandbox": sandbox}, root)))


@app.command(cls=Command)
def demo(
    directory: Path | None = typer.Option(None, "--dir", metavar="DIR", help="Where to build (default: a new temporary directory); a demo that stopped there resumes."),
    json_output: bool = typer.Option(False, "--json", help="One JSON event a line on stdout."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, show_default=False, help="More output (tool calls)."),
    agent: str | None = AgentOption,
) -> None:
    """Build the textkit example offline with a scripted demo model: no key, no network, ~20 s."""
    from orchestrator.commands.demo import demo_command

    raise typer.Exit(demo_command(directory, json_output, verbose, agent=agent))


# After the building commands, so that `--help` lists them first.
from orchestrator.cli import project_commands  # noqa: E402, F401  (registers its commands on `app`)

_interrupted = False  # a Ctrl-C or SIGTERM has arrived
REDELIVERY_DELAY_S = 0.05  # long enough for a finalizer to return, too short for a person to notice


def _raise_interrupt(signum: int, _frame: object) -> None:
    # SIGTERM stops a command exactly like Ctrl-C: a run saves its state; exit 130.
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt(f"signal {signum}")


def _redeliver_a_lost_interrupt(unraisable: sys.UnraisableHookArgs) -> None:
    """A signal that arrives while Python runs a finalizer (a weakref callback, a `__del__`,
    which the garbage collector may start anywhere) raises our KeyboardInterrupt inside it, where
    Python prints it as ignored and goes on: the Ctrl-C would be lost and the run carry on.
    Deliver it again a moment later, from a thread: set from this thread, it would run its
    handler at once, inside this hook. Should it land in a finalizer again, it comes back here."""
    if unraisable.exc_type is KeyboardInterrupt and str(unraisable.exc_value).startswith("signal "):
        signum = int(str(unraisable.exc_value).removeprefix("signal "))
        again = threading.Timer(REDELIVERY_DELAY_S, _thread.interrupt_main, (signum,))
        again.daemon = True
        again.start()
        return
    sys.__unraisablehook__(unraisable)


def handle_interrupts() -> None:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt from here on, and none is lost in a finalizer."""
    signal.signal(signal.SIGINT, _raise_interrupt)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    sys.unraisablehook = _redeliver_a_lost_interrupt


def main() -> None:
    """The command line, once signal handling is in place (see `orchestrator.cli.entry`)."""
    try:
        handle_interrupts()  # a run saves its state on the KeyboardInterrupt they raise
        from orchestrator.safety.credentials.own_environ import hide_own_secrets

        # Before anything else runs: the agent's commands must not find the key in /proc/$PPID/environ.
        hide_own_secrets()
        code = app(prog_name=PROG_NAME, standalone_mode=False)
    except (KeyboardInterrupt, Interrupted, typer.Abort):
        # Interrupted outside a run (while loading, say): nothing to save.
        _leave("orchestrate: interrupted\n", EXIT_INTERRUPTED)
    except ParserError as err:
        _leave("", show_usage_error(err))
    except OrchestrateError as err:
        # Something the user can fix (a bad spec, flag or configuration, no key, a run in the way),
        # or a stop: one line, the error's exit code. Our own bug keeps its traceback.
        if err.exit_code == EXIT_INTERNAL:
            raise
        _leave_with_error(str(err), err.exit_code)
    except LinkRefused as err:
        # A link planted in .autonomous/ during the run (by the agent, or a check): stop, never write through it.
        _leave_with_error(str(err))
    except BrokenPipeError:
        # Output piped into `head` and closed: not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        _leave("", EXIT_FAILED)
    except OSError as err:
        # Before any feature ran (a run stops itself with exit 3): a full disk, a read-only
        # project, a file in the way. Nothing was run; say what, without a traceback.
        _leave_with_error(str(err))
    except Exception as err:
        # A Ctrl-C that lands while a class is being built (a pydantic model, at import) comes
        # wrapped: a RuntimeError caused by the KeyboardInterrupt ("Error calling __set_name__"),
        # or pydantic-core's SchemaError, which keeps only its text. Either way an interrupt.
        if not (_interrupted or _caused_by_interrupt(err)):
            raise
        _leave("orchestrate: interrupted\n", EXIT_INTERRUPTED)
    _leave("", code if isinstance(code, int) else 0)


def _caused_by_interrupt(err: BaseException) -> bool:
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _leave_with_error(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """One clear line (or block) on stderr, secrets redacted, then exit."""
    from orchestrator.safety.credentials.redaction import redact

    _leave(f"orchestrate: error: {redact(message)}\n", code)


def _leave(message: str, code: int) -> NoReturn:
    """Say goodbye and exit with `code`, whatever signal comes while the interpreter shuts down."""
    if message:  # through a live view still up, if any (`user_lines`); else plain on stderr
        from orchestrator.commands.rendering.user_lines import say

        say(message.rstrip("\n"))
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed pipe: nothing more can be said there
    # The command is over and everything is said. Shutting the interpreter down takes tens of
    # milliseconds, during which Python puts the default handlers back: a signal then would
    # kill the process (exit 143) or raise where nothing catches it. Ignore it instead.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    if code == EXIT_INTERRUPTED:
        # A KeyboardInterrupt raised inside code that Python ran from a string (a dataclass or
        # named tuple being built) marks it "unhandled" even once caught, and the interpreter
        # would end by killing itself with SIGINT instead of exiting 130. Nothing is left to
        # clean up after an interrupt, so leave without that shutdown.
        os._exit(code)
    sys.exit(code)
