"""Commands on a project's records: look (status, logs, context, doctor), check (verify),
fold (summarize), and hand over between CI shards (export, combine).

Like every command, each parses its options, calls its `orchestrator.commands` module and
raises `typer.Exit` with the code it returns; errors reach `orchestrator.cli.commands.main`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from orchestrator.cli.app import AgentOption, CheckSandboxOption, ProjectDirOption, SpecArgument, app
from orchestrator.cli.presentation import Command
from orchestrator.commands.arguments import open_project, read_spec
from orchestrator.config_layers import load_config


@app.command(cls=Command)
def status(
    project_dir: Path | None = ProjectDirOption,
    json_output: bool = typer.Option(False, "--json", help="Print the state as JSON."),
    show_all: bool = typer.Option(False, "--all", help="List every feature, passed ones included (past 50 features they are left out)."),
) -> None:
    """Show each feature's status, attempts, tokens and cost from the saved state."""
    from orchestrator.commands.listing import print_status

    raise typer.Exit(print_status(open_project(project_dir), json_output, show_all))

@app.command(cls=Command)
def logs(
    feature_id: str | None = typer.Argument(None, metavar="ID", help="A feature id; without it, list all logs."),
    project_dir: Path | None = ProjectDirOption,
    json_output: bool = typer.Option(False, "--json", help="Print the feature's log as it is stored (JSON)."),
) -> None:
    """Show one feature's log (attempts, tool calls, checks, footprint), or list the logs in spec order."""
    from orchestrator.commands.listing import print_logs

    raise typer.Exit(print_logs(open_project(project_dir), feature_id, json_output))

@app.command("context", cls=Command)
def context_command(
    feature_id: str | None = typer.Argument(None, metavar="FEATURE", help="The feature (default: the next one to run)."),
    spec: Path | None = typer.Option(None, "--spec", metavar="SPEC", help="The spec (default: the one of the last run)."),
    strategy: str = typer.Option(
        "compressed", "--strategy", metavar="STRATEGY", help="compressed | replay | window | all (default compressed).",
        show_default=False,
    ),
    project_dir: Path | None = ProjectDirOption,
    count: bool = typer.Option(False, "--count", help="Also ask the API's count_tokens for the exact figure (needs credentials)."),
    model: str | None = typer.Option(None, "--model", metavar="ID", help="The model to count for (default: the run's)."),
    provider: str | None = typer.Option(None, "--provider", metavar="NAME", help="anthropic | bedrock | vertex."),
) -> None:
    """Show the context a feature would get, with its token count."""
    from orchestrator.commands.inspect import print_context
    from orchestrator.commands.prompt_preview.token_count import last_run_model

    paths = open_project(project_dir)
    # The run's model, as the help says: the last run's unless --model names another.
    config = load_config({"model": model or last_run_model(paths.events_log), "provider": provider}, paths.root)
    raise typer.Exit(print_context(paths, config, spec, feature_id, strategy, count=count))

@app.command("verify", cls=Command)
def verify_cmd(
    spec: Path | None = typer.Option(None, "--spec", metavar="SPEC", help="The spec (default: the one of the last run)."),
    only: str | None = typer.Option(None, "--only", metavar="ID,...", help="Verify only these feature ids (comma-separated)."),
    json_output: bool = typer.Option(False, "--json", help="Print the results as one JSON object."),
    junit: Path | None = typer.Option(None, "--junit", metavar="PATH", help="Write a JUnit XML file here."),
    reopen: bool = typer.Option(False, "--reopen", help="Mark failing features regressed: the next run rebuilds them."),
    committed: bool = typer.Option(
        False, "--committed", help="Verify HEAD alone, leaving out your uncommitted changes (as a run's final verification)."),
    project_dir: Path | None = ProjectDirOption,
    sandbox: str | None = CheckSandboxOption,
) -> None:
    """Re-run the passed features' checks on what you have (no model): HEAD, your uncommitted changes and
    your untracked files, in a checkout outside the project with your unchanged ignored files; exit 0 all
    pass, 1 any fails."""
    from orchestrator.commands.verify import verify_command

    paths = open_project(project_dir)
    config = load_config({"sandbox": sandbox}, paths.root)
    raise typer.Exit(verify_command(paths, config, spec, only=only, json_output=json_output, junit=junit, reopen=reopen,
                                    committed=committed))

