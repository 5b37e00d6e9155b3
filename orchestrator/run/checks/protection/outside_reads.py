"""Files a check names outside the project (`pytest /srv/acceptance/test_x.py`, hidden acceptance
tests kept apart from the spec): readable, read-only, inside the check's sandbox.

The sandbox shows the whole file system read-only except the homes and `/tmp` (fresh and empty
inside), so only a named path under those is out of sight. Such a path is shown read-only: a
file's directory (a `conftest.py` beside a test file comes along), or the file alone when its
directory is a home or `/tmp` itself. A path in a home's private directories (`.ssh`, `.aws`,
`.config`, ...) is never shown on a guess: the run refuses to start, naming the file and the
setting that shows it (`[sandbox] read`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from orchestrator.run.checks.protection.check_paths import named_words
from orchestrator.run.checks.shell_words import can_name_a_path
from orchestrator.safety.bubblewrap.sandbox import Sandbox
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.user_errors import UsageError

CheckCommands = Sequence[tuple[str, str]]  # (feature id, its check command)


def spec_checks(spec: FeatureSpec) -> list[tuple[str, str]]:
    """(feature id, check command) of every feature that has a check."""
    return [(feature.id, command) for feature in spec.features if (command := spec.check_command(feature))]


def outside_paths(project_root: Path, command: str) -> list[Path]:
    """The existing paths outside `project_root` that `command` names (resolved, links followed)."""
    root = project_root.resolve()
    found: dict[Path, None] = {}
    for word in named_words(command):
        text = os.path.expanduser(word)
        if word.startswith("$") or not can_name_a_path(text):  # the one "could this be a path" test
            continue
        try:
            path = Path(os.path.normpath(text if os.path.isabs(text) else os.path.join(root, text))).resolve()
            exists = path.exists()
        except (OSError, RuntimeError, ValueError):
            continue
        if exists and path != root and root not in path.parents:
            found.setdefault(path, None)
    return list(found)


def reads_to_show(sandbox: Sandbox, project_root: Path, checks: CheckCommands) -> list[Path]:
    """The paths to show read-only so that each check sees the files it names outside the project;
    `UsageError` (the run does not start) for one the sandbox keeps private."""
    shown: dict[Path, None] = {}
    for feature_id, command in checks:
        for path in outside_paths(project_root, command):
            why = sandbox.hides(path)
            if why == "private":
                raise UsageError(
                    f"the check of {feature_id} reads {path}, outside the project where the sandbox keeps it hidden: "
                    "list it under [sandbox] read in orchestrate.toml to show it read-only, or move it")
            if why == "hidden":
                shown.setdefault(path if path.is_dir() or _is_top(sandbox, path.parent) else path.parent)
    return list(shown)


def _is_top(sandbox: Sandbox, directory: Path) -> bool:
    """Whether `directory` is a home or a fresh /tmp itself: never shown whole."""
    return directory in sandbox.hidden or directory in (Path("/tmp").resolve(), Path("/"))
