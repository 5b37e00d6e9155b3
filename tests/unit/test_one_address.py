"""One name, one address: a class, function or constant is imported from the module that defines
it, never through another module that only imports it (a re-export facade), and no two modules
of the house share a file name. A newcomer who greps `def name` or `class Name` finds the one
place to read, and a rename moves one import, not a chain of them.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "context_agent")
# Where imports are read: the packages, and the tests and benchmarks that use them.
READERS = (*PACKAGES, "tests", "bench")
# Still re-exporting, and why: a ratchet (an entry nobody imports through any more fails).
KNOWN_FACADES: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def _top_level_names(name: str) -> tuple[set[str], set[str]]:
    """(names the module defines, names it only imports) at its top level."""
    path = MODULES[name]
    defined: set[str] = set()
    imported: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            imported |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
    return defined, imported - defined


def _imports_through_facades() -> list[tuple[str, str, str]]:
    """(file:line, module, name) for every `from module import name` that `module` only re-imports."""
    names = {module: _top_level_names(module) for module in MODULES}
    found = []
    for reader in READERS:
        for path in sorted((ROOT / reader).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in MODULES):
                    continue
                for alias in node.names:
                    if f"{node.module}.{alias.name}" not in MODULES and alias.name in names[node.module][1]:
                        where = f"{path.relative_to(ROOT)}:{node.lineno}"
                        found.append((where, node.module, alias.name))
    return found


def test_every_name_is_imported_from_the_module_that_defines_it() -> None:
    through = _imports_through_facades()
    unknown = [f"{where}: from {module} import {name}" for where, module, name in through
               if module not in KNOWN_FACADES and _module_name(ROOT / where.split(":")[0]) != module]
    assert not unknown, "import these from the module that defines them:\n" + "\n".join(unknown)
    used = {module for _, module, _ in through}
    assert not set(KNOWN_FACADES) - used, f"no longer a facade, remove from KNOWN_FACADES: {set(KNOWN_FACADES) - used}"


def test_no_module_of_the_house_re_exports_with_all() -> None:
    """`__all__` listing names a module imports is a facade; a package `__init__` only documents."""
    for name, path in MODULES.items():
        if name in KNOWN_FACADES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        has_all = any(isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets)
                      for node in tree.body)
        assert not has_all, f"{name} declares __all__: import each name from its defining module instead"


def test_no_two_modules_share_a_file_name() -> None:
    counts = Counter(path.name for path in MODULES.values() if path.name not in ("__init__.py", "__main__.py"))
    shared = sorted(name for name, count in counts.items() if count > 1)
    assert not shared, f"more than one module is called {shared}: give each a name that says what it is"
