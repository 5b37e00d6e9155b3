"""Which paths under a directory tree were written, created, moved or deleted, from Linux's
inotify (through ctypes: the standard library has no binding, and one small reader is all the
footprint needs).

`InotifyWatch.start` returns None where inotify is not there (another system, no libc symbol)
or the tree needs more watches than the system allows; the caller then walks the tree instead.
`drain` returns the relative paths that changed since the last drain, or None when the kernel's
queue overflowed and events were lost (the caller walks once and goes on). Writes are queued by
the kernel before the writing call returns, so after a process ends, its changes are all there.
inotify does not see writes through a memory mapping or through a hard link from outside the
tree; for a footprint that only orders the regression checks (final verification runs them
all), that is an accepted gap.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from collections.abc import Callable

from orchestrator.run.checks.influence.check_reach import is_directory

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000

_WATCHED = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event, then the name)


class InotifyWatch:
    """Every directory of a tree watched; `drain` says what changed since the last drain.

    `walked(relative_dir)`: whether a directory belongs to the tree (the footprint's rules: not
    caches, not orchestrate's own). A directory that moves away or is deleted is reported as
    gone (its events name only the directory): the caller knows which files were below it."""

    def __init__(self, libc: ctypes.CDLL, fd: int, root: str, walked: Callable[[str], bool]) -> None:
        self._libc, self._fd, self.root, self._walked = libc, fd, root, walked
        self._dirs: dict[int, str] = {}  # watch descriptor -> relative directory ("" is the root)
        # A new directory could not be watched (the system's limit): from now on the tree must be walked.
        self.broken = False

    @classmethod
    def start(cls, root: str, walked: Callable[[str], bool]) -> InotifyWatch | None:
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return None
        watch = cls(libc, fd, root, walked)
        if not watch._add_tree(""):
            watch.close()
            return None
        return watch

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def drain(self) -> tuple[set[str], set[str]] | None:
        """(changed file paths, directories gone or moved away) since the last drain, relative
        to the root; None when events were lost: the caller walks the tree once (after a queue
        overflow), or for good (`broken`: a new directory could not be watched)."""
        files: set[str] = set()
        gone: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return files, gone
            except OSError:
                self.broken = True
                return None
            if not self._take(data, files, gone):
                return None

    def _take(self, data: bytes, files: set[str], gone: set[str]) -> bool:
        offset = 0
        while offset < len(data):
            wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
            offset += _HEADER.size
            name = data[offset:offset + size].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            offset += size
            if mask & IN_Q_OVERFLOW:
                return False
            directory = self._dirs.get(wd)
            if mask & IN_IGNORED:
                self._dirs.pop(wd, None)
                continue
            if directory is None or not name:
                continue  # the directory's own events: its entries' events say what changed
            path = directory + name
            if mask & IN_ISDIR:
                if not self._walked(path):
                    continue
                if mask & (IN_MOVED_FROM | IN_DELETE):
                    gone.add(path)
                    self._forget(path + "/")  # moved within the tree: its new place is watched anew
                elif mask & (IN_CREATE | IN_MOVED_TO):
                    # Watch it first, then list it: a file made before the watch is in the listing.
                    if not self._add_tree(path + "/"):
                        self.broken = True
                        return False
                    files.update(self._files_below(path + "/"))
                continue
            files.add(path)
        return True

    def _add_tree(self, relative: str) -> bool:
        """Watch `relative` (ending in "/", or "" for the root) and every walked directory below it."""
        pending = [relative]
        while pending:
            directory = pending.pop()
            full = os.path.join(self.root, directory)
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(full), _WATCHED)
            if wd < 0:
                if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR):
                    continue  # gone again already: its removal was an event too
                return False  # ENOSPC: more directories than the system's watch limit
            self._dirs[wd] = directory
            for entry in _entries(full):
                key = directory + entry.name
                if is_directory(entry) and self._walked(key):
                    pending.append(key + "/")
        return True

    def _forget(self, relative: str) -> None:
        for wd, directory in list(self._dirs.items()):
            if directory.startswith(relative):
                self._libc.inotify_rm_watch(self._fd, wd)
                del self._dirs[wd]

    def _files_below(self, relative: str) -> set[str]:
        found: set[str] = set()
        pending = [relative]
        while pending:
            directory = pending.pop()
            for entry in _entries(os.path.join(self.root, directory)):
                key = directory + entry.name
                if is_directory(entry):
                    if self._walked(key):
                        pending.append(key + "/")
                else:
                    found.add(key)
        return found


def _entries(directory: str) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(directory))
    except OSError:
        return []


_LIBC: list[ctypes.CDLL | None] = []


def _libc() -> ctypes.CDLL | None:
    """The C library with its inotify calls typed, or None where it has none."""
    if not _LIBC:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.inotify_init1.argtypes = [ctypes.c_int]
            libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        except (OSError, AttributeError):
            libc = None
        _LIBC.append(libc)
    return _LIBC[0]
