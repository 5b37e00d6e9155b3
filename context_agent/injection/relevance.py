"""How relevant a stored item is to the feature about to be built.

Score, highest first, then the most recent item among equals:
  +8  the item comes from this very feature (its own earlier failures, on a retry)
  +4  from a feature it depends on directly, +2 from one it depends on indirectly
  +2  from a feature of the same category
  +1  per content word shared with the feature's id, name and description (at most +3)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from context_agent.interfaces import FeatureLike
from context_agent.words import content_words

_NO_CATEGORY = ("", "uncategorized")
_MAX_WORD_SCORE = 3

Item = TypeVar("Item")


@dataclass(frozen=True)
class ItemFacts:
    """What relevance looks at in a stored item."""

    feature_id: str
    category: str
    text: str
    seq: int


@dataclass(frozen=True)
class FeatureFocus:
    """The feature at hand, as relevance sees it."""

    feature_id: str
    category: str
    words: frozenset[str]
    direct_deps: frozenset[str]
    all_deps: frozenset[str]


def focus_on(feature_id: str, features: Mapping[str, FeatureLike]) -> FeatureFocus:
    """The focus for `feature_id`; an unknown feature is judged by its id's words alone."""
    feature = features.get(feature_id)
    if feature is None:
        return FeatureFocus(feature_id, "", content_words(feature_id), frozenset(), frozenset())
    text = " ".join([feature_id, _attr(feature, "name"), _attr(feature, "description")])
    direct = frozenset(_deps(feature))
    return FeatureFocus(
        feature_id=feature_id,
        category=_attr(feature, "category"),
        words=content_words(text),
        direct_deps=direct,
        all_deps=_transitive_deps(direct, features),
    )


def relevance(focus: FeatureFocus, item: ItemFacts, features: Mapping[str, FeatureLike]) -> int:
    """The item's score for the feature in focus (see the module docstring)."""
    score = 0
    if item.feature_id == focus.feature_id:
        score += 8
    elif item.feature_id in focus.direct_deps:
        score += 4
    elif item.feature_id in focus.all_deps:
        score += 2
    source = features.get(item.feature_id)
    category = _attr(source, "category") if source is not None else item.category
    if category not in _NO_CATEGORY and category == focus.category:
        score += 2
    shared = content_words(f"{item.text} {item.feature_id}") & focus.words
    return score + min(len(shared), _MAX_WORD_SCORE)


def rank(
    items: Sequence[Item], focus: FeatureFocus, facts: Callable[[Item], ItemFacts],
    features: Mapping[str, FeatureLike],
) -> list[Item]:
    """`items` ordered by relevance to the focus, then by recency (newest first)."""
    scored = []
    for item in items:
        item_facts = facts(item)
        scored.append((relevance(focus, item_facts, features), item_facts.seq, item))
    scored.sort(key=lambda entry: (entry[0], entry[1]), reverse=True)
    return [item for _, _, item in scored]


def _attr(feature: object, name: str) -> str:
    value = getattr(feature, name, "")
    return value if isinstance(value, str) else ""


def _deps(feature: object) -> list[str]:
    value = getattr(feature, "depends_on", None) or []
    return [dep for dep in value if isinstance(dep, str)]


def _transitive_deps(direct: frozenset[str], features: Mapping[str, FeatureLike]) -> frozenset[str]:
    seen: set[str] = set()
    stack = list(direct)
    while stack:  # `seen` also guards against cycles in a spec not yet validated
        dep = stack.pop()
        if dep in seen:
            continue
        seen.add(dep)
        feature = features.get(dep)
        if feature is not None:
            stack.extend(_deps(feature))
    return frozenset(seen)
