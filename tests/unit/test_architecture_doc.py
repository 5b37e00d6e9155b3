"""docs/architecture.md matches the code: every package folder has its place on the page, every
module, folder and name it cites in backticks exists, and it still fits on one screen.

How the page names things: a path is under `orchestrator/` unless it starts with another
top-level package (`context_agent/`, `shared_base/`, ...) or is a file of the repository
(`docs/...`, `tests/...`). In a row of the wings table, a bare `name` or `name/` is a module or
subpackage of the row's wing (its first column). A dotted name `module.Name.attr` is found by the
module's file name, which is unique in the repository (`test_no_two_modules_share_a_file_name`),
or by the class `Name`; its attributes must be defined there (not imported, not inherited).
Backticked text with a space, or starting with `-` or `.`, is a command, a flag or a data path:
not checked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from tests.unit.test_architecture import MODULES

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
ORCHESTRATOR = ROOT / "orchestrator"
MAX_LINES = 75  # one screen
MAX_WIDTH = 100

_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_TICKED = re.compile(r"`([^`\n]+)`")
_NOT_CODE = re.compile(r"[\s<>*=\"'(),:]")


def _package_folders() -> set[Path]:
    return {path.parent for path in MODULES.values() if path.name == "__init__.py"}


@cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(_text(path))


def _defined(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The names a module or class body defines itself: functions, classes, assigned names."""
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            names.update({target.id: node for target in node.targets if isinstance(target, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def _has(body: list[ast.stmt], attrs: list[str]) -> bool:
    """`attrs` (`["Runner", "run"]`) defined one inside the other, from `body` down."""
    for attr in attrs:
        node = _defined(body).get(attr)
        if node is None:
            return False
        body = node.body if isinstance(node, ast.ClassDef) else []
    return True


def _module_file(folder: Path, name: str) -> Path | None:
    for candidate in (folder / f"{name}.py", folder / name / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _classes_named(name: str) -> Iterator[ast.ClassDef]:
    pattern = re.compile(rf"^class {re.escape(name)}\b", re.MULTILINE)
    for path in MODULES.values():
        if not pattern.search(_text(path)):
            continue  # parse only the files that may define it
        for node in _tree(path).body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                yield node


def _resolve(token: str, bases: list[Path], named: set[Path]) -> bool:
    """Whether `token` names something that exists; the package folders it names go into `named`."""
    folder_part, _, last = token.rpartition("/")
    if not last:  # `name/`: a folder
        found = [base / folder_part for base in bases if (base / folder_part).is_dir()]
        named.update(found[:1])
        return bool(found)
    if any((base / token).is_file() for base in bases):  # docs/verification.md, tests/unit/x.py
        return True
    module, *attrs = last.split(".")
    for base in bases:
        path = _module_file(base / folder_part, module)
        if path is not None:
            if path.name == "__init__.py":
                named.add(path.parent)
            return _has(_tree(path).body, attrs)
    if folder_part or not attrs:
        return False
    # `module.Name` anywhere (module file names are unique), or `Class.attr`.
    files = [path for name, path in MODULES.items() if name.rpartition(".")[2] == module]
    if any(_has(_tree(path).body, attrs) for path in files):
        return True
    return any(_has(node.body, attrs[:1]) and _has(node.body, attrs) for node in _classes_named(module))


def _citations(text: str) -> Iterator[tuple[str, list[Path], bool]]:
    """Each checked token of the page: (token, where it is looked up, whether a bare name counts)."""
    everywhere = [ORCHESTRATOR, ROOT]
    for line in _FENCE.sub("", text).splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            wing, _, rest = line.strip("|").partition("|")
            wings = [base / token for token in _TICKED.findall(wing) for base in everywhere
                     if (base / token).is_dir()]
            for token in _TICKED.findall(wing):
                yield token, everywhere, True
            for token in _TICKED.findall(rest):
                yield token, [*wings, *everywhere], True
        else:
            for token in _TICKED.findall(line):
                yield token, everywhere, False


def check_page(text: str) -> tuple[list[str], list[str]]:
    """(the cited names that do not exist, the package folders the page does not name)."""
    named: set[Path] = set()
    missing = []
    for token, bases, bare_counts in _citations(text):
        if _NOT_CODE.search(token) or token.startswith(("-", ".")):
            continue
        if "/" not in token and "." not in token and not bare_counts:
            continue  # a bare name in prose: a class, a value
        if not _resolve(token, bases, named):
            missing.append(token)
    unnamed = sorted(str(folder.relative_to(ROOT)) for folder in _package_folders() - named)
    return missing, unnamed


PAGE_TEXT = PAGE.read_text(encoding="utf-8")


@cache
def _page() -> tuple[list[str], list[str]]:
    return check_page(PAGE_TEXT)


def test_every_package_folder_is_on_the_page() -> None:
    assert _page()[1] == [], "give each package a row, or its `name/` in its wing's row"


def test_every_cited_module_folder_and_name_exists() -> None:
    assert _page()[0] == [], "docs/architecture.md cites what is not in the code"


def test_the_page_fits_on_one_screen() -> None:
    lines = PAGE_TEXT.splitlines()
    assert len(lines) <= MAX_LINES, f"{len(lines)} lines: move the detail to DEVELOPING.md"
    wide = [number for number, line in enumerate(lines, 1) if len(line) > MAX_WIDTH]
    assert wide == [], f"lines over {MAX_WIDTH} characters: {wide}"


def test_the_checker_finds_a_missing_row_and_a_stale_name() -> None:
    without_checks = "\n".join(line for line in PAGE_TEXT.splitlines() if not line.startswith("| `run/checks/`"))
    assert "orchestrator/run/checks/guard" in check_page(without_checks)[1]
    stale = "`run/attempt/feature_job.NoSuchJob` `feature_job.FeatureJob.no_such` `run/no_such/` `no_such.Name`"
    assert check_page(stale)[0] == stale.replace("`", "").split()
