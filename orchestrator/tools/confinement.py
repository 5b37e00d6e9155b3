"""Turning a path the model sent into a real path inside the project, or refusing it.

Every path the editor touches goes through `resolve_in_project` (reads) and, for changes,
`check_writable`. Resolution follows symlinks (`Path.resolve`, which resolves the existing
part of the path and applies `..` to the rest), so a link inside the project that points
outside is judged by where it leads, not by where it sits.

Reading `.autonomous/` and `.git/` is allowed: nothing secret is stored there by design (the
key is never written anywhere) and the agent's own past logs can help it. Writing there is
refused: the orchestrator's state and checkpoints must stay the orchestrator's. So is writing the
project's `orchestrate.toml`: it configures the next run (its sandbox, limits and prices).

A resolved path can still change between this check and the write if a process the agent
started in the background swaps a directory for a symlink at that instant; the editor
narrows that window (see `text_files.write_text`), and the container recipe in docs/security.md closes it.
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.store.disk.paths import RUN_CONFIG_NAME
from orchestrator.tools.context import ToolContext, ToolError

MAX_PATH_LENGTH = 4096


class PathRefused(ToolError):
    """The path is outside the project, malformed, or not writable by the agent."""


def resolve_in_project(raw: object, root: Path) -> Path:
    """The resolved absolute path that `raw` names inside `root`; PathRefused if it is not inside.

    Relative paths are relative to `root`; absolute paths are accepted only inside it.
    """
    if not isinstance(raw, str):
        raise PathRefused(f"path must be a string, got {type(raw).__name__}")
    if not raw.strip():
        raise PathRefused("path is empty; give a path relative to the project root, e.g. 'src/app.py'")
    if "\x00" in raw:
        raise PathRefused("path contains a NUL byte")
    if len(raw) > MAX_PATH_LENGTH:
        raise PathRefused(f"path is longer than {MAX_PATH_LENGTH} characters")
    if raw.startswith("~"):
        raise PathRefused(
            f"path {_show(raw)} points into a home directory; use a path inside the project ({root})"
        )
    candidate = Path(raw) if os.path.isabs(raw) else root / raw
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError, ValueError) as err:
        # RuntimeError: a symlink loop (Python 3.11); OSError: too many levels, name too long.
        raise PathRefused(f"cannot resolve path {_show(raw)}: {_reason(err)}") from None
    if not _is_within(resolved, root):
        raise PathRefused(
            f"path {_show(raw)} is outside the project directory {root}"
            + (" (through a symbolic link)" if _lexically_within(candidate, root) else "")
            + "; only files inside the project can be read or changed"
        )
    return resolved


def check_writable(path: Path, ctx: ToolContext) -> None:
    """Raise PathRefused unless the agent may create or change the file at resolved `path`."""
    root = ctx.project_root
    if path == root:
        raise PathRefused("the project directory itself is not a file")
    top = path.relative_to(root).parts[0]
    # The environment's protected paths: what the sandbox mounts read-only, refused here too.
    # casefold: on a case-insensitive file system `.Autonomous` is the same directory.
    if top.casefold() in {protected.name.casefold() for protected in ctx.environment.protected}:
        if top.casefold() == RUN_CONFIG_NAME:
            raise PathRefused(
                f"{RUN_CONFIG_NAME} is the run's configuration (sandbox, limits, prices) and is not writable by the agent"
            )
        raise PathRefused(
            f"{relative(path, root)} is inside {top}/, which belongs to the orchestrator and is not writable "
            "by the agent"
        )
    if _is_protected(path, ctx.protected):
        raise PathRefused(
            f"{relative(path, root)} is a protected check file of this feature; make the code pass the check "
            "instead of changing the check"
        )


def relative(path: Path, root: Path) -> str:
    """`path` as the model should see it: relative to the project root ('.' for the root)."""
    try:
        text = path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
    return text or "."


def _is_protected(path: Path, protected: frozenset[Path]) -> bool:
    if path in protected:
        return True
    # A hard link, or another spelling on a case-insensitive file system, is the same file.
    try:
        target = path.stat()
    except OSError:
        return False
    for other in protected:
        try:
            if os.path.samestat(target, other.stat()):
                return True
        except OSError:
            continue
    return False


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _lexically_within(path: Path, root: Path) -> bool:
    return _is_within(Path(os.path.normpath(path)), root)


def _show(raw: str) -> str:
    text = raw if len(raw) <= 200 else raw[:197] + "..."
    return repr(text)


def _reason(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror.lower()
    return str(err).splitlines()[0] if str(err) else type(err).__name__
