"""What every command starts from: the spec and the project directory named on the command line.

Each is checked here, once, for all commands; a problem the user can fix is a `UsageError`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.git.state_guard import refuse_planted_state
from orchestrator.store.disk.atomic import refuse_links
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.user_errors import UsageError
from shared_base.files import LinkRefused

if TYPE_CHECKING:
    from orchestrator.spec.load import LoadedSpec


def read_spec(spec_path: Path) -> LoadedSpec:
    """The spec, every problem in it raised as one `UsageError`; its warnings go to stderr."""
    # Imported here: the spec's models are a tenth of a second that `status` and `logs` never need.
    from orchestrator.spec.load import load_spec
    from orchestrator.spec.spec_errors import SpecError

    try:
        loaded = load_spec(spec_path)
    except SpecError as err:
        raise UsageError(str(err)) from err
    for warning in loaded.warnings:
        sys.stderr.write(f"orchestrate: warning: {warning}\n")
    return loaded


def open_project(project_dir: Path | None, may_be_missing: bool = False, *, reads_state: bool = True) -> ProjectPaths:
    """The project's paths (default: the current directory), its state directories free of links.

    Every command that reads `.autonomous/` starts here, so the start check of
    `orchestrator.git.state_guard` (a repository that tracks `.autonomous`, or a linked directory
    in it: exit 2, nothing read) holds for each of them, whatever command is added next. Only a
    command that never reads the state (`doctor`) passes `reads_state=False`.
    """
    root = (project_dir or Path.cwd()).expanduser()
    if may_be_missing and not root.exists():
        return ProjectPaths.for_project(root)  # `run` creates it when it has something to do
    if not root.is_dir():
        raise UsageError(f"project directory {root} does not exist (create it, or pass --project-dir DIR)")
    paths = ProjectPaths.for_project(root)
    try:
        for directory in paths.state_dirs:
            refuse_links(directory)
        if reads_state:
            refuse_planted_state(paths.root)
    except LinkRefused as err:
        raise UsageError(str(err)) from err
    return paths
