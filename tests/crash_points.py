"""`orchestrate` with a kill -9 at one exact point, for crash tests: `python -m tests.crash_points`.

`CRASH_AT` names the point and `CRASH_FEATURE` the feature (the first time that feature gets
there, the process kills itself with SIGKILL, as `kill -9` from outside would):

- `after-check-pass`: its check has just passed, before anything is recorded about it;
- `before-commit`: its checkpoint commit is about to be made;
- `after-commit`: its checkpoint commit has just been made, before the run records it.

Nothing here is part of the product: the points are reached by wrapping its functions.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _install(point: str, feature_id: str) -> None:
    from orchestrator.git import checkpoint as git_checkpoint
    from orchestrator.run.checks.running.check_command import CheckVerifier

    if point == "after-check-pass":
        real_check = CheckVerifier.check

        def check(self: CheckVerifier, command: Any, attempt: int) -> Any:
            result = real_check(self, command, attempt)
            if result.success and feature_id in str(command):
                _die()
            return result

        CheckVerifier.check = check  # type: ignore[method-assign]
    elif point in ("before-commit", "after-commit"):
        real_commit = git_checkpoint.commit_checkpoint

        def commit_checkpoint(root: Any, message: str, **kwargs: Any) -> Any:
            if f": {feature_id}:" in message and point == "before-commit":
                _die()
            sha = real_commit(root, message, **kwargs)
            if f": {feature_id}:" in message:
                _die()
            return sha

        git_checkpoint.commit_checkpoint = commit_checkpoint
    else:
        raise SystemExit(f"unknown CRASH_AT {point!r}")


if __name__ == "__main__":
    _install(os.environ["CRASH_AT"], os.environ["CRASH_FEATURE"])
    from orchestrator.cli.commands import main

    sys.argv[0] = "orchestrate"
    main()
