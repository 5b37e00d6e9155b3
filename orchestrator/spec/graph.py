"""Checks across features: unique ids, known dependencies, no dependency cycles.

They work on the raw JSON objects, so a feature with some other problem (a wrong type
in one field) still takes part and every problem in the file is reported at once.
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Sequence
from typing import Any

from orchestrator.spec.fields import is_safe_id
from orchestrator.spec.spec_errors import quote

# Suggestions cost a fuzzy match against every id; a crafted spec with thousands of
# unknown dependencies must not turn that into minutes.
_MAX_SUGGESTIONS = 20

Problem = tuple[int, str]
"""(feature index, message): the index keeps problems in the order of the file."""


def _id_of(raw: Any) -> str | None:
    value = raw.get("id") if isinstance(raw, dict) else None
    # Unsafe ids are reported where the id itself is checked; here they would only echo.
    return value if isinstance(value, str) and is_safe_id(value) else None


def _deps_of(raw: Any) -> list[tuple[int, str]]:
    deps = raw.get("depends_on") if isinstance(raw, dict) else None
    if not isinstance(deps, list):
        return []
    return [(k, d) for k, d in enumerate(deps) if isinstance(d, str) and is_safe_id(d)]


def check_features(raws: Sequence[Any], prefix: str = "features") -> list[Problem]:
    """Every cross-feature problem among `raws`, the features as decoded JSON values."""
    ids = [_id_of(raw) for raw in raws]
    problems: list[Problem] = []
    first: dict[str, int] = {}  # id -> index of its first feature
    folded: dict[str, int] = {}  # lower-cased id -> index, for case-insensitive file systems
    for i, fid in enumerate(ids):
        if fid is None:
            continue
        if fid in first:
            also = f"{prefix}[{first[fid]}].id"
            problems.append((i, f"{prefix}[{i}].id: duplicate id {quote(fid)}"
                                f" (also {also}; ids must be unique, rename one)"))
            continue
        j = folded.get(fid.lower())
        if j is not None:
            problems.append((i, f"{prefix}[{i}].id: id {quote(fid)} differs from {prefix}[{j}].id"
                                f" {quote(ids[j] or '')} only in case (their log files would clash"
                                " on case-insensitive file systems; rename one)"))
        first[fid] = i
        folded.setdefault(fid.lower(), i)

    edges: list[list[int]] = [[] for _ in raws]
    unknown = 0
    for i, raw in enumerate(raws):
        fid = ids[i]
        for k, dep in _deps_of(raw):
            where = f"{prefix}[{i}].depends_on[{k}]"
            if dep == fid:
                problems.append((i, f"{where}: feature {quote(dep)} depends on itself (remove it)"))
            elif dep not in first:
                unknown += 1
                hint = _suggest(dep, first) if unknown <= _MAX_SUGGESTIONS else None
                hint = hint or "no feature has this id"
                problems.append((i, f"{where}: unknown id {quote(dep)} ({hint})"))
            elif fid is not None and first[fid] == i:
                # Only the first feature with a duplicated id joins the graph: the
                # duplicate is already an error, and one node per id keeps cycles exact.
                edges[i].append(first[dep])

    for component in _cycles(edges):
        start = min(component)
        path = [ids[n] or "?" for n in _shortest_cycle(start, set(component), edges)]
        if len(path) > 12:
            path = [*path[:5], "...", *path[-5:]]
            size = f"; {len(component)} features take part"
        else:
            size = ""
        cycle = " -> ".join(path)
        problems.append((start, f"{prefix}[{start}].depends_on: dependency cycle {cycle}"
                                " (a feature runs only after its dependencies pass;"
                                f" remove one of these dependencies{size})"))
    return problems


def _suggest(unknown: str, known: dict[str, int]) -> str | None:
    close = difflib.get_close_matches(unknown, list(known), n=1)
    return f"did you mean {quote(close[0])}?" if close else None


def _cycles(edges: list[list[int]]) -> list[list[int]]:
    """Strongly connected components with more than one node (Tarjan, iterative so a
    100,000-feature chain cannot overflow the stack)."""
    index = [-1] * len(edges)
    low = [0] * len(edges)
    on_stack = [False] * len(edges)
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    for root in range(len(edges)):
        if index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, 0)]
        while work:
            node, next_edge = work[-1]
            if next_edge < len(edges[node]):
                work[-1] = (node, next_edge + 1)
                target = edges[node][next_edge]
                if index[target] == -1:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack[target] = True
                    work.append((target, 0))
                elif on_stack[target]:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return sorted(found, key=min)


def _shortest_cycle(start: int, members: set[int], edges: list[list[int]]) -> list[int]:
    """The shortest path start -> ... -> start inside one component (breadth-first)."""
    parent: dict[int, int] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in edges[node]:
            if target not in members:
                continue
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if target not in parent:
                parent[target] = node
                queue.append(target)
    return [start, start]  # unreachable for a real component
