"""The path filter every commit of orchestrate goes through (`orchestrator.git.commit_filter`):
refused paths stay as the base has them, whatever the ignore files say."""

from __future__ import annotations

from orchestrator.git.commit_filter import refused


def test_the_refused_paths() -> None:
    assert refused(".autonomous/state/execution-state.json") and refused(".autonomous")
    assert refused(".autonomous.bak-20260101/state/journal.jsonl")
    assert refused("orchestrate.toml") and not refused("orchestrate.toml", config=False)
    assert not refused("src/orchestrate.toml") and not refused("src/.autonomous/x") and not refused(".autonomousx")


