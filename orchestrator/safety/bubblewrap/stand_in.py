"""A verification checkout standing in for the live repository, inside the sandbox."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StandIn:
    """A verification checkout (`checkout`, outside the project) standing in for the live
    repository (`live`): in the sandbox the checkout is mounted where the live one is, so the
    live tree is out of sight and absolute paths (an editable install's) lead into the checkout."""

    checkout: Path
    live: Path
    shared: tuple[tuple[Path, Path], ...] = ()
    """(live directory, its place in the checkout): ignored directories no run touched, shown
    read-only in the checkout instead of copied (`orchestrator.git.carried_files`)."""

    def inside(self, path: Path) -> Path:
        """Where `path` (in the checkout) is seen in the sandbox."""
        return self.live / path.relative_to(self.checkout)

    def source(self, inside: Path) -> Path:
        """The checkout's path that is seen at `inside`."""
        return self.checkout / inside.relative_to(self.live)
