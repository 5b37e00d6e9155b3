"""Where `orchestrate demo` builds, whether it starts anew or resumes, and its closing screen.

A demo lives in one directory: `spec/` (the textkit spec and its checks), `textkit/` (the
project, with its state in `.autonomous/`) and `report.html`. Without `--dir` it is a new
temporary directory. `--dir X` holding a demo that stopped (Ctrl-C, a limit) resumes it;
any other non-empty X is refused, so nothing of the user's is ever overwritten.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.run_git import CheckpointError, run_git
from orchestrator.user_errors import UsageError

# What a demo directory holds, and nothing else: how a demo to resume is told from a user's folder.
DEMO_ENTRIES = frozenset({"spec", "textkit", "report.html"})


@dataclass(frozen=True)
class DemoDirectory:
    """The demo's directory and its parts; `resumed` when it held a demo that stopped."""

    root: Path
    resumed: bool

    @property
    def spec_dir(self) -> Path:
        return self.root / "spec"

    @property
    def project(self) -> Path:
        return self.root / "textkit"

    @property
    def html(self) -> Path:
        return self.root / "report.html"


def demo_directory(directory: Path | None) -> DemoDirectory:
    """A new temporary directory, `directory` (created, or empty), or the demo in it to resume."""
    if directory is None:
        return DemoDirectory(Path(tempfile.mkdtemp(prefix="orchestrate-demo-")).resolve(), resumed=False)
    directory = directory.expanduser()
    if directory.is_dir() and is_demo(directory):
        return DemoDirectory(directory, resumed=True)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(
            f"{directory} already exists, is not empty and holds no demo to resume; the demo never overwrites "
            "files: remove it, or choose another directory with --dir DIR"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create {directory}: {err.strerror}") from err
    return DemoDirectory(directory, resumed=False)


def is_demo(directory: Path) -> bool:
    """Whether `directory` holds a demo: its spec, and no entry a demo does not write."""
    names = {entry.name for entry in directory.iterdir()}
    return (directory / "spec" / "spec.json").is_file() and names <= DEMO_ENTRIES


def closing_screen(demo: DemoDirectory, exit_code: int) -> str:
    """Where everything is, and the commands worth running now: only those that apply."""
    p = shlex.quote(str(demo.project))
    lines = [f"\nThe demo's project is {demo.project}; the spec and its checks are in {demo.spec_dir}.\n"]
    commands = []
    if exit_code in (3, 130):  # stopped or interrupted: resumable
        commands.append((f"orchestrate demo --dir {shlex.quote(str(demo.root))}", "resume the demo where it stopped"))
    commands.append((f"orchestrate status --project-dir {p}", "what passed, attempts, cost"))
    commands.append((f"orchestrate report --project-dir {p}", "the last run's summary, again"))
    commands += _log_commands(demo.project)
    commands.append((f"orchestrate context docs --spec {shlex.quote(str(demo.spec_dir / 'spec.json'))} "
                     f"--project-dir {p}", "the memory a feature gets"))
    if _has_commits(demo.project):
        commands.append((f"git -C {p} log --oneline", "one checkpoint per passed feature"))
    if demo.html.is_file():
        opener = "open" if sys.platform == "darwin" else "xdg-open"
        commands.append((f"{opener} {shlex.quote(str(demo.html))}", "the HTML run report"))
    # Each comment above its command: a path of any length leaves the lines readable, and copied whole they still run.
    lines.append("Look around:\n" + "".join(f"  # {comment}\n  {command}\n" for command, comment in commands))
    return "".join(lines)


def _log_commands(project: Path) -> list[tuple[str, str]]:
    """`logs slugify` when its log shows the failed attempt and the retry; else the list of logs."""
    p = shlex.quote(str(project))
    try:
        log = json.loads((project / ".autonomous" / "logs" / "slugify.json").read_text(encoding="utf-8"))
        retried = len(log.get("attemptHistory", [])) > 1
    except (OSError, ValueError, AttributeError):
        retried = False
    if retried:
        return [(f"orchestrate logs slugify --project-dir {p}", "the failed attempt and its retry")]
    if (project / ".autonomous" / "logs").is_dir():
        return [(f"orchestrate logs --project-dir {p}", "the features' logs")]
    return []


def _has_commits(project: Path) -> bool:
    try:
        result = run_git(project, "rev-parse", "--verify", "-q", "HEAD")
    except CheckpointError:
        return False
    return result.returncode == 0
