"""The shape of the code: the layout promises a newcomer can rely on (README, Development).

These are checks on the source itself: `context_agent` stands alone, imports never go round in
a circle, and no function or module grows past what one reading can hold.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "context_agent")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 300
# What is still over a rule, and why: a ratchet. An entry that no longer breaks its rule fails
# `test_the_known_exceptions_still_need_to_be_there`, so the list can only shrink.
KNOWN_LONG_MODULES: dict[str, str] = {}
KNOWN_CYCLES: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every project module `name` imports, at any depth of the file (lazy imports count too)."""
    package_parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package_parts[: len(package_parts) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from package import module` needs the module; the package only for other names.
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            candidates = submodules + ([base] if len(submodules) < len(node.names) else [])
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                targets.add(candidate)
    return targets


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph`, or None: a depth-first search for a back edge."""
    colour: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if colour.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in colour and (found := visit(target)):
                return found
        stack.pop()
        colour[node] = 2
        return None

    for node in sorted(graph):
        if node not in colour and (found := visit(node)):
            return found
    return None


def _package_of(module: str) -> str:
    """The subpackage a module belongs to (`orchestrator.run`), or its top package."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and (ROOT / parts[0] / parts[1]).is_dir()):
        return ".".join(parts[:2])
    return parts[0]


def test_the_context_agent_imports_nothing_from_the_orchestrator():
    offenders = sorted(
        f"{name} -> {target}" for name, targets in GRAPH.items() if name.startswith("context_agent")
        for target in targets if target.startswith("orchestrator")
    )
    assert offenders == []


def _without_known_cycles(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    pruned = {name: set(targets) for name, targets in graph.items()}
    for a, b in KNOWN_CYCLES:
        pruned.get(a, set()).discard(b)
    return pruned


def test_no_import_cycle_between_modules():
    assert _cycle(_without_known_cycles(GRAPH)) is None


def test_the_known_exceptions_still_need_to_be_there():
    for a, b in KNOWN_CYCLES:
        assert b in GRAPH.get(a, set()) and _cycle({a: {b}, b: GRAPH.get(b, set()) & {a}}), f"{a} <-> {b} is gone"
    for name in KNOWN_LONG_MODULES:
        lines = MODULES[name].read_text(encoding="utf-8").count("\n")
        assert lines > MAX_MODULE_LINES, f"{name} is short now: remove it from KNOWN_LONG_MODULES"


def test_no_import_cycle_between_subpackages():
    packages: dict[str, set[str]] = {}
    for name, targets in GRAPH.items():
        source = _package_of(name)
        packages.setdefault(source, set()).update(
            _package_of(t) for t in targets if _package_of(t) != source
        )
    # The top-level modules of `orchestrator` (cli, config, errors) sit above or beside the
    # subpackages; a cycle through the top package itself is covered by the module check.
    packages = {k: {t for t in v if t != "orchestrator"} for k, v in packages.items() if k != "orchestrator"}
    assert _cycle(packages) is None


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


@pytest.mark.parametrize("name", sorted(MODULES))
def test_functions_and_modules_stay_short(name):
    path = MODULES[name]
    lines = path.read_text(encoding="utf-8").count("\n")
    if name not in KNOWN_LONG_MODULES:
        assert lines <= MAX_MODULE_LINES, f"{path.relative_to(ROOT)} has {lines} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
        for node in _functions(path) if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_the_checker_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


# Plain mappings are for JSON whose shape is not ours (the API's, a tool input, the agent's
# report), and each kind has a name in a `json_types` module; our own files and results are models.
# The fake Messages API (shipped for `orchestrate demo`) speaks nothing but that API's JSON.
FREE_FORM_HOMES = {"orchestrator.json_types", "context_agent.json_shapes", "orchestrator.spec.decode"}
FREE_FORM_PACKAGES = ("orchestrator.demo.fake_api",)


@pytest.mark.parametrize("name", sorted(n for n in set(MODULES) - FREE_FORM_HOMES if not n.startswith(FREE_FORM_PACKAGES)))
def test_free_form_json_goes_by_a_name_that_says_why(name):
    text = MODULES[name].read_text(encoding="utf-8")
    assert "dict[str, Any]" not in text, (
        f"{name} uses dict[str, Any]: give our own data a model, or use a name from orchestrator.json_types"
    )
