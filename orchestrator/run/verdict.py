"""A finished run's verdict from its features' statuses: the exit code, the outcome, a message."""

from __future__ import annotations

from collections.abc import Mapping

from orchestrator.user_errors import EXIT_FAILED, EXIT_NEEDS_REVIEW, EXIT_OK


def run_verdict(statuses: Mapping[str, str]) -> tuple[int, str, str]:
    """All passed: 0. None failed, but some feature's check was reported defective: 4, saying what
    to do. Else 1 (a feature blocked by one that needs review does not count as failed)."""
    if all(status == "passed" for status in statuses.values()):
        return EXIT_OK, "passed", ""
    review = [fid for fid, status in statuses.items() if status == "needs_review"]
    if review and "failed" not in statuses.values():
        return EXIT_NEEDS_REVIEW, "needs_review", (
            f"needs review: the agent reports the check of {', '.join(review)} is defective (its evidence is above "
            "and in `orchestrate status`); fix the check, then run `orchestrate run` again to retry")
    return EXIT_FAILED, "failed", ""
