"""`orchestrate demo`: the whole product in half a minute, offline, with no key.

It writes the textkit spec into a new directory and runs the real `run` path on it, against
the demo model (`orchestrator.demo`): a scripted agent served by a fake Messages API on
127.0.0.1, reached with a dummy key that never leaves the machine.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from orchestrator.commands.arguments import open_project, read_spec
from orchestrator.commands.run import RunRequest, run_command
from orchestrator.config import load_config
from orchestrator.errors import UsageError

DEFAULT_DIR = Path("orchestrate-demo")
_API_ENV = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def demo_command(directory: Path | None, json_mode: bool = False, verbosity: int = 0) -> int:
    """Build textkit in `directory` (default ./orchestrate-demo) with the demo model."""
    from orchestrator.demo.scripted import DEMO_MODEL, DEMO_SUMMARIZER_MODEL
    from orchestrator.demo.spec_bundle import write_spec

    root = _empty_directory(directory or DEFAULT_DIR)
    spec_path = write_spec(root / "spec")
    project = root / "textkit"
    html = root / "report.html"
    out = sys.stderr if json_mode else sys.stdout
    out.write(f"orchestrate demo: building textkit in {project} with {DEMO_MODEL}, a scripted demo model "
              "served on 127.0.0.1 (no key, no network; costs priced as if it were Claude)\n\n")
    out.flush()
    loaded = read_spec(spec_path)
    _git_init(project)
    paths = open_project(project, may_be_missing=True)
    flags = {"model": DEMO_MODEL, "summarizer_model": DEMO_SUMMARIZER_MODEL, "commit": True, "html": str(html)}
    request = RunRequest(json_mode=json_mode, verbosity=verbosity)
    with _demo_model_env():
        code = run_command(loaded, config=load_config(flags, paths.root), paths=paths, request=request)
    out.write(_look_around(root, project, spec_path, html))
    return code


def _git_init(project: Path) -> None:
    """A git repository, so that every passed feature gets its checkpoint commit."""
    project.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["git", "init", "--quiet", str(project)], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        sys.stderr.write("orchestrate demo: git is not available; the run goes on without checkpoints\n")


def _empty_directory(directory: Path) -> Path:
    """`directory`, created; refuses one that already holds files (nothing is overwritten)."""
    directory = directory.expanduser()
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(
            f"{directory} already exists and is not empty; the demo never overwrites files: "
            "remove it, or choose another directory with --dir DIR"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create {directory}: {err.strerror}") from err
    return directory


@contextmanager
def _demo_model_env() -> Iterator[None]:
    """Serve the demo model and point the SDK at it; the caller's environment comes back after."""
    from orchestrator.demo.scripted import DEMO_API_KEY, demo_model

    saved = {name: os.environ.get(name) for name in _API_ENV}
    with demo_model() as fake:
        os.environ.pop("ANTHROPIC_AUTH_TOKEN", None)
        os.environ.update(fake.env(DEMO_API_KEY))
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _look_around(root: Path, project: Path, spec: Path, html: Path) -> str:
    p, s = shlex.quote(str(project)), shlex.quote(str(spec))
    commands = [
        (f"orchestrate status --project-dir {p}", "what passed, attempts, cost"),
        (f"orchestrate logs slugify --project-dir {p}", "the failed attempt and its retry"),
        (f"orchestrate context docs --spec {s} --project-dir {p}", "the memory a feature gets"),
        (f"git -C {p} log --oneline", "one checkpoint per feature"),
        (f"{'open' if sys.platform == 'darwin' else 'xdg-open'} {shlex.quote(str(html))}", "the HTML run report"),
        (f"orchestrate report --html PATH --project-dir {p}", "the report again, anywhere"),
    ]
    # Each comment above its command: a path of any length leaves the lines readable, and copied whole they still run.
    lines = [f"  # {comment}\n  {command}\n" for command, comment in commands]
    return (f"\nThe demo's project is {project}; the spec and its checks are in {spec.parent}.\n"
            "Look around:\n" + "".join(lines))
