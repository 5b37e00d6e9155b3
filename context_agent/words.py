"""Words of short texts: shared content words drive relevance; claim words (the same, less the
lead-ins and modal verbs, synonyms reduced, negation kept) tell a restatement of a stored rule
from a different rule, so a summarizer or an agent restating in other words does not fill the
stores.
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
@lru_cache(maxsize=2048)
def content_words(text: str) -> frozenset[str]:
    """Lower-case word stems of `text` minus stop words; `todoItems`/`todo-items` -> todo, item."""
    words: set[str] = set()
    for word in _WORD.findall(_CAMEL_BOUNDARY.sub(" ", text).lower()):
        if word in _STOPWORDS or (len(word) < 3 and not word.isdigit()):
            continue
        words.add(_stem(word))
    return frozenset(words)


@lru_cache(maxsize=2048)
def normalized_key(text: str) -> str:
    """A key equal for texts that differ only in case, spacing and punctuation."""
    return " ".join(_WORD.findall(text.lower()))


def find_near_duplicate(text: str, others: Iterable[str]) -> int | None:
    """The index of the first of `others` that very likely states `text` in other words, or None.

    Same normalized text, or the same claim (`claim_words`). Compares `text` with every one
    of `others`: for a large store use `text_index.TextIndex`, which applies the same test to
    the items that share a claim word with `text` only.
    """
    key, words = normalized_key(text), claim_words(text)
    for index, other in enumerate(others):
        if normalized_key(other) == key:
            return index
        other_words = claim_words(other)
        if restates(len(words & other_words), len(words), len(other_words)):
            return index
    return None


def restates(shared: int, size: int, other_size: int) -> bool:
    """Whether two texts with `size` and `other_size` claim words, `shared` of them in common,
    state the same rule: exactly the same claim words. Deliberately strict: a restatement
    that adds or drops a word is kept as a duplicate, because merging two rules that differ
    in one word would lose one of them, which is worse than a duplicate (the summarizer's
    `restates` id is the way to say "the same" in other words)."""
    return 0 < shared == size == other_size


# Lead-ins that say nothing about the rule ("Note: X", "Remember that X", "Going forward, X").
_LEAD_IN = re.compile(
    r"^(?:(?:remember|note|make sure|ensure|be sure|bear in mind|keep in mind) that|as agreed(?: earlier)?|"
    r"going forward|from now on|keep in mind|make sure|be sure to|reminder|important|remember|note|nb|please)"
    r"\b[\s:,.;-]*"
)
# Wordings of one meaning, reduced to one (longest first, whole words only).
_PHRASES = (
    ("by way of", "through"), ("by means of", "through"), ("not ever", "never"), ("must not", "never"),
    ("should not", "never"), ("shall not", "never"), ("do not", "never"), ("does not", "never"),
    ("may not", "never"), ("cannot", "never"), ("can not", "never"), ("ahead of", "before"),
    ("prior to", "before"), ("has to", "must"), ("have to", "must"), ("needs to", "must"), ("need to", "must"),
    ("is required to", "must"), ("are required to", "must"), ("at all times", "always"),
)
_PHRASE = re.compile(r"\b(?:" + "|".join(re.escape(old) for old, _ in _PHRASES) + r")\b")
_PHRASE_TO = dict(_PHRASES)
_SYNONYMS = {
    "via": "through", "thru": "through", "consistently": "always", "invariably": "always", "adopt": "use",
    "adopts": "use", "employ": "use", "employs": "use", "utilize": "use", "utilizes": "use", "retain": "keep",
    "retains": "keep", "preserve": "keep", "preserves": "keep", "persist": "store", "persists": "store",
    "persisted": "stored", "each": "every", "all": "every", "no": "never", "not": "never", "don": "never",
    "doesn": "never", "isn": "never", "aren": "never", "won": "never", "shouldn": "never", "mustn": "never",
}
# Words that carry the force of a rule, not its content ("X must always go through Y" is the
# rule "X go through Y"); negations and "only"/"except" are kept: they change what it says.
_MODALS = frozenset(["must", "should", "shall", "always", "ought", "need", "needs", "required", "will", "ever"])
_CLAIM_KEEPS = frozenset(["never", "only", "except", "unless", "without"])


@lru_cache(maxsize=2048)
def claim_words(text: str) -> frozenset[str]:
    """The words of the rule `text` states, for telling a restatement from a different rule:
    content words after dropping lead-ins and modal verbs and reducing common synonyms
    (must/should/always/consistently, via/through/by way of, not/never), negation kept."""
    lowered = _CAMEL_BOUNDARY.sub(" ", text).lower().strip()
    while (lead := _LEAD_IN.match(lowered)) and lead.end():
        lowered = lowered[lead.end():]
    lowered = _PHRASE.sub(lambda match: _PHRASE_TO[match.group(0)], lowered)
    words: set[str] = set()
    for word in _WORD.findall(lowered):
        word = _SYNONYMS.get(word, word)
        if word in _CLAIM_KEEPS:
            words.add(word)
        elif word in _MODALS or word in _STOPWORDS or (len(word) < 3 and not word.isdigit()):
            continue
        else:
            words.add(_stem(word))
    return frozenset(words)


def _stem(word: str) -> str:
    # Plurals should match their singular ("tokens" ~ "token"); nothing cleverer, so that two
    # different words are never merged.
    if len(word) >= 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
