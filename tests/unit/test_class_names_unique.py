"""No class name is defined in two modules of the product's packages or the fake Messages API.

Two classes with one name are either one fact modelled twice (keep one) or two facts that need
names saying which is which (two `RequestSize` classes once meant unrelated things).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "context_agent", "fake_messages_api")

# A name allowed in more than one module, with the reason; none today.
ALLOWED: dict[str, str] = {}


def class_definitions() -> dict[str, list[str]]:
    """Each class name, with the modules that define it."""
    found: defaultdict[str, list[str]] = defaultdict(list)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    found[node.name].append(str(path.relative_to(ROOT)))
    return found


def test_no_class_name_is_defined_twice() -> None:
    twice = {name: paths for name, paths in class_definitions().items() if len(paths) > 1 and name not in ALLOWED}
    assert twice == {}, f"class names defined more than once (rename or merge): {twice}"


def test_the_scan_finds_the_packages_classes() -> None:
    found = class_definitions()
    assert "FeatureJob" in found and "ContextAgent" in found and "FakeAPI" in found
