"""Reading under `.autonomous/` without following a link: the one way the program opens its state.

A link in the state (planted by the agent's commands where no sandbox kept `.autonomous/`
read-only, by a check, or shipped in a cloned repository) could lead a read to any file of the
user's (`~/.ssh/id_ed25519`), whose content would then be parsed, echoed in an error or carried
into a report. So every reader here refuses, with `LinkRefused` and a line saying what to do:

- a link at the file itself (`O_NOFOLLOW`; a dangling link too, where `Path.exists` says no file);
- a linked directory between `.autonomous` and the file (`refuse_links`);
- anything but a regular file (a FIFO would block the read: opened non-blocking, then refused).

Writes are `orchestrator.store.disk.atomic`'s (a link in place of a file is replaced, never written
through) and deletions `atomic.remove_no_follow`'s. Paths outside `.autonomous` are the user's and
are read as given.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from orchestrator.store.disk.atomic import refuse_links
from shared_base.files import LinkRefused, TooLarge


def lexists(path: Path) -> bool:
    """Whether anything is at `path`, a link (dangling or not) included: a reader that asked
    `path.exists()` would take a dangling link for no file, and its writer would follow it."""
    return os.path.lexists(path)


def open_no_follow(path: Path) -> BinaryIO:
    """`path` opened for reading in binary mode, never through a link (see the module's doc).

    `FileNotFoundError` when nothing is there, `LinkRefused` for a link, `OSError` otherwise."""
    refuse_links(path.parent)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise LinkRefused(_link_message(path)) from None
        raise
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise OSError(errno.EINVAL, f"{path} is not a regular file; orchestrate reads only its own files there")
    return handle


def read_no_follow(path: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, opened as `open_no_follow` does; `TooLarge` past `max_bytes`."""
    with open_no_follow(path) as handle:
        if os.fstat(handle.fileno()).st_size > max_bytes:
            raise TooLarge(f"{path} is larger than {max_bytes} bytes")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while read
        raise TooLarge(f"{path} is larger than {max_bytes} bytes")
    return data


def _link_message(path: Path) -> str:
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    return (f"{path} is a symbolic link{target}; orchestrate never reads its state through a link "
            "(it could lead anywhere on your disk): remove the link and run again")
