"""Fitting tool output into what the model is shown: keep the head and the tail, elide the middle.

Both ends matter: the head shows what a command started doing, the tail shows how it ended
(the failing assertion, the exit summary). The note in the middle says how much is missing
and how to see it, so the model never mistakes a cut for the whole.
"""

from __future__ import annotations


def elide_middle(text: str, limit: int, *, hint: str = "") -> str:
    """`text` if it fits in `limit` characters, else its head and tail around a note."""
    return join_head_tail(text, "", limit, hint=hint)


def join_head_tail(head: str, tail: str, limit: int, *, dropped: int = 0, hint: str = "") -> str:
    """`head + tail` in about `limit` characters; the middle, and `dropped` units lost between them, elided.

    With `dropped > 0` the note always sits where the two parts meet, even if they fit.
    """
    text = head + tail
    if dropped == 0 and len(text) <= limit:
        return text
    half = max(limit // 2, 1)
    keep_head = min(half, len(head)) if dropped else half
    keep_tail = min(half, len(tail)) if dropped else half
    keep_tail = min(keep_tail, len(text) - keep_head)
    elided = len(text) - keep_head - keep_tail + dropped
    note = f"\n\n[... {elided} characters elided{'; ' + hint if hint else ''} ...]\n\n"
    return text[:keep_head] + note + text[len(text) - keep_tail :]
