"""The house picture: packages as rooms, imports as arrows, drawn from the source (no imports run).

    python3 scripts/house.py                 # every package: modules, arrows in and out, floors
    python3 scripts/house.py orchestrator.run  # one package: its own rooms and the arrows between them

A *room* is a module or a subpackage directly inside a package; an *arrow* is "room A imports
room B" inside that package; a *floor* is a step in the longest chain of arrows. The whole
house has no cycle and no arrow that runs back up: `tests/unit/test_architecture.py` checks it.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The import graph is the architecture test's own, so the picture and the checks read the same arrows.
from tests.unit.test_architecture import GRAPH, MODULES, PACKAGES  # noqa: E402


def room_of(module: str, package: str) -> str | None:
    """The room of `package` that holds `module`, or None when it is outside the package."""
    if not module.startswith(package + "."):
        return None
    return package + "." + module[len(package) + 1:].split(".")[0]


def arrows(package: str) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for module in MODULES:
        source = room_of(module, package)
        if source is None:
            continue
        for target in GRAPH[module]:
            target_room = room_of(target, package)
            if target_room and target_room != source:
                found.add((source, target_room))
    return found


def floors(edges: set[tuple[str, str]]) -> int | None:
    """The longest chain of arrows, in rooms; None when the arrows go round in a circle."""
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    visiting: set[str] = set()

    @cache
    def height(node: str) -> int:
        if node in visiting:
            raise RecursionError(node)
        visiting.add(node)
        try:
            return 1 + max((height(t) for t in graph.get(node, ())), default=0)
        finally:
            visiting.discard(node)

    try:
        return max((height(node) for node in graph), default=1)
    except RecursionError:
        return None


def describe(package: str) -> str:
    rooms = sorted({room for m in MODULES if (room := room_of(m, package))})
    edges = arrows(package)
    levels = floors(edges)
    shape = f"{levels} floors" if levels else "A CYCLE"
    lines = [f"{package}: {len(rooms)} rooms, {shape}, {len(edges)} arrows"]
    for room in rooms:
        out = sorted(t.rpartition(".")[2] for s, t in edges if s == room)
        kind = "/" if (ROOT / room.replace(".", "/")).is_dir() else ""
        lines.append(f"  {room.rpartition('.')[2]}{kind} -> {', '.join(out) or '-'}")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if argv:
        print("\n\n".join(describe(package) for package in argv))
        return
    for top in PACKAGES:
        print(describe(top))
    print()
    subpackages = sorted(m for m, p in MODULES.items() if p.name == "__init__.py" and m.count(".") >= 1)
    for package in subpackages:
        print(describe(package).splitlines()[0])


if __name__ == "__main__":
    main(sys.argv[1:])
