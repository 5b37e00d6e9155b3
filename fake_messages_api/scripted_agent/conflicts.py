"""The fake's answer to orchestrate's focused merge-conflict step (`resolve_merge_conflict`).

The step forces one tool call and lists the conflict as JSON in its prompt (``{"hunks": [{file,
index, branch, feature}]}``). By default the fake keeps both sides, the branch's text first and
the feature's after it: what features that each append a line to one file want. A test scripts
another answer with ``ScriptedToolAnswers({"resolve_merge_conflict": [...]})``.
"""

from __future__ import annotations

import json
from typing import Any

CONFLICT_TOOL = "resolve_merge_conflict"


def listed_hunks(request_text: str) -> list[dict[str, Any]]:
    """The hunks the prompt lists (its last fenced JSON block), [] if there are none."""
    _, _, tail = request_text.rpartition("```json\n")
    block, _, _ = tail.partition("\n```")
    try:
        hunks = json.loads(block).get("hunks") if block else None
    except (ValueError, AttributeError):
        return []
    return [h for h in hunks if isinstance(h, dict)] if isinstance(hunks, list) else []


def keep_both_sides(request_text: str) -> dict[str, Any]:
    """Every hunk resolved as the branch's text followed by the feature's."""
    return {"hunks": [
        {"file": h.get("file"), "index": h.get("index"), "resolved": f"{h.get('branch', '')}{h.get('feature', '')}"}
        for h in listed_hunks(request_text)
    ]}
