"""The 400s Claude Code mends by itself: told to the user only when it did not.

Claude Code answers some refusals by resending a changed request: its `system`-role turns, for
one, are refused by an API (or a gateway) that does not take them under the beta it names, and it
resends without them. Such a 400 is no news to the user: held until the attempt's next answered
call, it becomes a note (shown with -v); when no answered call follows, a warning.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal

from orchestrator.store.event_kinds import ApiCall, Notice


def error_message(body: bytes) -> str:
    """The API's own message in an error answer's body, or what the body is."""
    try:
        error = json.loads(body).get("error", {})
        message = error.get("message") if isinstance(error, dict) else None
    except (ValueError, AttributeError):
        message = None
    return str(message)[:300] if message else "no message"


class MendedRefusals:
    """An attempt's 400s, held until it is known whether Claude Code went on after them."""

    def __init__(self, feature_id: str, on_event: Callable[[ApiCall | Notice], None]) -> None:
        self.feature_id, self.on_event = feature_id, on_event
        self._held: list[str] = []

    def hold(self, call_number: int, body: bytes) -> bool:
        """A call answered 400: wait and see (True: held)."""
        self._held.append(f"{self.feature_id} (Claude Code, call {call_number}): the API answered 400"
                          f" ({error_message(body)})")
        return True

    def settle(self, level: Literal["warning", "note"]) -> None:
        """The 400s held so far: notes once a later call was answered, else warnings."""
        held, self._held = self._held, []
        mended = "; Claude Code resent the request without what was refused and went on" if level == "note" else ""
        for message in held:
            self.on_event(Notice(type=level, message=message + mended, id=self.feature_id))
