"""How a run that stopped on an error says so: a file the run could not write (a full disk, a
read-only mount) is the user's to fix, and stops with exit 3; anything else that escapes the
run's work is a bug in orchestrate, and says so, with exit 70 and where it was raised.

An `OSError` is not by itself a failed write: `Path.is_dir()` on a check command's word that is
no path raises ENAMETOOLONG, and telling the user the run "could not write its files" sent them
looking for a disk problem that was not there.
"""

from __future__ import annotations

import errno
import traceback
from pathlib import Path

# What writing a file fails with when the disk, the mount, the permissions or a file in the way
# is at fault: the user can fix each and resume.
_WRITE_ERRNOS = frozenset({
    errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM, errno.EFBIG,
    errno.EMFILE, errno.ENFILE, errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.EBUSY, errno.ETXTBSY,
})
_OWN_PACKAGES = frozenset({"orchestrator", "context_agent"})


def is_write_failure(err: OSError, run_files: Path) -> bool:
    """Whether `err` is the disk refusing a write (or a read of the run's own files, `run_files`)."""
    if err.errno in _WRITE_ERRNOS:
        return True
    # The run's own directory removed under it: the user's doing, not a bug.
    return err.errno == errno.ENOENT and err.filename is not None and _under(Path(str(err.filename)), run_files)


def write_failure_message(err: OSError) -> str:
    return f"could not write the run's files ({err}); fix that, then run again to resume"


def internal_error_message(err: BaseException) -> str:
    """One paragraph for a bug: what was raised, where, that the state is saved, and to report it."""
    frames = traceback.extract_tb(err.__traceback__)
    ours = [frame for frame in frames if _OWN_PACKAGES & set(Path(frame.filename).parts)] or frames
    where = f" at {Path(ours[-1].filename).name}:{ours[-1].lineno} in {ours[-1].name}" if ours else ""
    detail = "".join(traceback.format_exception(err)).rstrip()
    return (f"internal error: {type(err).__name__}: {err}{where}. This is a bug in orchestrate, not in your project "
            f"or spec: please report it with the traceback below. The state is saved; run again to resume.\n{detail}")


def _under(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents
