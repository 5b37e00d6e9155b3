"""An index over stored texts, so that a new item is compared only with those that could be
the same: an exact-wording lookup by normalized key, and an inverted index from content words
to items for near-duplicates (an item that shares no claim word cannot restate another).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from context_agent.words import claim_words, normalized_key, restates


class TextIndex:
    """Texts by position, as in the list they index."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._by_key: dict[str, int] = {}
        self._by_word: defaultdict[str, list[int]] = defaultdict(list)
        self._sizes: list[int] = []
        for text in texts:
            self.add(text)

    def __len__(self) -> int:
        return len(self._sizes)

    def add(self, text: str) -> None:
        """Index `text` at the next position."""
        position = len(self._sizes)
        words = claim_words(text)
        self._by_key.setdefault(normalized_key(text), position)
        for word in words:
            self._by_word[word].append(position)
        self._sizes.append(len(words))

    def same_wording(self, text: str) -> int | None:
        """The position of the first text equal to `text` but for case, spacing and punctuation."""
        return self._by_key.get(normalized_key(text))

    def near_duplicate(self, text: str) -> int | None:
        """The first position whose text very likely states `text` (`words.find_near_duplicate`'s
        test), looking only at texts that share a claim word with it."""
        same = self.same_wording(text)
        if same is not None:
            return same
        words = claim_words(text)
        shared: Counter[int] = Counter()
        for word in words:
            shared.update(self._by_word.get(word, ()))
        matches = [position for position, count in shared.items() if restates(count, len(words), self._sizes[position])]
        return min(matches) if matches else None

    def candidates(self, text: str) -> set[int]:
        """The positions a near-duplicate test of `text` looks at."""
        return {position for word in claim_words(text) for position in self._by_word.get(word, ())}
