"""The ignored files a verification checkout carries in: the user's environment, not the run's work.

Real projects depend on ignored files made before the run: an `*.egg-info` from `pip install -e`,
setuptools-scm's `_version.py`, a compiled `*.so`, generated code, a `.venv` inside the project.
A checkout of the commit alone fails honest work there, so verification copies them in (copies,
never links: no check writes back into the live tree). What the run made or changed is the
agent's and is left out, and bytecode (`__pycache__/`, `*.pyc`, `*.pyo`) is never carried.

"Made or changed by a run" is told by each file's change time (`st_ctime`): it is set by the
kernel on every write, rename, link or `touch -d`, and nothing the agent runs can set it back
(unlike the modification time). Each run records when it began and ended (`run-times.json` in
`.autonomous/state/`, read-only to the agent); a file whose change time falls in any run's span
(or after the start of a run that never recorded its end: killed) is left out. So nothing is
read at run start, `orchestrate verify` after a run leaves out what that run made, and a file
the user rebuilt between runs is carried again.

Bounded: the ignored entries come from `git ls-files --others --ignored --directory` (an ignored
directory is one entry, git does not list its files), whose files are looked at (lstat, no read).
With the sandbox, an ignored directory of `SHARE_MIN_FILES` files or more that no run touched
(bytecode included) is shown read-only in the checkout rather than copied (a `.venv`); at most
`MAX_FILES` files and `MAX_BYTES` bytes are copied, and what lies past that is left out.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.git.run_git import CheckpointError, check_git
from orchestrator.git.tree import is_ours, split_z
from orchestrator.store.disk.atomic import write_json_atomic
from orchestrator.store.disk.no_follow import read_no_follow
from shared_base.files import LinkRefused

RUN_TIMES_NAME = "run-times.json"
MAX_FILES = 50_000
MAX_BYTES = 2 * 1024**3
SHARE_MIN_FILES = 200
# The end of a run is taken a little late: a file written in its last moments is the run's.
_MARGIN_NS = 2_000_000_000
_BYTECODE = (".pyc", ".pyo")
_MAX_RUN_TIMES_BYTES = 16 * 1024 * 1024  # a span a run: far more than any project makes


@dataclass(frozen=True)
class RunTimes:
    """When runs worked on the project: (start, end) in nanoseconds, end None for one not ended."""

    spans: tuple[tuple[int, int | None], ...] = ()

    @classmethod
    def load(cls, path: Path) -> RunTimes:
        """The spans recorded at `path`; unreadable: one span from the epoch on (nothing carried)."""
        try:
            data = json.loads(read_no_follow(path, _MAX_RUN_TIMES_BYTES))
        except FileNotFoundError:
            return cls()
        except LinkRefused:
            raise
        except (OSError, ValueError):
            return cls(((0, None),))
        try:
            return cls(tuple((int(start), None if end is None else int(end)) for start, end in data["runs"]))
        except (KeyError, TypeError, ValueError):
            return cls(((0, None),))

    def during_a_run(self, changed_ns: int) -> bool:
        """Whether a file last changed at `changed_ns` may have been made or changed by a run."""
        return any(start <= changed_ns and (end is None or changed_ns <= end) for start, end in self.spans)

    def begun(self, now_ns: int) -> RunTimes:
        """These spans with a run starting now: one left open by a kill ends now."""
        closed = [(start, now_ns if end is None else end) for start, end in self.spans]
        return RunTimes(_merged([*closed, (now_ns, None)]))

    def ended(self, now_ns: int) -> RunTimes:
        """These spans with the open one (the run now ending) closed now."""
        return RunTimes(tuple((start, now_ns + _MARGIN_NS if end is None else end) for start, end in self.spans))

    def save(self, path: Path) -> None:
        write_json_atomic(path, {"runs": [list(span) for span in self.spans]})


def _merged(spans: list[tuple[int, int | None]]) -> tuple[tuple[int, int | None], ...]:
    """Overlapping spans as one, so the file stays small however many runs there were."""
    out: list[tuple[int, int | None]] = []
    for start, end in sorted(spans, key=lambda span: span[0]):
        if out and (out[-1][1] is None or start <= out[-1][1]):
            last_end = out[-1][1]
            out[-1] = (out[-1][0], None if last_end is None or end is None else max(last_end, end))
        else:
            out.append((start, end))
    return tuple(out)


def run_began(path: Path) -> None:
    """Record at `path` that a run begins now (its files made from now on are the run's)."""
    RunTimes.load(path).begun(_file_system_now(path.parent)).save(path)


def run_ended(path: Path) -> None:
    """Record at `path` that the run that began last ends now."""
    RunTimes.load(path).ended(max(time.time_ns(), _file_system_now(path.parent))).save(path)


def _file_system_now(directory: Path) -> int:
    """Now, by the clock the file system stamps change times with (coarser than `time.time_ns`, and
    behind it by up to a tick): the change time of a file made now. A file `pip install -e .` wrote
    a moment before the run is the user's; one written after is the run's."""
    directory.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=".run-time-", dir=directory)
    try:
        return os.fstat(handle).st_ctime_ns
    finally:
        os.close(handle)
        os.unlink(name)


