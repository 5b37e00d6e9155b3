"""Content words of short texts: shared words drive relevance, and near-duplicate detection
keeps a summarizer that restates stored items in other words from filling the stores.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Words that say nothing about a feature; short and common enough to make any two texts
# look related otherwise.
_STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "do", "does", "each", "every", "for", "from", "has", "have", "if", "in", "into", "is", "it", "its", "may", "must", "not", "of", "on", "one", "or", "our", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these", "this", "those", "to", "under", "use", "used", "uses", "using", "via", "was", "we", "were", "when", "where", "which", "while", "will", "with", "within", "without", "you", "your", "all", "any", "also", "only", "other", "same", "such", "new"]
)


# Cached: the same stored items are compared and ranked again on every call.
@lru_cache(maxsize=8192)
def content_words(text: str) -> frozenset[str]:
    """Lower-case word stems of `text` minus stop words; `todoItems`/`todo-items` -> todo, item."""
    words: set[str] = set()
    for word in _WORD.findall(_CAMEL_BOUNDARY.sub(" ", text).lower()):
        if word in _STOPWORDS or (len(word) < 3 and not word.isdigit()):
            continue
        words.add(_stem(word))
    return frozenset(words)


@lru_cache(maxsize=8192)
def normalized_key(text: str) -> str:
    """A key equal for texts that differ only in case, spacing and punctuation."""
    return " ".join(_WORD.findall(text.lower()))


def find_near_duplicate(text: str, others: Iterable[str]) -> int | None:
    """The index of the first of `others` that very likely states `text` in other words, or None.

    Same normalized text, or `restates` on their content words. Compares `text` with every
    one of `others`: for a large store use `text_index.TextIndex`, which applies the same test
    to the items that share a word with `text` only.
    """
    key, words = normalized_key(text), content_words(text)
    for index, other in enumerate(others):
        if normalized_key(other) == key:
            return index
        other_words = content_words(other)
        if restates(len(words & other_words), len(words), len(other_words)):
            return index
    return None


def restates(shared: int, size: int, other_size: int) -> bool:
    """Whether two texts with `size` and `other_size` content words, `shared` of them in common,
    very likely say the same: Jaccard >= 0.6, or one text's words (at least three) almost all
    (>= 80%) inside the other's, as in "Note: X" restating "X"."""
    if not shared:
        return False
    if shared / (size + other_size - shared) >= 0.6:
        return True
    smaller = min(size, other_size)
    return smaller >= 3 and shared / smaller >= 0.8


def _stem(word: str) -> str:
    # Plurals should match their singular ("tokens" ~ "token"); nothing cleverer, so that two
    # different words are never merged.
    if len(word) >= 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
