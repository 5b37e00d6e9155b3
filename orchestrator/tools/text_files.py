"""Reading and writing the editor's files: UTF-8 bytes, no newline translation, atomic writes.

CRLF files stay CRLF because nothing here translates newlines; only regular files are read
(a FIFO or device would block or never end); a write replaces the file in one rename and keeps
the mode of the file it replaces. Failures are `ToolError`s the model can act on.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from orchestrator.tools.context import ToolError, ToolInputError


def read_text(path: Path, shown: str, max_bytes: int) -> str:
    """The file's text; ToolError if it is missing, not a regular file, too big or not UTF-8."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ToolError(f"{shown} does not exist; create it with the create command") from None
    except OSError as err:
        raise ToolError(f"cannot read {shown}: {os_reason(err)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{shown} is a directory; view it to list its files")
    # A FIFO or device would block or never end; only regular files are read.
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{shown} is not a regular file")
    if info.st_size > max_bytes:
        raise ToolError(
            f"{shown} is too large for the editor ({info.st_size} bytes, limit {max_bytes}); "
            "use bash (`head`, `sed -n 'A,Bp'`, `grep -n`) to look at parts of it"
        )
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ToolError(f"cannot read {shown}: {os_reason(err)}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"{shown} is not UTF-8 text (binary?); the editor handles text files only, inspect it with bash "
            "(`file`, `xxd | head`)"
        ) from None


def write_text(path: Path, text: str, shown: str) -> None:
    """Replace `path` with `text` atomically, keeping the mode of an existing file."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolInputError("the text contains characters that cannot be encoded as UTF-8") from None
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    except OSError as err:
        raise ToolError(f"cannot write {shown}: {os_reason(err)}") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise ToolError(f"cannot write {shown}: {os_reason(err)}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        # os.replace renames over the final name itself: a symlink swapped in after the
        # confinement check is replaced, not followed.
        os.replace(tmp, path)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):
            raise ToolError(f"cannot write {shown}: {os_reason(err)}") from None
        raise


def split_lines(text: str) -> list[str]:
    """Lines with their newline kept; only '\\n' ends a line (as for `cat -n`)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def os_reason(err: OSError) -> str:
    return (err.strerror or type(err).__name__).lower()
