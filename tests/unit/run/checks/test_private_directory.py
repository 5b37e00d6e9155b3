"""`PrivateDirectory`: a checkout's private directory outside the project, named when its owner
is built and made only when it begins (the `--jobs` merge queue's integration tree: a run that
stops before it begins leaves nothing in the temporary directory)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from orchestrator.run.checks.clean_checkout import PrivateDirectory, checkout_base


def test_it_is_named_without_being_made_then_made_private_with_a_killed_runs_leftover_gone(tmp_path: Path) -> None:
    base, prefix = checkout_base(tmp_path, "integration")
    leftover = base / f"{prefix}killed"  # as a `kill -9` of an earlier run leaves it
    other_kind = base / f"{checkout_base(tmp_path, 'combine')[1]}killed"
    leftover.mkdir(mode=0o700)
    other_kind.mkdir(mode=0o700)
    try:
        private = PrivateDirectory.of(tmp_path, "integration")
        assert private.path.parent == base and private.path.name.startswith(prefix)
        assert not private.path.exists() and leftover.is_dir()

        assert private.make() == private.path
        assert stat.S_IMODE(private.path.stat().st_mode) == 0o700
        assert not leftover.exists() and other_kind.is_dir()  # another kind's is not this one's to remove
        assert PrivateDirectory.of(tmp_path, "integration").path != private.path  # unguessable, not derived

        (private.path / "tree").mkdir()
        private.remove()
        assert not private.path.exists()
        private.remove()  # quietly, when it is gone already (or was never made)
    finally:
        for path in (leftover, other_kind):
            if path.exists():
                path.rmdir()


def test_making_it_follows_nothing_already_at_its_path(tmp_path: Path) -> None:
    private = PrivateDirectory.of(tmp_path, "integration")
    private.path.symlink_to(tmp_path)  # planted where it is to be made
    try:
        with pytest.raises(FileExistsError):
            private.make()
        assert private.path.is_symlink()
    finally:
        private.path.unlink()
