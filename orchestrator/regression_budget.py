"""`regression_budget`: how long the regression guard's checks may take after one feature.

Written `3x` (three times the feature's own check time, the default) or `20s` / `20` (seconds).
The budget does not grow with the run, so neither does the guard's cost per feature: the
affected checks that do not fit are left to final verification, which runs every check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator

DEFAULT_REGRESSION_BUDGET = "3x"
_FORM = re.compile(r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>x|s)?")


@dataclass(frozen=True)
class RegressionBudget:
    """A multiple of the feature's own check time, or a fixed number of seconds."""

    factor: float | None = None
    seconds: float | None = None

    def for_check(self, own_seconds: float) -> float:
        """The seconds the guard may spend after a feature whose own check took `own_seconds`."""
        return self.seconds if self.seconds is not None else (self.factor or 0.0) * own_seconds


def parse_budget(text: str) -> RegressionBudget:
    """`3x` -> a factor, `20s` or `20` -> seconds; ValueError naming both forms otherwise."""
    match = _FORM.fullmatch(text.strip().lower())
    if match is None:
        raise ValueError(f"{text!r}: give a multiple of the feature's own check time such as 3x, or seconds such as 20s")
    number = float(match["number"])
    return RegressionBudget(factor=number) if match["unit"] == "x" else RegressionBudget(seconds=number)


def _checked(text: str) -> str:
    parse_budget(text)
    return text.strip().lower()


BudgetSetting = Annotated[str, AfterValidator(_checked)]
