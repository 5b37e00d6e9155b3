"""Which features a run works on: `--only` and `--shard I/N`.

Shards split the spec by dependency chains (connected components of the dependency graph),
so a feature and everything it depends on land in the same job. Components are dealt out in
spec order to the least-loaded shard, which makes the split deterministic: N jobs given the
same spec cover every feature exactly once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from orchestrator.user_errors import OrchestrateError

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class SelectionError(OrchestrateError):
    """Bad --only or --shard value (exit 2)."""


def parse_shard(text: str) -> tuple[int, int]:
    """'2/4' -> (2, 4); shards are numbered from 1."""
    match = _SHARD.match(text)
    if not match:
        raise SelectionError(f"--shard {text!r}: expected I/N, e.g. --shard 2/4")
    index, total = int(match[1]), int(match[2])
    if total < 1 or not 1 <= index <= total:
        raise SelectionError(f"--shard {text!r}: I must be between 1 and N (N >= 1)")
    return index, total


def parse_only(text: str, known_ids: Sequence[str]) -> list[str]:
    """'a,b' -> ['a', 'b'], every id checked against the spec."""
    wanted = [part.strip() for part in text.split(",") if part.strip()]
    if not wanted:
        raise SelectionError("--only: give at least one feature id, e.g. --only auth,login")
    unknown = [fid for fid in wanted if fid not in set(known_ids)]
    if unknown:
        raise SelectionError(f"--only: unknown feature id(s): {', '.join(unknown)}")
    return wanted


def dependency_components(ids: Sequence[str], depends_on: dict[str, list[str]]) -> list[list[str]]:
    """Groups of features linked by dependencies, each in spec order, ordered by first member."""
    parent = {fid: fid for fid in ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for fid in ids:
        for dep in depends_on.get(fid, []):
            if dep in parent:
                parent[find(fid)] = find(dep)
    groups: dict[str, list[str]] = {}
    for fid in ids:
        groups.setdefault(find(fid), []).append(fid)
    return list(groups.values())


def shard_ids(ids: Sequence[str], depends_on: dict[str, list[str]], index: int, total: int) -> list[str]:
    """The features of shard `index` (1-based) of `total`, in spec order."""
    loads = [0] * total
    chosen: set[str] = set()
    for group in dependency_components(ids, depends_on):
        target = min(range(total), key=lambda i: (loads[i], i))
        loads[target] += len(group)
        if target == index - 1:
            chosen.update(group)
    return [fid for fid in ids if fid in chosen]


def select(
    ids: Sequence[str], depends_on: dict[str, list[str]], only: str | None, shard: str | None
) -> list[str]:
    """The selected feature ids in spec order (all of them by default)."""
    selected = list(ids)
    if shard:
        index, total = parse_shard(shard)
        selected = shard_ids(ids, depends_on, index, total)
    if only:
        wanted = set(parse_only(only, ids))
        selected = [fid for fid in selected if fid in wanted]
    return selected


def describe_empty_selection(
    ids: Sequence[str], depends_on: dict[str, list[str]], only: str | None, shard: str | None
) -> str:
    """Why `select` chose nothing, in words a user can act on."""
    if not shard:
        return "no feature selected; nothing to run"
    index, total = parse_shard(shard)
    if not shard_ids(ids, depends_on, index, total):
        chains = len(dependency_components(ids, depends_on))
        return (
            f"shard {index}/{total} is empty: the spec's {len(ids)} feature(s) form {chains} dependency chain(s), "
            "and a chain is never split across shards; nothing to run"
        )
    wanted = set(parse_only(only, ids)) if only else set()
    homes = [str(i) for i in range(1, total + 1) if wanted & set(shard_ids(ids, depends_on, i, total))]
    return (
        f"--only {only} selects no feature of shard {index}/{total} (they are in shard {', '.join(homes)}); "
        "nothing to run"
    )