@app.command(cls=Command)
def summarize(
    spec: Path | None = typer.Option(None, "--spec", metavar="SPEC", help="The spec (default: the one of the last run)."),
    project_dir: Path | None = ProjectDirOption,
    summarizer_model: str | None = typer.Option(None, "--summarizer-model", metavar="ID", help="Model for the summarizer."),
    provider: str | None = typer.Option(None, "--provider", metavar="NAME", help="anthropic (default) | bedrock | vertex."),
) -> None:
    """Run the Context Agent's summarizer now over the features not yet summarized."""
    from orchestrator.commands.inspect import run_summarize

    paths = open_project(project_dir)
    config = load_config({"summarizer_model": summarizer_model, "provider": provider}, paths.root)
    raise typer.Exit(run_summarize(paths, config, spec))

@app.command(cls=Command)
def doctor(
    project_dir: Path | None = ProjectDirOption,
    sandbox: str | None = typer.Option(None, "--sandbox", metavar="MODE", help="auto | bwrap | none: the sandbox to look at."),
    agent: str | None = AgentOption,
) -> None:
    """Show what a run here would use: the sandbox and why, the agent, git, Python, the key (set or not), prices, each setting's origin."""
    from orchestrator.commands.doctor import print_doctor

    paths = open_project(project_dir, may_be_missing=True, reads_state=False)  # doctor reads no state
    raise typer.Exit(print_doctor(paths.root, {"sandbox": sandbox, "agent": agent}))


@app.command("export", cls=Command)
def export_cmd(
    directory: Path = typer.Argument(..., metavar="DIR", help="Where to write the artifact (created if missing).", show_default=False),
    branch: str | None = typer.Option(None, "--branch", metavar="NAME", help="The branch to bundle (default: the run's)."),
    project_dir: Path | None = ProjectDirOption,
) -> None:
    """Write this project's shard artifact to DIR: its branch as a git bundle, its state, logs and context."""
    from orchestrator.commands.combine import export_command

    paths = open_project(project_dir)
    raise typer.Exit(export_command(paths, directory, load_config({"branch": branch}, paths.root)))

@app.command(cls=Command)
def combine(
    spec: Path = SpecArgument,
    artifacts: list[Path] = typer.Argument(..., metavar="ARTIFACT...", help="Directories written by `orchestrate export`.", show_default=False),
    branch: str | None = typer.Option(None, "--branch", metavar="NAME", help="The combined branch (default: the checked-out one)."),
    partial: bool = typer.Option(False, "--partial", help="Exit 0 when what the artifacts passed combines cleanly, even if the spec is not done."),
    no_final_verify: bool = typer.Option(False, "--no-final-verify", help="Do not re-run every passed feature's check on the combined tree."),
    sandbox: str | None = CheckSandboxOption,
    project_dir: Path | None = ProjectDirOption,
    report: Path | None = typer.Option(None, "--report", metavar="PATH", help="Write a JSON report of the combined result here."),
    junit: Path | None = typer.Option(None, "--junit", metavar="PATH", help="Write a JUnit XML file of the combined result here."),
) -> None:
    """Combine shard artifacts: apply their checkpoints with re-checks, union their records, verify it all."""
    from orchestrator.commands.combine import combine_command

    loaded = read_spec(spec)
    paths = open_project(project_dir)
    config = load_config({"branch": branch, "sandbox": sandbox, "final_verify": False if no_final_verify else None}, paths.root)
    raise typer.Exit(combine_command(loaded, paths, config, artifacts, partial=partial, report=report, junit=junit))


@app.command("report", cls=Command)
def report_command(
    html: Path | None = typer.Option(None, "--html", metavar="PATH", help="Write the HTML run report here.", show_default=False),
    project_dir: Path | None = ProjectDirOption,
) -> None:
    """Print the summary of the last run; with --html, write the HTML report (timeline, cost, context, features)."""
    if html is None:
        from orchestrator.commands.report.last_run import print_last_run

        raise typer.Exit(print_last_run(open_project(project_dir)))
    from orchestrator.commands.report.html_report import write_html_report

    raise typer.Exit(write_html_report(open_project(project_dir), html))
