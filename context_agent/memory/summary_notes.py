"""The running summary's recent notes (each agent's report summary, kept until the next
summarization folds it in) and the cap on `running-summary.json` as a whole."""

from __future__ import annotations

from context_agent.budget import MAX_RECENT_NOTES, RECENT_NOTE_TOKENS, SUMMARY_STORE_CAP
from context_agent.memory.stores import RecentNote, RunningSummary
from context_agent.text import clip_item, fit_lines
from shared_base.tokens import estimate_json_tokens, estimate_tokens


def add_recent_note(store: RunningSummary, feature_id: str, summary: str, *, now: int, cap: bool = True) -> None:
    """Keep the agent's report summary until the next summarization folds it in. With `cap`
    False the caller enforces the store's cap once, after adding several (measuring the store
    costs as much as the whole summary)."""
    summary = clip_item(summary, RECENT_NOTE_TOKENS)
    store.recent = [note for note in store.recent if note.feature_id != feature_id]
    if summary:
        store.recent.append(RecentNote(feature_id=feature_id, summary=summary, recorded_at=now))
    del store.recent[: max(0, len(store.recent) - MAX_RECENT_NOTES)]
    if cap:
        enforce_summary_cap(store)


def enforce_summary_cap(store: RunningSummary) -> None:
    """Keep running-summary.json within its cap: drop the oldest recent notes first, then cut
    the summary at a line or sentence boundary."""
    while store.recent and _summary_tokens(store) > SUMMARY_STORE_CAP:
        store.recent.pop(0)
    excess = _summary_tokens(store) - SUMMARY_STORE_CAP
    while excess > 0 and store.summary:
        # JSON escapes make the file count at least the text count, so cutting `excess` text
        # tokens removes at least `excess` file tokens; the loop is for estimator rounding.
        store.summary = fit_lines(store.summary, max(0, estimate_tokens(store.summary) - excess))
        excess = _summary_tokens(store) - SUMMARY_STORE_CAP


def _summary_tokens(store: RunningSummary) -> int:
    return estimate_json_tokens(store.model_dump(by_alias=True, mode="json"))
