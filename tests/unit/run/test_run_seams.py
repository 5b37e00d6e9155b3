"""The run package's seams, without a model: the strategy registry, the one build of a
feature's turn, and the verifier a feature job is given."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest

from context_agent.injection.context_injection import ContextInjection
from orchestrator.run.attempt.feature_prompt import feature_turn, strategy_system_prompt
from orchestrator.run.attempt.strategies import REQUEST_MARKER, STRATEGIES, strategy_named
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.disk.paths import ProjectPaths

SPEC = FeatureSpec(project="demo", features=[Feature(id="feat-01", name="One", description="the first")])


class Injections:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def get_injection(self, feature_id: str, reserved_tokens: int = 0, files: Collection[str] = ()) -> ContextInjection:
        self.asked.append(feature_id)
        return ContextInjection(feature_id=feature_id, token_count=5, summary="what came before")


def test_every_strategy_is_in_the_registry_and_an_unknown_one_names_the_choices():
    assert list(STRATEGIES) == ["compressed", "replay", "window"]
    assert [s.name for s in STRATEGIES.values() if s.summarizes_with_model] == ["compressed"]
    assert [s.name for s in STRATEGIES.values() if s.replays_memory] == ["replay"]
    with pytest.raises(ValueError, match="compressed, replay, window"):
        strategy_named("everything")


def test_only_compressed_asks_the_context_agent_and_renders_its_section(tmp_path: Path):
    paths = ProjectPaths.for_project(tmp_path)
    feature = SPEC.features[0]
    for name in STRATEGIES:
        injections = Injections()
        turn = feature_turn(feature, SPEC, name, paths, injections=injections)
        assert "ID: feat-01" in turn.prompt
        assert injections.asked == (["feat-01"] if name == "compressed" else [])
        assert ("what came before" in turn.prompt) == (name == "compressed")
        assert turn.prompt.startswith(REQUEST_MARKER) == (name == "replay")


def test_the_replay_system_prompt_says_how_to_read_replayed_entries():
    assert "WM_KIND=" in strategy_system_prompt(SPEC, "replay")
    assert "WM_KIND=" not in strategy_system_prompt(SPEC, "compressed")


