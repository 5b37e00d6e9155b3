"""Counting fsyncs by directory: what a long run's per-feature cost is made of (the unit and
e2e halves of `test_fsync_and_status` both count with it, through the `fsyncs` fixture)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any


class FsyncCounter:
    """Counts fsyncs by the directory of the file (or the directory) synced."""

    def __init__(self) -> None:
        self.by_dir: Counter[str] = Counter()
        self._real = os.fsync

    def __call__(self, fd: Any) -> None:
        target = Path(os.readlink(f"/proc/self/fd/{fd}"))
        self.by_dir[(target if target.is_dir() else target.parent).name] += 1
        self._real(fd)

    @property
    def total(self) -> int:
        return sum(self.by_dir.values())
