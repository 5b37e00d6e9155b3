"""Fitting tool output into what the model is shown: keep the head and the tail, elide the middle.

Both ends matter: the head shows what a command started doing, the tail shows how it ended
(the failing assertion, the exit summary). The note in the middle says how much is missing
and how to see it, so the model never mistakes a cut for the whole.

Every function here redacts secrets before it cuts, and redacts a fragment of a known secret
left at a cut (`orchestrator.safety.credentials.redaction.redact_piece`): a key cut in two would otherwise pass
redaction as two harmless-looking halves. Whatever is returned is safe to show or write.
"""

from __future__ import annotations

from orchestrator.safety.credentials.redaction import redact, redact_piece


def head_of(text: str, limit: int, *, ends_at_cut: bool = False) -> str:
    """The first `limit` characters of `text`, redacted; `ends_at_cut` when `text` itself was cut after."""
    text = redact(text)
    if len(text) <= limit:
        return redact_piece(text, ends_at_cut=True) if ends_at_cut else text
    return redact_piece(text[: max(limit, 0)], ends_at_cut=True)


def tail_of(text: str, limit: int, *, starts_at_cut: bool = False) -> str:
    """The last `limit` characters of `text`, redacted; `starts_at_cut` when `text` itself was cut before."""
    text = redact(text)
    if len(text) <= limit:
        return redact_piece(text, starts_at_cut=True) if starts_at_cut else text
    return redact_piece(text[len(text) - max(limit, 0):], starts_at_cut=True)


def elide_middle(text: str, limit: int, *, hint: str = "") -> str:
    """`text`, redacted, if it fits in `limit` characters, else its head and tail around a note."""
    return join_head_tail(text, "", limit, hint=hint)


def join_head_tail(head: str, tail: str, limit: int, *, dropped: int = 0, hint: str = "") -> str:
    """`head + tail` in about `limit` characters; the middle, and `dropped` units lost between them, elided.

    With `dropped > 0` the note always sits where the two parts meet, even if they fit, and
    each part is redacted on its own, as a piece cut where they meet.
    """
    if dropped:
        head = redact_piece(head, ends_at_cut=True)
        tail = redact_piece(tail, starts_at_cut=True)
    else:
        # One text: redacted whole, before any cut, so a key across the join is found whole.
        head, tail = redact(head + tail), ""
    text = head + tail
    if dropped == 0 and len(text) <= limit:
        return text
    half = max(limit // 2, 1)
    keep_head = min(half, len(head)) if dropped else half
    keep_tail = min(half, len(tail)) if dropped else half
    keep_tail = min(keep_tail, len(text) - keep_head)
    elided = len(text) - keep_head - keep_tail + dropped
    note = f"\n\n[... {elided} characters elided{'; ' + hint if hint else ''} ...]\n\n"
    kept_head = redact_piece(text[:keep_head], ends_at_cut=True)
    kept_tail = redact_piece(text[len(text) - keep_tail :], starts_at_cut=True) if keep_tail else ""
    return kept_head + note + kept_tail
