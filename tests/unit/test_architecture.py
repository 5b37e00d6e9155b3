"""The shape of the code: the layout promises a newcomer can rely on (README, Development).

These are checks on the source itself: `context_agent` stands alone, imports never go round in
a circle, neither between modules nor between the wings of any package (the top-level modules
of `orchestrator`, such as `config`, count as wings of their own), no two modules share a file
name, and no function or module grows past what one reading can hold.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "context_agent", "shared_base", "fake_messages_api")
MAX_FUNCTION_LINES = 60
# Modules are sized by concept, not by a line count: past 600 lines is a signal to look (split it where
# it holds two ideas, or list it below with the reason it is one), not a target to cut to.
MAX_MODULE_LINES = 600
# What is still over a rule, and why: a ratchet. An entry that no longer breaks its rule fails
# `test_the_known_exceptions_still_need_to_be_there`, so the list can only shrink.
KNOWN_LONG_MODULES: dict[str, str] = {}
KNOWN_CYCLES: dict[tuple[str, str], str] = {}
# File names that more than one module carries (a newcomer opening `errors.py` must know which).
# `__init__` and `__main__` are the language's, not ours.
KNOWN_SHARED_NAMES: dict[str, str] = {}
# (A, B): wing A imports wing B although B imports A; the arrow A -> B is the one to remove.
KNOWN_WING_CYCLES: dict[tuple[str, str], str] = {}


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
                return [*stack[stack.index(target):], target]
            if target not in colour and (found := visit(target)):
                return found
        stack.pop()
        colour[node] = 2
        return None

    for node in sorted(graph):
        if node not in colour and (found := visit(node)):
            return found
    return None


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False


def _layers(text: str) -> list[list[str]]:
    """The layer chain of docs/architecture.md's `layers` block, top first: one list of wings a line."""
    block = text.split("```layers\n", 1)[1].split("```", 1)[0]
    return [[wing.strip() for wing in line.split(",")] for line in block.splitlines() if line.strip()]


LAYERS = _layers((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))


def _wing_of(module: str) -> str:
    """`orchestrator.run.runner` -> `run`; `context_agent.budget` -> `context_agent`; `orchestrator` -> `__init__`."""
    parts = module.split(".")
    if parts[0] != "orchestrator":
        return parts[0]
    return parts[1] if len(parts) > 1 else "__init__"


def _upward_imports(graph: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    level = {wing: depth for depth, line in enumerate(layers) for wing in line}
    return sorted(
        f"{name} -> {target}" for name, targets in graph.items() for target in targets
        if level[_wing_of(target)] < level[_wing_of(name)]
    )


def test_every_wing_has_its_place_in_the_layer_chain():
    placed = [wing for line in LAYERS for wing in line]
    assert sorted(placed) == sorted({_wing_of(name) for name in MODULES})


def test_no_module_imports_a_wing_above_its_own():
    assert _upward_imports(GRAPH, LAYERS) == []


def test_the_layer_checker_finds_an_upward_import():
    graph = {"orchestrator.store.state": {"orchestrator.run.runner"}, "orchestrator.run.runner": set()}
    assert _upward_imports(graph, [["run"], ["store"]]) == ["orchestrator.store.state -> orchestrator.run.runner"]


def test_the_context_agent_imports_nothing_from_the_orchestrator():
    offenders = sorted(
        f"{name} -> {target}" for name, targets in GRAPH.items() if name.startswith("context_agent")
        for target in targets if target.startswith("orchestrator")
    )
    assert offenders == []


# The fake Messages API is a package apart: the API's stand-in, so it shares nothing with the
# product it checks (its token count above all), and only the demo (and the tests) import it.
FAKE_API = "fake_messages_api"
FAKE_API_USERS = ("orchestrator.demo",)


def test_the_fake_api_imports_nothing_of_the_product():
    offenders = sorted(
        f"{name} -> {target}" for name, targets in GRAPH.items() if name.startswith(FAKE_API)
        for target in targets if not target.startswith(FAKE_API)
    )
    assert offenders == []


def test_only_the_demo_imports_the_fake_api():
    offenders = sorted(
        f"{name} -> {target}" for name, targets in GRAPH.items()
        if not name.startswith((FAKE_API, *FAKE_API_USERS))
        for target in targets if target.startswith(FAKE_API)
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
    for a, b in KNOWN_WING_CYCLES:
        package = a.rpartition(".")[0]
        wings = _wings(package)
        assert b in wings.get(a, set()) and _reaches(wings, b, a), f"{a} <-> {b} is gone: remove it from KNOWN_WING_CYCLES"
    for name in KNOWN_LONG_MODULES:
        lines = MODULES[name].read_text(encoding="utf-8").count("\n")
        assert lines > MAX_MODULE_LINES, f"{name} is short now: remove it from KNOWN_LONG_MODULES"


def _wings(package: str) -> dict[str, set[str]]:
    """The import graph between the children of `package` (its subpackages and its own modules,
    each one node): an arrow from A to B when any module in A imports any module in B."""
    depth = package.count(".") + 1
    wings: dict[str, set[str]] = {}
    for name, targets in GRAPH.items():
        if not name.startswith(package + ".") or name.count(".") < depth:
            continue
        source = ".".join(name.split(".")[: depth + 1])
        arrows = wings.setdefault(source, set())
        for target in targets:
            if target.startswith(package + ".") and (wing := ".".join(target.split(".")[: depth + 1])) != source:
                arrows.add(wing)
    return wings


PACKAGES_WITH_WINGS = sorted(name for name, path in MODULES.items() if path.name == "__init__.py")


@pytest.mark.parametrize("package", PACKAGES_WITH_WINGS)
def test_no_import_cycle_between_the_wings_of_a_package(package):
    """Inside every package, its subpackages and top-level modules import one way: no two import
    each other, through any path (`orchestrator.config` and `orchestrator.llm` count as two wings)."""
    wings = _wings(package)
    for a, b in KNOWN_WING_CYCLES:
        wings.get(a, set()).discard(b)
    assert _cycle(wings) is None


def _shared_names() -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        if path.name not in ("__init__.py", "__main__.py"):
            by_name.setdefault(path.name, []).append(name)
    return {file: sorted(names) for file, names in by_name.items() if len(names) > 1}


def test_no_two_modules_share_a_file_name():
    shared = {file: names for file, names in _shared_names().items() if file not in KNOWN_SHARED_NAMES}
    assert shared == {}, "give each module a name that says what it is"


def test_the_known_shared_names_are_still_shared():
    gone = sorted(set(KNOWN_SHARED_NAMES) - set(_shared_names()))
    assert gone == [], f"unique now: remove {gone} from KNOWN_SHARED_NAMES"


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
FREE_FORM_HOMES = {"orchestrator.json_types", "context_agent.json_shapes", "shared_base.json_values", "orchestrator.spec.decode"}
FREE_FORM_PACKAGES = ("fake_messages_api",)


@pytest.mark.parametrize("name", sorted(n for n in set(MODULES) - FREE_FORM_HOMES if not n.startswith(FREE_FORM_PACKAGES)))
def test_free_form_json_goes_by_a_name_that_says_why(name):
    text = MODULES[name].read_text(encoding="utf-8")
    assert "dict[str, Any]" not in text, (
        f"{name} uses dict[str, Any]: give our own data a model, or use a name from orchestrator.json_types"
    )
