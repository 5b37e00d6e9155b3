"""An artifact is untrusted input: whoever could write a shard's job output wrote it.

`inspect_tree` walks an artifact's directory once, before anything in it is read, and refuses
(`UnsafeArtifact`, a usage error: exit 2, nothing done) a symbolic or hard link anywhere in it (a
log pointing at `~/.docker/config.json` would be copied into the project), anything but regular
files and directories (a FIFO or `/dev/zero` never ends), a file larger than the bound its
name gets, and a tree with too many entries. `read_bounded` reads one file of it without
following a link (the walk and the read are separate moments) and never past its bound.
`check_totals` refuses the numbers of a forged spend: negative or not finite.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable
from pathlib import Path

from orchestrator.user_errors import UsageError

MAX_MANIFEST_BYTES = 1024 * 1024
# As the project's own records (`store.state.MAX_STATE_BYTES`, `store.feature_log.MAX_LOG_BYTES`).
MAX_STATE_BYTES = 64 * 1024 * 1024
MAX_LOG_BYTES = 16 * 1024 * 1024
MAX_RECORD_BYTES = 64 * 1024 * 1024  # any other record (a Context Agent store)
MAX_ENTRIES = 100_000
# The bundle is the shard's whole branch: git reads it, bounded only by what a repository holds.
UNBOUNDED = -1


class UnsafeArtifact(UsageError):
    """The artifact is refused: the message names the file and what is wrong (exit 2)."""


def inspect_tree(directory: Path, bound_of: Callable[[Path], int]) -> None:
    """Refuse `directory` unless it holds only regular files and directories, no links,
    each file within `bound_of(its path relative to directory)` bytes (`UNBOUNDED`: any)."""
    seen = 0
    pending = [directory]
    while pending:
        current = pending.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                seen += 1
                if seen > MAX_ENTRIES:
                    raise UnsafeArtifact(f"{directory}: more than {MAX_ENTRIES} files; not an artifact `export` wrote")
                path = Path(entry.path)
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    pending.append(path)
                elif not stat.S_ISREG(info.st_mode):
                    raise UnsafeArtifact(f"{path}: {_kind(info.st_mode)}, not a regular file; {_REFUSED}")
                elif info.st_nlink > 1:
                    raise UnsafeArtifact(f"{path}: a hard link ({info.st_nlink} names for one file); {_REFUSED}")
                else:
                    bound = bound_of(path.relative_to(directory))
                    if bound != UNBOUNDED and info.st_size > bound:
                        raise UnsafeArtifact(f"{path}: {info.st_size} bytes, more than the {bound} allowed; {_REFUSED}")


_REFUSED = "an artifact is refused whole when anything in it could reach outside it (re-export it with `orchestrate export`)"


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def read_bounded(path: Path, bound: int) -> bytes:
    """The bytes of the regular file at `path`, never through a link; `UnsafeArtifact` when it is
    a link, not a regular file or longer than `bound`; `OSError` when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if os.path.islink(path):
            raise UnsafeArtifact(f"{path}: a symbolic link; {_REFUSED}") from err
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeArtifact(f"{path}: {_kind(info.st_mode)}, not a regular file; {_REFUSED}")
        if info.st_nlink > 1:
            raise UnsafeArtifact(f"{path}: a hard link ({info.st_nlink} names for one file); {_REFUSED}")
        data = handle.read(bound + 1)
    if len(data) > bound:
        raise UnsafeArtifact(f"{path}: more than the {bound} bytes allowed; {_REFUSED}")
    return data


def bad_numbers(data: object, where: str = "") -> list[str]:
    """Where in `data` (a JSON value) a number is negative or not finite: a spend never is."""
    if isinstance(data, dict):
        return [found for key, value in data.items() for found in bad_numbers(value, f"{where}.{key}" if where else key)]
    if isinstance(data, list):
        return [found for i, value in enumerate(data) for found in bad_numbers(value, f"{where}[{i}]")]
    if isinstance(data, bool) or not isinstance(data, int | float):
        return []
    return [f"{where} = {data}"] if data < 0 or not math.isfinite(data) else []
