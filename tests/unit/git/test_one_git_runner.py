"""Every git the program starts goes through `orchestrator/git/run_git.py`: no other module starts one.

The runner is where git is hardened against what the agent wrote (submodules, repository
config, attributes, a `.git` it made); a git started anywhere else would have none of it. This
scans the source, so a new call site fails here before it ships.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from orchestrator.git import hardening

ROOT = Path(__file__).resolve().parents[3]
RUNNER = ROOT / "orchestrator" / "git" / "run_git.py"
PACKAGES = ("orchestrator", "context_agent")
# Calls that start a process.
_STARTERS = frozenset({
    "run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput", "system", "popen",
    "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp",
    "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "posix_spawn", "posix_spawnp", "create_subprocess_exec",
    "create_subprocess_shell", "spawn", "which",
})


def _names_git(value: object) -> bool:
    """A string that starts the git program: "git", "/usr/bin/git", "git status ..."."""
    if not isinstance(value, str) or not value.strip():
        return False
    return Path(value.split()[0]).name == "git"


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _argv_literal(node: ast.List | ast.Tuple) -> bool:
    """`["git", ...]`, or a tuple `("git", "status", ...)`: not a one-word tuple of names (`("git",)`)
    or a label and its value (`("git", version())`)."""
    if not node.elts or not isinstance(node.elts[0], ast.Constant) or not _names_git(node.elts[0].value):
        return False
    if isinstance(node, ast.List):
        return True
    return len(node.elts) > 1 and isinstance(node.elts[1], ast.Constant) and isinstance(node.elts[1].value, str)


def _git_starts(tree: ast.AST) -> list[int]:
    """Lines that start git: a process-starting call with git in its arguments, or an argv literal
    that begins with git (built in one place, started in another)."""
    fakes = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call) and _called(node) == "CompletedProcess"
             for arg in node.args}
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) in _STARTERS:
            for arg in [*node.args, *(keyword.value for keyword in node.keywords)]:
                if any(isinstance(sub, ast.Constant) and _names_git(sub.value) for sub in ast.walk(arg)):
                    lines.append(node.lineno)
        elif isinstance(node, (ast.List, ast.Tuple)) and _argv_literal(node) and id(node) not in fakes:
            lines.append(node.lineno)
    return lines


def _sources() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


def test_no_module_but_the_runner_starts_git() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _sources() if path != RUNNER
        for line in _git_starts(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "git started outside orchestrator/git/run_git.py (use run_git / check_git): " + ", ".join(found)


@pytest.mark.parametrize("source", [
    'import subprocess\nsubprocess.run(["git", "status"])\n',
    'import subprocess\nargv = ["git", "diff"]\nsubprocess.Popen(argv)\n',
    'import os\nos.system("git status --porcelain")\n',
    'import shutil\nshutil.which("git")\n',
    'import os\nos.execvp("/usr/bin/git", ("/usr/bin/git", "add"))\n',
])
def test_the_scan_sees_git_started_by_hand(source: str) -> None:
    assert _git_starts(ast.parse(source))


def test_the_scan_leaves_alone_what_starts_no_git() -> None:
    source = ('import subprocess\nsubprocess.run(["bash", "-c", "make"])\n'
              'subprocess.CompletedProcess(["git", "cherry-pick"], 0, "", "")\nneedles = ("git",)\nrows = [("git", version())]\n')
    assert _git_starts(ast.parse(source)) == []


def test_the_scan_covers_the_runner_itself() -> None:
    assert _git_starts(ast.parse(RUNNER.read_text(encoding="utf-8"))), "the runner's own start of git is not seen"


def test_work_tree_commands_are_told_to_leave_submodules_alone() -> None:
    for subcommand in ("status", "diff", "diff-files", "diff-index"):
        assert hardening.subcommand_arguments(subcommand, ["--name-only"], [])[0] == "--ignore-submodules=all"


def test_add_leaves_out_every_gitlink_and_nested_repository() -> None:
    staged = "100644 abc 0\tsrc/a.py\x00160000 def 0\tlib\x00"
    untracked = "new.py\0vendor/tool/\0"
    nested = hardening.nested_paths(staged, untracked)
    assert nested == ["lib", "vendor/tool"]
    assert hardening.subcommand_arguments("add", ["--all", "--", "."], nested) == [
        "--all", "--", ".", ":(exclude,literal)lib", ":(exclude,literal)vendor/tool",
    ]


def test_commands_that_enter_submodules_are_never_run() -> None:
    for subcommand in ("submodule", "stash"):
        with pytest.raises(ValueError):
            hardening.subcommand_arguments(subcommand, [], [])


def test_repository_config_that_runs_programs_is_overridden() -> None:
    entries: list[tuple[str, str, str | None]] = [
        ("local", "filter.x.clean", "sh -c evil"), ("local", "merge.m.driver", "evil"),
        ("local", "credential.helper", "evil"), ("global", "filter.lfs.clean", "git-lfs clean -- %f"),
        ("local", "filter.lfs.clean", "evil"), ("local", "user.name", "me"),
    ]
    overrides = hardening.neutral_overrides(entries)
    assert overrides == ["-c", "filter.x.clean=", "-c", "merge.m.driver=false", "-c", "credential.helper=",
                         "-c", "filter.lfs.clean=git-lfs clean -- %f"]
