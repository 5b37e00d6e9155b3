"""Files that can sway a check without being named by it: which are watched, which changes count."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config_layers import load_config
from orchestrator.run.checks.influence.check_influence import InfluenceWatch, compare
from orchestrator.run.checks.influence.influence_snapshot import MAX_WALKED_ENTRIES, take_snapshot
from shared_base.check_result import Influencer

CHECK = "python3 -m pytest -q tests/test_feature.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "tests/test_feature.py").write_text("def test_x():\n    assert False\n")
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\ndependencies = []\n')
    (root / "calendar.py").write_text("# the project's own module\n")
    return root


def _changes(root: Path, act, command: str = CHECK) -> set[tuple[str, str, str]]:
    before = take_snapshot(root, command)
    act(root)
    return {(i.path, i.kind, i.change) for i in compare(before, take_snapshot(root, command))}


def _write(path: str, text: str):
    def act(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return act


@pytest.mark.parametrize("path,text,kind", [
    ("tests/conftest.py", "def pytest_runtest_makereport(item, call): pass\n", "conftest"),
    ("conftest.py", "import pytest\n", "conftest"),
    ("pytest.ini", "[pytest]\naddopts = --collect-only\n", "pytest-config"),
    ("tests/pytest.ini", "[pytest]\naddopts = --collect-only\n", "pytest-config"),
    ("tox.ini", "[pytest]\naddopts = -p no:python\n", "pytest-config"),
    ("setup.cfg", "[tool:pytest]\naddopts = --collect-only\n", "pytest-config"),
    ("sitecustomize.py", "import builtins\n", "site-hook"),
    ("src/sitecustomize.py", "import builtins\n", "site-hook"),
    ("usercustomize.py", "import builtins\n", "site-hook"),
    ("hook.pth", "import os\n", "site-hook"),
    ("random.py", "def randint(a, b): return 4\n", "stdlib-shadow"),
    ("tests/json/__init__.py", "", "stdlib-shadow"),
])
def test_a_new_file_that_can_sway_the_check_is_found(project: Path, path: str, text: str, kind: str) -> None:
    assert _changes(project, _write(path, text)) == {(path, kind, "added")}


def test_changed_and_removed_files_count_too(project: Path) -> None:
    (project / "tests/conftest.py").write_text("import pytest\n")
    (project / "pytest.ini").write_text("[pytest]\n")

    def act(root: Path) -> None:
        (root / "tests/conftest.py").write_text("import pytest\n# and a hook\n")
        (root / "pytest.ini").unlink()

    assert _changes(project, act) == {("tests/conftest.py", "conftest", "modified"), ("pytest.ini", "pytest-config", "removed")}


def test_only_the_pytest_part_of_pyproject_and_setup_cfg_counts(project: Path) -> None:
    (project / "setup.cfg").write_text("[metadata]\nname = demo\n")
    ordinary = _write("pyproject.toml", '[project]\nname = "demo"\ndependencies = ["rich"]\n')
    assert _changes(project, ordinary) == set()
    assert _changes(project, _write("setup.cfg", "[metadata]\nname = demo2\n[flake8]\nmax-line-length = 99\n")) == set()
    pytest_table = _write("pyproject.toml", '[project]\nname = "demo"\n[tool.pytest.ini_options]\naddopts = "--co"\n')
    assert _changes(project, pytest_table) == {("pyproject.toml", "pytest-config", "added")}


def test_ordinary_work_is_not_flagged(project: Path) -> None:
    def act(root: Path) -> None:
        (root / "feature.py").write_text("def answer():\n    return 42\n")
        (root / "calendar.py").write_text("# edited: the project's own module, not a new shadow\n")
        (root / "other").mkdir()
        (root / "other/conftest.py").write_text("# not on the check's path\n")
        (root / ".venv/lib/site-packages").mkdir(parents=True)
        (root / ".venv/lib/site-packages/dist.pth").write_text("/x\n")
        (root / "src/deep").mkdir(parents=True)
        (root / "src/deep/random.py").write_text("# inside a package: shadows nothing\n")

    assert _changes(project, act) == set()


def test_a_pytest_command_naming_no_path_watches_every_conftest(project: Path) -> None:
    deep = _write("tests/unit/api/conftest.py", "import pytest\n")
    assert _changes(project, deep, command="python3 -m pytest -q") == {("tests/unit/api/conftest.py", "conftest", "added")}
    # A directory named by the command is walked; a node id names its file.
    named = _write("tests/unit/db/conftest.py", "import pytest\n")
    assert _changes(project, named, command="pytest tests/unit -q") == {("tests/unit/db/conftest.py", "conftest", "added")}
    node = _write("tests/conftest.py", "import pytest\n")
    assert _changes(project, node, command="pytest tests/test_feature.py::test_x") == {("tests/conftest.py", "conftest", "added")}


def test_a_command_that_runs_no_pytest_and_names_no_path_does_not_walk_the_tree(project: Path) -> None:
    assert _changes(project, _write("tests/unit/conftest.py", "x = 1\n"), command="true") == set()
    assert _changes(project, _write("conftest.py", "x = 1\n"), command="true") == {("conftest.py", "conftest", "added")}


def test_a_huge_tree_stops_the_walk_and_says_so(project: Path) -> None:
    many = project / "tests/many"
    many.mkdir()
    for index in range(MAX_WALKED_ENTRIES + 10):
        (many / f"f{index}").touch()
    warnings: list[str] = []
    watch = InfluenceWatch(project, on_warning=lambda message, **_: warnings.append(message))
    watch.before_attempt("feat-01", "pytest")
    assert take_snapshot(project, "pytest").partial
    assert len(warnings) == 1 and "are not watched" in warnings[0]
    assert watch.after_attempt("feat-01", "pytest") == []


def test_the_baseline_is_kept_across_attempts_of_a_feature(project: Path) -> None:
    warnings: list[tuple[str, dict]] = []
    watch = InfluenceWatch(project, strict=True, on_warning=lambda message, **data: warnings.append((message, data)))
    watch.before_attempt("feat-01", CHECK)
    (project / "tests/conftest.py").write_text("import pytest\n")
    assert [i.path for i in watch.after_attempt("feat-01", CHECK)] == ["tests/conftest.py"]
    # Attempt 2 leaves the planted file where it is: it still counts.
    watch.before_attempt("feat-01", CHECK)
    assert [i.path for i in watch.after_attempt("feat-01", CHECK)] == ["tests/conftest.py"]
    assert len(warnings) == 2 and "--strict-checks fails this attempt" in warnings[0][0]
    assert warnings[0][1]["influencers"] == [Influencer(path="tests/conftest.py", kind="conftest", change="added")]
    # Removed again: nothing to say. After the feature, the next one starts from what is there.
    (project / "tests/conftest.py").unlink()
    assert watch.after_attempt("feat-01", CHECK) == []
    (project / "tests/conftest.py").write_text("import pytest\n")
    watch.forget("feat-01")
    watch.before_attempt("feat-01", CHECK)
    assert watch.after_attempt("feat-01", CHECK) == []


def test_no_check_means_nothing_to_watch(project: Path) -> None:
    watch = InfluenceWatch(project)
    watch.before_attempt("feat-01", None)
    (project / "conftest.py").write_text("x = 1\n")
    assert watch.after_attempt("feat-01", None) == []


def test_strict_checks_comes_from_flag_environment_and_file(tmp_path: Path) -> None:
    assert load_config({}, tmp_path, environ={}).strict_checks is False
    assert load_config({"strict_checks": True}, tmp_path, environ={}).strict_checks is True
    assert load_config({}, tmp_path, environ={"ORCHESTRATE_STRICT_CHECKS": "1"}).strict_checks is True
    (tmp_path / "orchestrate.toml").write_text("strict_checks = true\n")
    assert load_config({}, tmp_path, environ={}).strict_checks is True


def test_creating_the_file_the_check_names_does_not_make_old_files_look_new(project: Path) -> None:
    (project / "tests/conftest.py").write_text("import pytest\n")
    (project / "other/deep").mkdir(parents=True)
    (project / "other/deep/conftest.py").write_text("import pytest\n")
    # The check names a test file, then a directory, that the agent has yet to write.
    assert _changes(project, _write("tests/test_new.py", "def test(): pass\n"),
                    command="pytest -q tests/test_new.py") == set()



def test_a_file_the_second_look_missed_counts_as_removed_only_if_it_is_gone(project: Path) -> None:
    # The baseline walked the whole tree; the later look does not (a walk cut short at its
    # limit does the same): what it did not see is looked up before it is called removed.
    (project / "other/deep").mkdir(parents=True)
    (project / "other/deep/conftest.py").write_text("import pytest\n")
    watch = InfluenceWatch(project)
    watch.before_attempt("feat-01", "pytest -k smoke")
    assert watch.after_attempt("feat-01", "pytest tests") == []
    (project / "other/deep/conftest.py").unlink()
    assert [(i.path, i.change) for i in watch.after_attempt("feat-01", "pytest tests")] == [
        ("other/deep/conftest.py", "removed")]


def test_a_link_does_not_lead_the_watch_out_of_the_project(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "tests/out").symlink_to(outside, target_is_directory=True)
    act = _write("../outside/conftest.py", "import pytest\n")
    assert _changes(project, act, command="pytest tests/out") == set()