def record_run_time(path: Path, *, ended: bool, on_warning: Callable[[str], None]) -> None:
    """`run_ended` or `run_began`; a file that cannot be written is a warning (a planted link is not)."""
    try:
        (run_ended if ended else run_began)(path)
    except LinkRefused:
        raise
    except OSError as err:
        on_warning(f"could not record the run's times ({err}): verification carries fewer ignored files")


@dataclass
class Carried:
    """What a checkout got of the project's ignored files."""

    copied: int = 0
    left_out: list[str] = field(default_factory=list)
    """Ignored files not carried (made or changed during a run, past the limits, unreadable)."""
    reasons: dict[str, int] = field(default_factory=dict)
    shared: list[tuple[Path, Path]] = field(default_factory=list)
    """(live directory, its place in the checkout): shown read-only there in the sandbox, not copied."""

    def leave_out(self, path: str, reason: str) -> None:
        self.left_out.append(path)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def describe(self, shown: int = 10) -> str:
        """One line for a failure: which ignored files the checkout did not have, and why."""
        if not self.left_out:
            return ""
        names = ", ".join(self.left_out[:shown]) + (
            f" and {len(self.left_out) - shown} more" if len(self.left_out) > shown else "")
        why = "; ".join(f"{count} {reason}" for reason, count in self.reasons.items())
        return f"ignored files left out of the verification checkout ({why}): {names}"


def carry_ignored(project: Path, target: Path, times: RunTimes, *, share_dirs: bool = False) -> Carried:
    """Copy `project`'s ignored files that no run made or changed into `target` (the project's
    directory in the checkout). Bytecode and orchestrate's own files never come along.

    `share_dirs` (checks run in the sandbox): an ignored directory of at least `SHARE_MIN_FILES`
    files none of which a run made or changed (bytecode included) is not copied but shown
    read-only at its place in the checkout (`Carried.shared`): a `.venv` or `node_modules` costs
    no copy, and no check can write into it."""
    carried, budget = Carried(), [MAX_FILES, MAX_BYTES]
    for relative, is_dir in _ignored_entries(project):
        found = list(_walk(project, project / relative)) if is_dir else _one(project, relative)
        if is_dir and share_dirs and len(found) >= SHARE_MIN_FILES and _make_dirs(target, relative) \
                and not any(times.during_a_run(info.st_ctime_ns) for _, info in found):
            carried.shared.append((project / relative, target / relative))
            continue
        for name, info in found:
            if name.endswith(_BYTECODE) or "__pycache__" in name.split("/"):
                continue
            if times.during_a_run(info.st_ctime_ns):
                carried.leave_out(name, "made or changed during a run")
            elif budget[0] <= 0 or budget[1] < info.st_size:
                carried.leave_out(name, f"past the limit of {MAX_FILES} files or {MAX_BYTES >> 30} GiB")
            elif _copy(project / name, target, name, info):
                budget[0] -= 1
                budget[1] -= info.st_size
                carried.copied += 1
            else:
                carried.leave_out(name, "could not be copied")
    return carried


def _ignored_entries(project: Path) -> Iterator[tuple[str, bool]]:
    """(path relative to `project`, whether it is a directory) of each ignored entry git lists:
    an ignored directory is one entry (git does not walk it); never orchestrate's own or bytecode."""
    try:
        listed = check_git(project, "ls-files", "-z", "--others", "--ignored", "--exclude-standard",
                           "--directory", "--", ".").stdout
    except CheckpointError:
        return
    for entry in split_z(listed):
        relative = entry.rstrip("/")
        if not relative or is_ours(relative) or "__pycache__" in relative.split("/"):
            continue
        path = project / relative
        yield relative, entry.endswith("/") and path.is_dir() and not path.is_symlink()


def _one(project: Path, relative: str) -> list[tuple[str, os.stat_result]]:
    info = _lstat(project / relative)
    return [(relative, info)] if info is not None and _carried_kind(info) else []


def _walk(project: Path, directory: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(path relative to `project`, lstat) of every regular file and link below `directory`,
    bytecode included, links not followed."""
    for current, dirs, names in os.walk(directory):
        links = [name for name in dirs if os.path.islink(os.path.join(current, name))]
        dirs[:] = sorted(name for name in dirs if name not in links)
        for name in sorted([*names, *links]):
            path = os.path.join(current, name)
            info = _lstat(Path(path))
            if info is not None and _carried_kind(info):
                yield os.path.relpath(path, project), info


def _carried_kind(info: os.stat_result) -> bool:
    return stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _copy(source: Path, target: Path, relative: str, info: os.stat_result) -> bool:
    """A copy of `source` at `target`/`relative` (a link as a link), with its times and mode; False
    when it cannot be made, or a directory on the way there is a link (committed, it may lead anywhere)."""
    destination = target / relative
    try:
        if not _make_dirs(target, str(Path(relative).parent)) or os.path.lexists(destination):
            return False
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(source), destination)
        else:
            shutil.copy2(source, destination, follow_symlinks=False)
    except OSError:
        return False
    return True


def _make_dirs(target: Path, relative: str) -> bool:
    """`target`/`relative` a directory, made part by part; False where a part is a link or no directory."""
    directory = target
    try:
        for part in Path(relative).parts:
            directory = directory / part
            if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
                return False
            if not directory.exists():
                directory.mkdir()
    except OSError:
        return False
    return True
