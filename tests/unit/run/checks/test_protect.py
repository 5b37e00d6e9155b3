"""Honest checks: the files a feature's check consists of, and noticing when the agent changed them."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.run.checks.protection import protect
from orchestrator.run.checks.protection.check_paths import protected_files
from tests.check_project import names, write_check_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_check_project(tmp_path)


def test_globs_add_files_but_never_leave_the_project_or_include_caches(project: Path) -> None:
    found = protected_files(project, None, ["tests/**/*.py", "../*.py", "/etc/*", "src", "**/*.pyc", ""])
    assert names(project, found) == ["src/app.py", "tests/helpers.py", "tests/test_app.py"]


def test_a_symlinked_check_file_protects_its_target_and_the_link(project: Path) -> None:
    (project / "tests" / "test_link.py").symlink_to(project / "tests" / "helpers.py")
    found = protected_files(project, "pytest tests/test_link.py", [])
    assert set(names(project, found)) == {"tests/helpers.py", "tests/test_link.py"}


def test_a_symlink_to_outside_is_not_followed(project: Path) -> None:
    (project / "escape.py").symlink_to(project.parent / "outside.py")
    assert protected_files(project, "python3 escape.py", []) == []


def test_snapshot_and_changed_files_see_edits_deletions_and_creations(project: Path) -> None:
    files = protected_files(project, "pytest tests/test_app.py", ["tests/helpers.py", "tests/new_*.py"])
    files.append(project / "tests" / "expected_later.py")
    before = protect.snapshot(files, project)
    assert before["tests/expected_later.py"] == protect.MISSING
    assert protect.changed_files(project, before) == []
    (project / "tests" / "test_app.py").write_text("def test_main():\n    pass\n")
    (project / "tests" / "helpers.py").unlink()
    (project / "tests" / "expected_later.py").write_text("")
    assert protect.changed_files(project, before) == ["tests/expected_later.py", "tests/helpers.py", "tests/test_app.py"]


def test_a_snapshot_without_a_root_still_reports_relative_paths(project: Path) -> None:
    files = protected_files(project, "pytest tests/test_app.py", [])
    before = protect.snapshot(files)
    assert list(before) == [str(project / "tests" / "test_app.py")]
    (project / "tests" / "test_app.py").write_text("changed")
    assert protect.changed_files(project, before) == ["tests/test_app.py"]


def test_touching_without_changing_content_is_not_a_change(project: Path) -> None:
    before = protect.snapshot(protected_files(project, "pytest tests", []), project)
    path = project / "tests" / "test_app.py"
    path.write_text(path.read_text())
    assert protect.changed_files(project, before) == []


def test_a_file_replaced_by_a_directory_counts_as_changed(project: Path) -> None:
    before = protect.snapshot([project / "check.sh"], project)
    (project / "check.sh").unlink()
    (project / "check.sh").mkdir()
    assert protect.changed_files(project, before) == ["check.sh"]


# ---- one attempt: take_guard, guard_changes, restore ----------------------------------------

CHECK = "python3 -m pytest tests/test_app.py"


def test_restore_undoes_edits_deletions_and_new_files_matching_a_protected_glob(project: Path) -> None:
    test = project / "tests" / "test_app.py"
    original = test.read_text()
    test.chmod(0o640)
    guard = protect.take_guard(project, CHECK, ["tests/conftest*.py", "tests/helpers.py"])

    test.write_text("def test_main():\n    pass\n")
    (project / "tests" / "helpers.py").unlink()
    (project / "tests" / "conftest.py").write_text("collect_ignore = ['test_app.py']\n")

    changed = protect.guard_changes(guard)
    assert changed == ["tests/conftest.py", "tests/helpers.py", "tests/test_app.py"]
    assert protect.restore(guard, changed) == []
    assert test.read_text() == original and (test.stat().st_mode & 0o777) == 0o640
    assert (project / "tests" / "helpers.py").read_text() == "X = 1\n"
    assert not (project / "tests" / "conftest.py").exists()
    assert protect.guard_changes(guard) == []


def test_restore_replaces_a_symlink_or_directory_and_never_writes_through_the_link(project: Path) -> None:
    outside = project.parent / "outside.py"
    test = project / "tests" / "test_app.py"
    original = test.read_text()
    guard = protect.take_guard(project, f"{CHECK} && sh check.sh", [])

    test.unlink()
    test.symlink_to(outside)  # a check that is now whatever lies outside
    (project / "check.sh").unlink()
    (project / "check.sh").mkdir()
    (project / "check.sh" / "inner").write_text("x")

    changed = protect.guard_changes(guard)
    assert changed == ["check.sh", "tests/test_app.py"]
    assert protect.restore(guard, changed) == []
    assert not test.is_symlink() and test.read_text() == original
    assert outside.read_text() == "outside"
    assert (project / "check.sh").is_file()


def test_restore_rebuilds_a_deleted_directory_and_a_parent_replaced_by_a_link(project: Path) -> None:
    import shutil

    guard = protect.take_guard(project, "pytest tests", [])
    shutil.rmtree(project / "tests")
    (project / "tests").symlink_to(project.parent, target_is_directory=True)

    changed = protect.guard_changes(guard)
    assert "tests/test_app.py" in changed
    assert protect.restore(guard, changed) == []
    assert not (project / "tests").is_symlink()
    assert (project / "tests" / "data" / "input.txt").read_text() == "42\n"
    assert not (project.parent / "test_app.py").exists()


def test_a_change_too_big_to_undo_is_carried_into_the_next_attempt(project: Path) -> None:
    test = project / "tests" / "test_app.py"
    guard = protect.take_guard(project, CHECK, [], copy_limit=0)  # nothing fits: nothing copied
    test.write_text("def test_main():\n    pass\n")

    changed = protect.guard_changes(guard)
    assert protect.restore(guard, changed) == ["tests/test_app.py"]
    assert guard.unrestored

    # The next attempt starts with the agent's version on disk; it must not become the baseline.
    next_guard = protect.take_guard(project, CHECK, [], carried=guard)
    assert protect.guard_changes(next_guard) == ["tests/test_app.py"]
    fresh = protect.take_guard(project, CHECK, [])
    assert protect.guard_changes(fresh) == []  # what carrying prevents


