"""The command line: parse the options, call a command (`orchestrator.commands`), map errors to exit codes.

Commands and the library below them raise; only `main` here turns an exception into an exit
code (`orchestrator.errors`) and one line on stderr. No other module exits the program.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import NoReturn

import typer

from orchestrator import __version__
from orchestrator.cli_base import PROG_NAME, ClickException, Command, Group, Interrupted, show_usage_error
from orchestrator.commands.arguments import open_project, read_spec
from orchestrator.config import load_config
from orchestrator.errors import EXIT_INTERRUPTED, EXIT_USAGE, UsageError
from orchestrator.store.atomic import LinkRefused

app = typer.Typer(
    name=PROG_NAME,
    cls=Group,
    help="Build software feature by feature with Claude: every feature verified by its own check, resumable, within budget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
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


def _raise_interrupt(signum: int, _frame: object) -> None:
    # SIGTERM stops a command exactly like Ctrl-C: a run saves its state; exit 130.
    raise KeyboardInterrupt(f"signal {signum}")


ProjectDirOption = typer.Option(
    None, "--project-dir", metavar="DIR", help="The project directory (default: the current directory)."
)
SpecArgument = typer.Argument(..., metavar="SPEC", help="The feature spec (JSON).", show_default=False)


@app.command(cls=Command)
def run(
    spec: Path = SpecArgument,
    context: str | None = typer.Option(None, "--context", metavar="STRATEGY", help="compressed | replay | window (default compressed)."),
    context_depth: int | None = typer.Option(None, "--context-depth", metavar="N", help="Features shown by --context window (default 5)."),
    model: str | None = typer.Option(None, "--model", metavar="ID", help="Model for the coding agent (default: newest Sonnet)."),
    summarizer_model: str | None = typer.Option(None, "--summarizer-model", metavar="ID", help="Model for the summarizer (default: newest Haiku)."),
    max_attempts: int | None = typer.Option(None, "--max-attempts", metavar="N", help="Attempts per feature, overriding the spec."),
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
    strict_checks: bool = typer.Option(
        False, "--strict-checks",
        help="Fail an attempt that changed files which can sway its check (conftest.py, pytest config, sitecustomize, .pth, stdlib-named modules).",
    ),
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
        "max_attempts": max_attempts, "summarize_every": summarize_every, "max_turns": max_turns,
        "max_cost": max_cost, "max_feature_tokens": max_feature_tokens, "commit": False if no_commit else None,
        "strict_checks": True if strict_checks else None, "html": html,
    }
    request = RunRequest(
        only=only, shard=shard, fresh=fresh, resets=reset, dry_run=dry_run, json_mode=json_output,
        report=report, junit=junit, verbosity=-1 if quiet else verbose,
    )
    raise typer.Exit(run_command(loaded, config=load_config(flags, paths.root), paths=paths, request=request))


@app.command(cls=Command)
def validate(spec: Path = SpecArgument) -> None:
    """Check SPEC and list every problem; exit 0 when it is valid, 2 when not."""
    loaded = read_spec(spec)
    features = loaded.spec.features
    typer.echo(f"{spec}: valid ({loaded.source_format} format), {len(features)} feature(s)")


@app.command(cls=Command)
def status(
    project_dir: Path | None = ProjectDirOption,
    json_output: bool = typer.Option(False, "--json", help="Print the state as JSON."),
    show_all: bool = typer.Option(False, "--all", help="List every feature, passed ones included (past 50 features they are left out)."),
) -> None:
    """Show each feature's status, attempts, tokens and cost from the saved state."""
    from orchestrator.commands.inspect import print_status

    raise typer.Exit(print_status(open_project(project_dir), json_output, show_all))


@app.command(cls=Command)
def logs(
    feature_id: str | None = typer.Argument(None, metavar="ID", help="A feature id; without it, list all logs."),
    project_dir: Path | None = ProjectDirOption,
) -> None:
    """Print one feature's log (JSON), or list the logs."""
    from orchestrator.commands.inspect import print_logs

    raise typer.Exit(print_logs(open_project(project_dir), feature_id))


