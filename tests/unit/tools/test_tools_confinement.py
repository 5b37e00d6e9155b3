"""Path confinement, including property-based tests: no path string the model can send resolves
to a writable place outside the project, into the orchestrator's state, or onto a check file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from orchestrator.tools.confinement import PathRefused, check_writable, relative, resolve_in_project
from orchestrator.tools.context import ToolContext
from tests.environments import unsandboxed


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A project with links leading out of it, next to an `outside` directory."""
    base = tmp_path_factory.mktemp("confine").resolve()
    root, outside = base / "project", base / "outside"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / ".autonomous" / "state").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text("def test(): pass\n")
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "link_out").symlink_to(outside)
    (root / "link_base").symlink_to(base)
    (root / "link_slash").symlink_to("/")
    (root / "sub" / "up_two").symlink_to("../..")
    (root / "link_state").symlink_to(root / ".autonomous")
    (root / "link_test").symlink_to(root / "tests" / "test_x.py")
    (root / "dangling_out").symlink_to(outside / "not-there-yet")
    return root, outside


SEGMENTS = [
    "..", ".", "", "sub", "deeper", "link_out", "link_base", "link_slash", "up_two", "link_state", "link_test",
    "dangling_out", ".autonomous", ".AUTONOMOUS", ".git", "state", "tests", "test_x.py", "project", "outside",
    "x", "secret.txt", "~", "etc", "tmp",
]


def path_strings(root: Path) -> st.SearchStrategy[str]:
    joined = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=7).map("/".join)
    prefixed = st.tuples(st.sampled_from(["", "/", str(root) + "/", str(root.parent) + "/", "./"]), joined).map(
        lambda pair: pair[0] + pair[1]
    )
    return st.one_of(prefixed, st.text(max_size=40), st.text(alphabet="./~ax\\\x00", max_size=20))


def is_inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_path_resolves_to_a_writable_place_outside_the_project(layout: tuple[Path, Path], data: st.DataObject) -> None:
    root, _ = layout
    raw = data.draw(path_strings(root))
    ctx = ToolContext(environment=unsandboxed(root), protected=frozenset({root / "tests" / "test_x.py"}))
    try:
        resolved = resolve_in_project(raw, root)
    except PathRefused as refused:
        assert str(refused)
        return
    # What the editor would open is where the OS would really go.
    assert resolved == Path(os.path.realpath(root / raw))
    assert is_inside(resolved, root)
    try:
        check_writable(resolved, ctx)
    except PathRefused:
        return
    relative_parts = resolved.relative_to(root).parts
    assert relative_parts and relative_parts[0].casefold() not in (".autonomous", ".git")
    assert resolved != root / "tests" / "test_x.py"


@settings(max_examples=300, deadline=None)
@given(raw=st.text(max_size=60))
def test_arbitrary_text_never_escapes(raw: str) -> None:
    root = Path("/nonexistent-project-root/p")
    try:
        resolved = resolve_in_project(raw, root)
    except PathRefused:
        return
    assume("\x00" not in raw)
    assert is_inside(resolved, root)


@pytest.mark.parametrize(
    "raw",
    ["../outside/secret.txt", "link_out/secret.txt", "link_base/outside/x", "link_slash/etc/passwd", "sub/up_two/x",
     "dangling_out", "/etc/passwd", "sub/../../outside", "~/.ssh/id_rsa", "a\x00b", "", "   ", "x" * 5000],
)
def test_escapes_are_refused(layout: tuple[Path, Path], raw: str) -> None:
    root, _ = layout
    with pytest.raises(PathRefused):
        resolve_in_project(raw, root)


def test_non_string_paths_are_refused(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    for raw in (None, 3, ["a"], {"p": 1}, b"bytes"):
        with pytest.raises(PathRefused, match="must be a string"):
            resolve_in_project(raw, root)


def test_the_message_says_when_a_symlink_is_the_reason(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with pytest.raises(PathRefused, match="through a symbolic link"):
        resolve_in_project("link_out/secret.txt", root)
    with pytest.raises(PathRefused) as plain:
        resolve_in_project("../outside", root)
    assert "symbolic" not in str(plain.value)


def test_relative_display(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    assert relative(root, root) == "."
    assert relative(root / "sub" / "a.py", root) == "sub/a.py"


@pytest.mark.parametrize("name", ["orchestrate.toml", "./orchestrate.toml", "sub/../orchestrate.toml", "ORCHESTRATE.TOML"])
def test_the_runs_configuration_is_not_writable(layout: tuple[Path, Path], name: str) -> None:
    root, _ = layout
    ctx = ToolContext(environment=unsandboxed(root))
    with pytest.raises(PathRefused, match="run's configuration"):
        check_writable(resolve_in_project(name, root), ctx)


def test_an_orchestrate_toml_below_the_root_is_ordinary(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    check_writable(resolve_in_project("sub/orchestrate.toml", root), ToolContext(environment=unsandboxed(root)))
