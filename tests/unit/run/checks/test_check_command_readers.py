"""Every reader of a check command survives any command: the words go through one tokenizer
(`shell_words`) and one "is this a path here" helper (`path_here`), and no question asked of
the disk about a word raises. A `python3 -c "<a script of 300 characters>"` once stopped every
run: `Path.is_dir()` raised ENAMETOOLONG on the script taken as a file name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from orchestrator.run.checks.guard.footprint import footprint
from orchestrator.run.checks.influence.check_reach import directories_on_path, named_paths, runs_whole_tree
from orchestrator.run.checks.influence.influence_snapshot import take_snapshot
from orchestrator.run.checks.protection.check_paths import check_file_keys, protected_files
from orchestrator.run.checks.protection.hidden_files import hidden_result
from orchestrator.run.checks.protection.protect import take_guard
from orchestrator.run.checks.running.check_batch import plan_batches
from orchestrator.run.checks.running.check_tools import python_modules_called
from orchestrator.run.checks.running.pytest_command import pytest_invocation
from orchestrator.run.checks.running.pytest_outcomes import PytestRecord, early_end
from orchestrator.run.checks.shell_words import (
    can_name_a_path,
    is_dir,
    is_file,
    path_here,
    plain_words,
    shell_words,
    strict_shell_words,
)

LONG_SCRIPT = "import sys; " + "; ".join(f"value_{n} = {n} * 2" for n in range(24)) + "; sys.exit(0)"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("project").resolve()
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    (root / "tests" / "conftest.py").write_text("")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "pytest.ini").write_text("[pytest]\n")
    yield root


def read_everywhere(root: Path, command: str) -> None:
    """The command through every reader a run puts a check command through."""
    words = shell_words(command)
    assert strict_shell_words(command) in (None, words)
    plain = plain_words(command)
    named = named_paths(root, plain)
    assert all(root in path.parents for path in named)
    assert root in directories_on_path(root, named)
    runs_whole_tree(plain)
    take_snapshot(root, command)
    files = protected_files(root, command, [])
    assert all(root in path.parents for path in files)
    keys = check_file_keys(root, command)
    footprint([], keys)
    take_guard(root, command, [])
    invocation = pytest_invocation(command)
    assert invocation is None or invocation.launcher
    plan_batches([command, command + " "], 2)
    python_modules_called(command)
    early_end(command, 0, PytestRecord())
    hidden_result(command, 1, [("x", "y")])
    for word in words:
        path = path_here(root, word)
        if path is not None:
            is_dir(path)
            is_file(path)


def test_a_python_c_script_longer_than_a_file_name_is_read_without_a_fault(project: Path) -> None:
    command = f'python3 -c "{LONG_SCRIPT}"'
    assert len(LONG_SCRIPT) > 255
    read_everywhere(project, command)
    assert take_snapshot(project, command).files  # the root's own pytest.ini is still watched


def test_a_word_that_cannot_be_a_path_names_nothing(project: Path) -> None:
    for word in ("x" * 256, "a/" * 2100, "a\0b", "\ud800", "$HOME/x", "~/x", "../outside", "", "/etc/passwd"):
        assert path_here(project, word) is None, word
    assert not is_dir(project / ("x" * 256)) and not is_file(project / ("x" * 256)) and not is_dir("a\0b")
    assert path_here(project, "tests/test_a.py") == project / "tests" / "test_a.py"
    assert path_here(project, "tests/../src/./pkg") == project / "src" / "pkg"
    assert not can_name_a_path("é" * 128 + "x")  # 257 bytes: too long a name, though 129 characters


_TRICKY = st.sampled_from([
    "\0", "\udc80", "\ud800", "'", '"', "\\", "\n", "|", "&&", ";", "<<EOF\n", "\nEOF\n", "$(", "`", "/", "..",
    "*", "**/", "::", "$HOME", "~", "-c", "-k", "-m", "pytest", "python3 -m pytest", "tests", "tests/test_a.py",
    "src/pkg", "é", "\u202e", "cd ", "> out", "2>&1", "#", " ", "\t", "=",
])
_PIECES = st.one_of(
    _TRICKY,
    st.text(st.characters(codec=None), max_size=40),
    st.text(alphabet="ab/._-", min_size=200, max_size=5000),  # names and paths beyond the limits
    st.text(st.characters(exclude_categories=()), max_size=20),  # lone surrogates too
)


@st.composite
def commands(draw: st.DrawFn) -> str:
    body = "".join(draw(st.lists(_PIECES, max_size=12)))
    shape = draw(st.sampled_from(["plain", "python -c", "bash -c", "pipe", "here-doc", "long"]))
    if shape == "python -c":
        return f'python3 -c "{body}{LONG_SCRIPT}"'
    if shape == "bash -c":
        return f"bash -c '{body}' && pytest {body}"
    if shape == "pipe":
        return f"pytest -q {body} | tee {body} 2>&1"
    if shape == "here-doc":
        return f"python3 - <<'EOF'\n{body}\nEOF\npytest {body}"
    if shape == "long":
        return (f"pytest {body} " * (10_000 // (len(body) + 8) + 1))[:10_000]
    return body


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(commands())
@example('python3 -c "' + "x" * 300 + '"')
@example("pytest 'unbalanced \"quotes tests/test_a.py")
@example("cat <<EOF\n" + "line\n" * 2000 + "EOF")
@example("pytest " + "a" * 10_000)
@example("pytest tests/\0test_a.py")
@example("pytest " + "a/" * 600 + "**")  # Python's glob recursed past the interpreter's limit
def test_no_check_command_makes_a_reader_fail(project: Path, command: str) -> None:
    read_everywhere(project, command)