@app.command("context", cls=Command)
def context_command(
    feature_id: str | None = typer.Argument(None, metavar="FEATURE", help="The feature (default: the next one to run)."),
    spec: Path | None = typer.Option(None, "--spec", metavar="SPEC", help="The spec (default: the one of the last run)."),
    strategy: str = typer.Option(
        "compressed", "--strategy", metavar="STRATEGY", help="compressed | replay | window | all (default compressed).",
        show_default=False,
    ),
    project_dir: Path | None = ProjectDirOption,
) -> None:
    """Show the context a feature would get, with its token count."""
    from orchestrator.commands.inspect import print_context

    paths = open_project(project_dir)
    raise typer.Exit(print_context(paths, load_config({}, paths.root), spec, feature_id, strategy))


@app.command(cls=Command)
def summarize(
    spec: Path | None = typer.Option(None, "--spec", metavar="SPEC", help="The spec (default: the one of the last run)."),
    project_dir: Path | None = ProjectDirOption,
    summarizer_model: str | None = typer.Option(None, "--summarizer-model", metavar="ID", help="Model for the summarizer."),
) -> None:
    """Run the Context Agent's summarizer now over the features not yet summarized."""
    from orchestrator.commands.inspect import run_summarize

    paths = open_project(project_dir)
    config = load_config({"summarizer_model": summarizer_model}, paths.root)
    raise typer.Exit(run_summarize(paths, config, spec))


@app.command(cls=Command)
def demo(
    directory: Path | None = typer.Option(None, "--dir", metavar="DIR", help="Where to build (default ./orchestrate-demo; must be new or empty)."),
    json_output: bool = typer.Option(False, "--json", help="One JSON event a line on stdout."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, show_default=False, help="More output (tool calls)."),
) -> None:
    """Build the textkit example offline with a scripted demo model: no key, no network, ~20 s."""
    from orchestrator.commands.demo import demo_command

    raise typer.Exit(demo_command(directory, json_output, verbose))


@app.command("report", cls=Command)
def report_command(
    html: Path = typer.Option(..., "--html", metavar="PATH", help="Write the HTML run report here.", show_default=False),
    project_dir: Path | None = ProjectDirOption,
) -> None:
    """Write the HTML report of the project's runs (timeline, cost, context, features)."""
    from orchestrator.commands.html_report import write_html_report

    raise typer.Exit(write_html_report(open_project(project_dir), html))


def main() -> None:
    """The command line, once signal handling is in place (see `orchestrator.entry`)."""
    try:
        # Ctrl-C and SIGTERM raise KeyboardInterrupt from here on: a run saves its state on it.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, _raise_interrupt)
        from orchestrator.safety.own_environ import hide_own_secrets

        # Before anything else runs: the agent's commands must not find the key in /proc/$PPID/environ.
        hide_own_secrets()
        code = app(prog_name=PROG_NAME, standalone_mode=False)
    except (KeyboardInterrupt, Interrupted, typer.Abort):
        # Interrupted outside a run (while loading, say): nothing to save.
        _leave("orchestrate: interrupted\n", EXIT_INTERRUPTED)
    except ClickException as err:
        _leave("", show_usage_error(err))
    except UsageError as err:
        # Something the user can fix: a bad spec, flag or configuration, no key, a run in the way.
        _leave_with_error(str(err), err.exit_code)
    except LinkRefused as err:
        # A link planted in .autonomous/ during the run (by the agent, or a check): stop, never write through it.
        _leave_with_error(str(err))
    except BrokenPipeError:
        # Output piped into `head` and closed: not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        _leave("", 1)
    except OSError as err:
        # Before any feature ran (a run stops itself with exit 3): a full disk, a read-only
        # project, a file in the way. Nothing was run; say what, without a traceback.
        _leave_with_error(str(err))
    _leave("", code if isinstance(code, int) else 0)


def _leave_with_error(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """One clear line (or block) on stderr, secrets redacted, then exit."""
    from orchestrator.safety.secrets import redact

    _leave(f"orchestrate: error: {redact(message)}\n", code)


def _leave(message: str, code: int) -> NoReturn:
    """Say goodbye and exit with `code`, whatever signal comes while the interpreter shuts down."""
    sys.stderr.write(message)
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
