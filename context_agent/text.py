"""Cutting text to a token budget at natural boundaries: lines, then sentences, never mid-line
in the injection. Items are bounded when recorded (see `clip_item`) so they can be shown whole.
"""

from __future__ import annotations

import re
from functools import lru_cache

from shared_base.tokens import estimate_tokens

# A sentence ends at . ! or ? followed by whitespace; good enough for English notes and logs.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WHITESPACE = re.compile(r"\s+")
ELLIPSIS = "…"


@lru_cache(maxsize=2048)  # stored items are rendered again for every feature
def one_line(text: str) -> str:
    """`text` with all whitespace runs (newlines included) collapsed to single spaces."""
    return _WHITESPACE.sub(" ", text).strip()


def split_sentences(line: str) -> list[str]:
    """The sentences of one line, each keeping its final punctuation."""
    return [part for part in _SENTENCE_END.split(line.strip()) if part]


def clip_item(text: str, max_tokens: int) -> str:
    """One line of at most `max_tokens`: whole sentences when the first one fits, else whole
    words followed by an ellipsis. Used when an item is stored, not when it is injected."""
    line = one_line(text)
    if estimate_tokens(line) <= max_tokens:
        return line
    kept: list[str] = []
    for sentence in split_sentences(line):
        if estimate_tokens(" ".join([*kept, sentence])) > max_tokens:
            break
        kept.append(sentence)
    if kept:
        return " ".join(kept)
    words: list[str] = []
    for word in line.split(" "):
        if estimate_tokens(" ".join([*words, word]) + ELLIPSIS) > max_tokens:
            break
        words.append(word)
    return (" ".join(words) + ELLIPSIS) if words else ""


def fit_lines(text: str, budget: int) -> str:
    """The longest head of `text` within `budget` tokens that ends at a line boundary, or
    inside the first line that does not fit, at a sentence boundary. Never cuts a sentence."""
    if estimate_tokens(text) <= budget:
        return text
    lines = text.splitlines()
    # The estimate of the first k lines grows with k (pieces never join across a line break),
    # so the longest head that fits is found by bisection: measuring line by line re-measured
    # the whole head for every line, which made cutting a summary quadratic in its lines.
    low, high = 0, len(lines)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens("\n".join(lines[:middle])) <= budget:
            low = middle
        else:
            high = middle - 1
    kept = lines[:low]
    if low < len(lines):
        sentences: list[str] = []
        for sentence in split_sentences(lines[low]):
            if estimate_tokens("\n".join([*kept, " ".join([*sentences, sentence])])) > budget:
                break
            sentences.append(sentence)
        if sentences:
            kept.append(" ".join(sentences))
    return "\n".join(kept).rstrip()


def fit_lines_from_end(lines: list[str], budget: int) -> list[str]:
    """The longest tail of `lines` (whole lines) within `budget` tokens when joined by newlines."""
    kept: list[str] = []
    for line in reversed(lines):
        if estimate_tokens("\n".join([line, *kept])) > budget:
            break
        kept.insert(0, line)
    return kept
