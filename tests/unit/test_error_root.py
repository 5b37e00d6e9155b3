"""One error root and one place for exit codes (issue 45 item 3), checked on the source itself.

Every exception class of `orchestrator` derives from `OrchestrateError` (`orchestrator.user_errors`),
whose `exit_code` the CLI entry point alone turns into the process's exit code; the exit codes are
named in that module alone. Not scanned: `context_agent`, which stands alone and imports nothing
of `orchestrator`, and the fake Messages API under `orchestrator/demo/fake_api`, a test double.
"""

from __future__ import annotations

import ast
import builtins
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "orchestrator"
NOT_SCANNED = (PACKAGE / "demo" / "fake_api",)
ERRORS_MODULE = PACKAGE / "user_errors.py"
ROOT_ERROR = "OrchestrateError"
BUILTIN_ERRORS = {
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
}
# Where a program's exit is called with a number.
EXIT_CALLS = {"exit", "_exit", "Exit", "SystemExit"}
# Another program than orchestrate: the sandbox's first process (standard library only, run with
# `python -I -S`), which ends with the shell's codes for a command that cannot start (126, 127).
OTHER_PROGRAMS = (PACKAGE / "safety" / "bubblewrap" / "sandbox_init.py",)


@cache
def _sources() -> dict[Path, ast.Module]:
    return {
        path: ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(path.is_relative_to(skipped) for skipped in NOT_SCANNED)
    }


def _base_name(node: ast.expr) -> str:
    """`Exception`, `hardening.UnsafeConfig` -> its last name."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _classes(sources: dict[Path, ast.Module]) -> dict[str, tuple[str, list[str]]]:
    """Every class: its name -> (where, the names of its bases)."""
    found: dict[str, tuple[str, list[str]]] = {}
    for path, tree in sources.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found[f"{where} {node.name}"] = (node.name, [_base_name(base) for base in node.bases])
    return found


def _exceptions_off_the_root(sources: dict[Path, ast.Module]) -> list[str]:
    classes = _classes(sources)
    bases_of: dict[str, set[str]] = {}
    for name, bases in classes.values():
        bases_of.setdefault(name, set()).update(bases)

    def reaches(name: str, goal: set[str], seen: frozenset[str] = frozenset()) -> bool:
        if name in goal:
            return True
        return any(reaches(base, goal, seen | {name}) for base in bases_of.get(name, ()) if base not in seen)

    exceptions = [key for key, (name, _) in classes.items() if name != ROOT_ERROR and reaches(name, BUILTIN_ERRORS)]
    return [key for key in exceptions if not reaches(classes[key][0], {ROOT_ERROR})]


def test_every_exception_class_derives_from_the_one_root():
    assert _exceptions_off_the_root(_sources()) == []


def test_the_scan_finds_an_exception_off_the_root():
    tree = ast.parse("class Loose(ValueError): ...\nclass Kind(OrchestrateError): ...\nclass Fine(Kind): ...")
    assert [key.split()[-1] for key in _exceptions_off_the_root({PACKAGE / "probe.py": tree})] == ["Loose"]


def _exit_codes_named(path: Path, tree: ast.Module) -> list[str]:
    """Where `path` names an exit code: `EXIT_X = 3`, `exit_code = 3`, `sys.exit(3)`, `typer.Exit(3)`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
            names = [target.id for target in node.targets if isinstance(target, ast.Name)]
            if any(name.startswith("EXIT_") or name == "exit_code" for name in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        elif isinstance(node, ast.Call) and _base_name(node.func) in EXIT_CALLS and node.args:
            code = node.args[0]
            if isinstance(code, ast.Constant) and isinstance(code.value, int) and code.value != 0:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_exit_codes_are_named_in_one_module():
    sources = _sources()
    elsewhere = [
        where for path, tree in sources.items() if path not in (ERRORS_MODULE, *OTHER_PROGRAMS)
        for where in _exit_codes_named(path, tree)
    ]
    assert elsewhere == []
    assert _exit_codes_named(ERRORS_MODULE, sources[ERRORS_MODULE])  # they are there


def test_the_scan_finds_an_exit_code_named_elsewhere():
    tree = ast.parse("import sys\nEXIT_LATE = 5\nsys.exit(130)\nsys.exit(0)\n")
    assert len(_exit_codes_named(PACKAGE / "probe.py", tree)) == 2
