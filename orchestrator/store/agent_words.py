"""The sentences a check's error says to the agent, and what the user reads instead: one place.

A failed attempt's error is written for the agent's retry prompt ("your change broke feature
..., fix your change ..."). The console, `orchestrate logs ID`, the HTML report, JUnit and the
step summary show it to a person, who did not make that change and is not asked to fix it:
`for_the_user` turns each sentence addressed to the agent into one about what happened and what
the agent was told. The code that writes an error takes its words from here, so a sentence
cannot change on one side only. The JSON records (the feature's log, the events, `--report`)
keep the words the agent read.
"""

from __future__ import annotations

# The regression guard (run/checks/guard/regression.py).
OWN_CHECK_PASSED = "your feature's own check passed"
BROKE = ", but your change broke feature "
YOU_CHANGED = "; you changed "
FIX_YOUR_CHANGE = "; fix your change so that check passes again, without editing that check"
# The protected-files guard (run/attempt/guarded_check.py): `(restored; fix the code, not the check)`.
FIX_THE_CODE = "; fix the code, not the check)"
# --strict-checks (run/checks/influence/check_influence.py).
RESTORE_THEM = "; restore or remove them and make the code pass the check"
# The ignore-rules guard (run/checks/protection/hidden_files.py).
TAKE_RULES_OUT = ": take those rules out of .gitignore (ignore only generated files such as caches and build output)"
# The merge queue's conflict (merge/queue.py).
REDO_ON_TOP = "The next attempt starts from the current branch: redo the change on top of it"

_FOR_THE_USER = (
    (OWN_CHECK_PASSED, "the feature's own check passed"),
    (BROKE, ", but the attempt broke feature "),
    (YOU_CHANGED, "; the attempt changed "),
    (FIX_YOUR_CHANGE, "; the agent was sent back to fix its change, not that check"),
    (FIX_THE_CODE, "; the agent was told to fix the code, not the check)"),
    (RESTORE_THEM, "; the agent was told to restore or remove them and make the code pass the check"),
    (TAKE_RULES_OUT, ": the agent was told to take those rules out of .gitignore (only generated files such as "
                     "caches and build output belong there)"),
    (REDO_ON_TOP, "The next attempt starts from the current branch and redoes the change on top of it"),
)


def for_the_user(error: str | None) -> str | None:
    """A check's error as the user reads it: each sentence addressed to the agent told about, not quoted."""
    if not error:
        return error
    for to_the_agent, to_the_user in _FOR_THE_USER:
        error = error.replace(to_the_agent, to_the_user)
    return error
