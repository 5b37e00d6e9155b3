"""The snapshot `check_influence` compares: every file that can sway a check, hashed (where it
looks, and what counts there, is listed in `check_influence`'s docstring)."""

from __future__ import annotations

import configparser
import hashlib
import json
import os
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.run.checks.influence.check_reach import (
    SKIP_DIRS,
    directories_on_path,
    is_directory,
    named_paths,
    really_inside,
    runs_whole_tree,
    skipped,
)
from orchestrator.run.checks.shell_words import is_dir, plain_words

CONFTEST = "conftest.py"
# pytest's configuration files, read whole; pyproject.toml and setup.cfg only in part (below).
_WHOLE_CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini")
_SITE_HOOKS = ("sitecustomize.py", "usercustomize.py")
# Standard-library names a project file cannot shadow (built into the interpreter) or whose
# shadowing changes nothing a check would run.
_UNSHADOWABLE = set(sys.builtin_module_names) | {"this", "antigravity", "idlelib", "turtledemo", "__main__"}
STDLIB_NAMES = frozenset(name for name in sys.stdlib_module_names if name not in _UNSHADOWABLE)
# A walk for conftest.py files stops after this many directory entries: beyond it a check's
# own collection would dwarf the rest, and the watch says it is partial.
MAX_WALKED_ENTRIES = 20_000

KIND_CONFTEST = "conftest"
KIND_PYTEST_CONFIG = "pytest-config"
KIND_SITE_HOOK = "site-hook"
KIND_STDLIB_SHADOW = "stdlib-shadow"


@dataclass(frozen=True)
class Snapshot:
    """Relative path -> (kind, digest) of every watched file that exists; `partial` if a walk was cut short."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    partial: bool = False


def take_snapshot(project_root: Path, check_command: str | None) -> Snapshot:
    """The check-influencing files of `project_root` for `check_command`, hashed."""
    root = project_root.resolve()
    words = plain_words(check_command or "")  # `cd tests&&pytest`
    named = named_paths(root, words)
    files: dict[str, tuple[str, str]] = {}
    for directory in directories_on_path(root, named):
        _look_in(directory, root, files)
    for directory in _first_level(root):
        for name in _SITE_HOOKS:
            _add_file(directory / name, root, KIND_SITE_HOOK, files)
    # A named directory that does not exist yet has nothing in it from before the feature.
    walk_from = [path for path in named if is_dir(path)]
    if runs_whole_tree(words):
        walk_from = [root]
    partial = _walk_for_conftest(walk_from, root, files)
    return Snapshot(files, partial)


def watched_entry(root: Path, relative: str, kind: str) -> tuple[str, str] | None:
    """(kind, digest) of one watched file as it is now, looked at directly; None when it is gone."""
    path = root / relative
    current: dict[str, tuple[str, str]] = {}
    if path.name == "pyproject.toml":
        _add_section(path, root, current, _pyproject_pytest)
    elif path.name == "setup.cfg":
        _add_section(path, root, current, _setup_cfg_pytest)
    else:
        _add_file(path, root, kind, current)
    return current.get(relative)


# ---- hashing what is there ----------------------------------------------------------------------


def _look_in(directory: Path, root: Path, files: dict[str, tuple[str, str]]) -> None:
    """Every watched file directly in `directory` (one listing, then only the names that are there)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name == CONFTEST:
            _add_file(Path(entry.path), root, KIND_CONFTEST, files)
        elif name in _WHOLE_CONFIG_FILES:
            _add_file(Path(entry.path), root, KIND_PYTEST_CONFIG, files)
        elif name == "pyproject.toml":
            _add_section(Path(entry.path), root, files, _pyproject_pytest)
        elif name == "setup.cfg":
            _add_section(Path(entry.path), root, files, _setup_cfg_pytest)
        elif name in _SITE_HOOKS or name.endswith(".pth"):
            _add_file(Path(entry.path), root, KIND_SITE_HOOK, files)
        elif name.endswith(".py") and name[:-3] in STDLIB_NAMES:
            _add_file(Path(entry.path), root, KIND_STDLIB_SHADOW, files)
        elif name in STDLIB_NAMES and is_directory(entry) and os.path.isfile(os.path.join(entry.path, "__init__.py")):
            _add_file(Path(entry.path, "__init__.py"), root, KIND_STDLIB_SHADOW, files)


def _first_level(root: Path) -> list[Path]:
    """The root's directories (not skipped ones): `src/sitecustomize.py` runs under `PYTHONPATH=src`."""
    try:
        return [Path(e.path) for e in os.scandir(root) if e.name not in SKIP_DIRS and is_directory(e)]
    except OSError:
        return []


def _walk_for_conftest(starts: list[Path], root: Path, files: dict[str, tuple[str, str]]) -> bool:
    """Add every conftest.py under `starts`; True if the walk stopped at `MAX_WALKED_ENTRIES`."""
    seen = 0
    pending = [start for start in starts if really_inside(start, root) and not skipped(start, root)]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        seen += len(entries)
        if seen > MAX_WALKED_ENTRIES:
            return True
        for entry in entries:
            if entry.name == CONFTEST:
                _add_file(Path(entry.path), root, KIND_CONFTEST, files)
            elif entry.name not in SKIP_DIRS and is_directory(entry):
                pending.append(Path(entry.path))
    return False


def _add_file(path: Path, root: Path, kind: str, files: dict[str, tuple[str, str]]) -> None:
    digest = file_digest(path)
    if digest is not None:
        files[_relative(path, root)] = (kind, digest)


def _add_section(
    path: Path, root: Path, files: dict[str, tuple[str, str]], section: Callable[[bytes], object]
) -> None:
    """A config file that counts only for its pytest part: absent when it has none."""
    data = _read(path)
    if data is None:
        return
    if len(data) > _PARSE_LIMIT:
        files[_relative(path, root)] = (KIND_PYTEST_CONFIG, "unparsed:" + str(file_digest(path)))
        return
    try:
        part = section(data)
    except (ValueError, UnicodeDecodeError, configparser.Error):
        # Unreadable as configuration: pytest may read it otherwise, so the whole file counts.
        files[_relative(path, root)] = (KIND_PYTEST_CONFIG, "unparsed:" + hashlib.sha256(data).hexdigest())
        return
    if part is not None:
        text = json.dumps(part, sort_keys=True, default=str)
        files[_relative(path, root)] = (KIND_PYTEST_CONFIG, hashlib.sha256(text.encode()).hexdigest())


def _pyproject_pytest(data: bytes) -> object:
    return tomllib.loads(data.decode("utf-8")).get("tool", {}).get("pytest")


def _setup_cfg_pytest(data: bytes) -> object:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(data.decode("utf-8"))
    return dict(parser["tool:pytest"]) if parser.has_section("tool:pytest") else None


def file_digest(path: Path) -> str | None:
    """SHA-256 of a file's bytes (a link: its target's name too); None when there is no file."""
    try:
        link = "link:" + os.readlink(path) + ":" if path.is_symlink() else ""
        if not path.is_file():
            return link or None
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return link + digest.hexdigest()
    except OSError as err:
        return f"<unreadable: {err.strerror or type(err).__name__}>"


# A configuration file larger than this is not parsed: the whole file counts, by hash.
_PARSE_LIMIT = 1024 * 1024


def _read(path: Path) -> bytes | None:
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as handle:
            return handle.read(_PARSE_LIMIT + 1)
    except OSError:
        return None


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
