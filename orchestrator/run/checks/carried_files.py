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
directory is one entry, git does not list its files), then at most `MAX_FILES` files and
`MAX_BYTES` bytes are looked at (stat, no read) and copied; what lies past that is left out.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from context_agent.files import LinkRefused
from orchestrator.git.run_git import CheckpointError, check_git
from orchestrator.git.tree import is_ours, split_z
from orchestrator.store.atomic import write_json_atomic

RUN_TIMES_NAME = "run-times.json"
MAX_FILES = 50_000
MAX_BYTES = 2 * 1024**3
# A file's change time comes from the kernel's coarse clock, which may lag the run's own by a tick.
_MARGIN_NS = 2_000_000_000
_BYTECODE = (".pyc", ".pyo")


@dataclass(frozen=True)
class RunTimes:
    """When runs worked on the project: (start, end) in nanoseconds, end None for one not ended."""

    spans: tuple[tuple[int, int | None], ...] = ()

    @classmethod
    def load(cls, path: Path) -> RunTimes:
        """The spans recorded at `path`; unreadable: one span from the epoch on (nothing carried)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
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
        return RunTimes(_merged([*closed, (now_ns - _MARGIN_NS, None)]))

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
    RunTimes.load(path).begun(time.time_ns()).save(path)


def run_ended(path: Path) -> None:
    """Record at `path` that the run that began last ends now."""
    RunTimes.load(path).ended(time.time_ns()).save(path)


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


def carry_ignored(project: Path, target: Path, times: RunTimes) -> Carried:
    """Copy `project`'s ignored files that no run made or changed into `target` (the project's
    directory in the checkout). Bytecode and orchestrate's own files never come along."""
    carried, budget = Carried(), [MAX_FILES, MAX_BYTES]
    for relative, info in _ignored_files(project):
        if relative.endswith(_BYTECODE):
            continue
        if times.during_a_run(info.st_ctime_ns):
            carried.leave_out(relative, "made or changed during a run")
        elif budget[0] <= 0 or budget[1] < info.st_size:
            carried.leave_out(relative, f"past the limit of {MAX_FILES} files or {MAX_BYTES >> 30} GiB")
        elif _copy(project / relative, target, relative, info):
            budget[0] -= 1
            budget[1] -= info.st_size
            carried.copied += 1
        else:
            carried.leave_out(relative, "could not be copied")
    return carried


def _ignored_files(project: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(path relative to `project`, lstat) of every ignored regular file and link, bytecode
    directories skipped; an ignored directory is walked here, without following links."""
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
        if entry.endswith("/") and path.is_dir() and not path.is_symlink():
            yield from _walk(project, path)
        else:
            info = _lstat(path)
            if info is not None and (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                yield relative, info


def _walk(project: Path, directory: Path) -> Iterator[tuple[str, os.stat_result]]:
    for current, dirs, names in os.walk(directory):
        links = [name for name in dirs if os.path.islink(os.path.join(current, name))]
        dirs[:] = sorted(name for name in dirs if name != "__pycache__" and name not in links)
        for name in sorted([*names, *links]):
            path = os.path.join(current, name)
            info = _lstat(Path(path))
            if info is not None and (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                yield os.path.relpath(path, project), info


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
        directory = target
        for part in Path(relative).parent.parts:
            directory = directory / part
            if directory.is_symlink():
                return False
            if not directory.exists():
                directory.mkdir()
        if os.path.lexists(destination):
            return False
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(source), destination)
        else:
            shutil.copy2(source, destination, follow_symlinks=False)
    except OSError:
        return False
    return True
