"""Long descriptions in chunks; the features planned from them merged into one list.

A description longer than one answer can plan is split at its headings (then at blank lines,
then anywhere) into chunks of at most `max_chars`. Each chunk is planned knowing the features
already planned, so it can depend on them; the merge still de-duplicates, because a model
told "do not repeat these" sometimes does: a feature whose id or name (case and punctuation
aside) was already planned is dropped and references to it point at the one kept. Finally
the features are put in dependency order, keeping the planner's order where it allows.
"""

from __future__ import annotations

import re
from typing import Any

from orchestrator.json_types import JsonObject

RawFeature = JsonObject
_HEADING = re.compile(r"(?m)^(?=#{1,3} )")


def split_description(text: str, max_chars: int) -> list[str]:
    """`text` as chunks of at most `max_chars`, cut at headings, else blank lines, else anywhere."""
    if len(text) <= max_chars:
        return [text]
    pieces = [p for p in _HEADING.split(text) if p.strip()]
    chunks: list[str] = []
    current = ""
    for piece in _smaller(pieces, max_chars):
        if current and len(current) + len(piece) > max_chars:
            chunks.append(current)
            current = ""
        current += piece
    if current.strip():
        chunks.append(current)
    return chunks


def _smaller(pieces: list[str], max_chars: int) -> list[str]:
    """Pieces no longer than `max_chars`: a long section is cut at paragraphs, then hard."""
    out: list[str] = []
    for piece in pieces:
        if len(piece) <= max_chars:
            out.append(piece)
            continue
        for paragraph in re.split(r"(?<=\n\n)", piece):
            out += [paragraph[i:i + max_chars] for i in range(0, len(paragraph), max_chars)]
    return out


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def merge_features(kept: list[RawFeature], new: list[Any]) -> tuple[list[RawFeature], list[str]]:
    """`kept` plus the features of `new` that are not duplicates; and what was dropped, said.

    Entries of `new` that are not objects are kept as they are, for validation to locate.
    """
    by_id = {str(f.get("id")): f for f in kept}
    by_name = {_key(str(f.get("name", ""))): str(f.get("id")) for f in kept}
    renamed: dict[str, str] = {}
    merged = list(kept)
    dropped: list[str] = []
    for feature in new:
        if not isinstance(feature, dict):
            merged.append(feature)
            continue
        fid, name = str(feature.get("id")), _key(str(feature.get("name", "")))
        twin = fid if fid in by_id else by_name.get(name) if name else None
        if twin is not None:
            renamed[fid] = twin
            dropped.append(f"{fid} (a duplicate of {twin})")
            continue
        by_id[fid] = feature
        if name:
            by_name[name] = fid
        merged.append(feature)
    for feature in merged[len(kept):]:
        if isinstance(feature, dict) and isinstance(feature.get("depends_on"), list):
            deps = [renamed.get(d, d) if isinstance(d, str) else d for d in feature["depends_on"]]
            feature["depends_on"] = list(dict.fromkeys(d for d in deps if d != feature.get("id")))
    return merged, dropped


def dependency_order(features: list[RawFeature]) -> list[RawFeature]:
    """The features with each after its dependencies, otherwise in the given order (stable).

    Call it on a list already checked for unknown ids and cycles.
    """
    done: set[str] = set()
    remaining = list(features)
    ordered: list[RawFeature] = []
    while remaining:
        for index, feature in enumerate(remaining):
            if all(dep in done for dep in feature.get("depends_on", [])):
                ordered.append(remaining.pop(index))
                done.add(str(feature["id"]))
                break
        else:  # a cycle (should have been refused): keep the rest as it is
            return ordered + remaining
    return ordered
