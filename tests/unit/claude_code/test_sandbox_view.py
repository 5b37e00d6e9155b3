"""Paths resolved as a process with another root resolves them (`sandbox_view.resolve_under`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.claude_code.guards.sandbox_view import SandboxView, Unresolvable, resolve_under


def test_an_absolute_link_starts_again_at_the_sandboxs_root(tmp_path: Path) -> None:
    (tmp_path / "tmp" / "a").mkdir(parents=True)
    (tmp_path / "home" / "u").mkdir(parents=True)
    os.symlink("/home/u/.claude.json", tmp_path / "tmp" / "account.json")
    os.symlink("../account.json", tmp_path / "tmp" / "a" / "rel")
    os.symlink("/home/u", tmp_path / "tmp" / "a" / "home")
    assert resolve_under(tmp_path, Path("/tmp/account.json")) == Path("/home/u/.claude.json")
    assert resolve_under(tmp_path, Path("/tmp/a/rel")) == Path("/home/u/.claude.json")
    assert resolve_under(tmp_path, Path("/tmp/a/home/.claude/x")) == Path("/home/u/.claude/x")
    assert resolve_under(tmp_path, Path("/tmp/a/home/../z")) == Path("/home/z")  # `..` after the link, as the kernel


def test_a_loop_of_links_is_unresolvable(tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    os.symlink("/tmp/two", tmp_path / "tmp" / "one")
    os.symlink("/tmp/one", tmp_path / "tmp" / "two")
    with pytest.raises(Unresolvable):
        resolve_under(tmp_path, Path("/tmp/one"))


def test_without_the_sandboxs_view_a_path_through_its_private_mounts_is_unresolvable(tmp_path: Path) -> None:
    view = SandboxView("no-such-marker-" + os.urandom(4).hex(), private=(tmp_path / "tmp",))
    with pytest.raises(Unresolvable):
        view.resolve(tmp_path / "tmp" / "x")
    assert view.resolve(tmp_path / "elsewhere") == Path(os.path.realpath(tmp_path / "elsewhere"))
