"""A run's cost in parts that add up to its total, wherever the total is shown.

A call cut off before its answer (Ctrl-C, a kill, a dropped stream) is booked at its worst case:
the API may have billed it, and `--max-cost` must hold. That booking is in the total but in no
model's figure, so it is shown as its own figure beside the answered calls' cost, with how many
calls it covers.
"""

from __future__ import annotations

_SHOWN = 0.00005  # below half of the last digit shown: $0.0000


def worst_case_part(total_usd: float, unconfirmed_usd: float, calls: int) -> str | None:
    """`$0.2642 answered + $0.1471 booked at worst case for 1 call cut off before its answer`, or None."""
    if unconfirmed_usd < _SHOWN:
        return None
    return f"${max(total_usd - unconfirmed_usd, 0.0):.4f} answered + {worst_case_booking(unconfirmed_usd, calls)}"


def worst_case_booking(unconfirmed_usd: float, calls: int) -> str:
    """`$0.1471 booked at worst case for 2 calls cut off before their answer`."""
    return f"${unconfirmed_usd:.4f} booked at worst case for {calls_cut_off(calls)}"


def calls_cut_off(calls: int) -> str:
    """`1 call cut off before its answer`, `2 calls ...` (a state written before the calls were
    counted says 0: then the words go without the count)."""
    if calls == 1:
        return "1 call cut off before its answer"
    return f"{calls:,} calls cut off before their answer" if calls else "calls cut off before their answer"
