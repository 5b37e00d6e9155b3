"""The Impact Agent: footprint predictions, their hit rate, conflicts recorded, the prompt's
forward-looking line, and the `--jobs` scheduler that waits on a predicted overlap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.run.checks.guard.regression import RegressionGuard
from orchestrator.run.checks.impact_agent.impact import predict, predict_pending, record_conflict, score, shared_writes
from orchestrator.run.checks.impact_agent.impact_note import MAX_NOTE_CHARS, forward_note
from orchestrator.run.checks.running.check_pool import check_runner
from orchestrator.run.parallel.ready_features import ReadyFeatures
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.records import Footprint
from orchestrator.store.run_state import CheckFiles, FeatureState, RunState, hit_rate
from tests.environments import unsandboxed


def _feature(fid: str, description: str, **extra: Any) -> dict[str, Any]:
    return {"id": fid, "name": fid, "category": "c", "description": description, "verify": "true", **extra}


def _spec(*features: dict[str, Any]) -> FeatureSpec:
    return FeatureSpec.model_validate({"project": "p", "features": list(features)})


def _guard(spec: FeatureSpec, state: RunState) -> RegressionGuard:
    return RegressionGuard(spec, state, mode="affected", concurrency=1, runner=check_runner(unsandboxed(Path.cwd())))


def _shared_spec() -> FeatureSpec:
    return _spec(
        _feature("base", "Create src/app.py with `main()`."),
        _feature("one", "Append 'line one' to shared.txt.", acceptance=["shared.txt holds 'line one'"]),
        _feature("two", "Add `parse_config()` to shared.txt readers: append 'line two' to shared.txt."),
        _feature("three", "Write docs/three.md."),
        _feature("four", "Extend the app.", depends_on=["base"], verify="pytest tests/test_four.py"),
    )


def test_a_prediction_holds_the_named_files_the_dependencies_footprints_and_the_checks_reads() -> None:
    spec = _shared_spec()
    state = RunState()
    state.features["base"] = FeatureState(status="passed", footprint=Footprint(changed=["src/app.py"],
                                                                               check=["tests/test_base.py"]))
    found = predict(spec.feature("four"), spec, state, _guard(spec, state))
    assert found.writes == []
    assert found.builds_on == ["src/app.py", "tests/test_base.py"]
    assert "tests/test_four.py" in found.reads  # its own check, as its command names it
    assert predict(spec.feature("one"), spec, state, _guard(spec, state)).writes == ["shared.txt"]
    state.feature("four").check_files = CheckFiles(command_sha="x", files=["tests/found.py"])
    assert predict(spec.feature("four"), spec, state, _guard(spec, state)).reads == ["tests/found.py"]


def test_every_pending_feature_is_predicted_and_overlaps_are_the_files_both_will_change() -> None:
    spec = _shared_spec()
    state = RunState()
    predict_pending(spec, state, _guard(spec, state), spec.ids())
    assert all(state.feature(fid).prediction is not None for fid in spec.ids())
    assert shared_writes(state, "one", "two") == {"shared.txt"}
    assert shared_writes(state, "one", "three") == set()


def test_the_hit_rate_compares_the_prediction_with_the_files_changed() -> None:
    spec = _shared_spec()
    state = RunState()
    predict_pending(spec, state, _guard(spec, state), spec.ids())
    one, three = state.feature("one"), state.feature("three")
    one.footprint = Footprint(changed=["shared.txt"])
    three.footprint = Footprint(changed=["docs/three.md", "docs/index.md"])
    score(one)
    score(three)
    assert (one.prediction and one.prediction.hits, one.prediction and one.prediction.changed) == (1, 1)
    assert three.prediction is not None and three.prediction.missed == ["docs/index.md"]
    assert hit_rate(state.features.values()) == (2, 3)


def test_a_conflict_names_the_features_merged_meanwhile_and_whether_it_was_foreseen() -> None:
    spec = _shared_spec()
    state = RunState()
    predict_pending(spec, state, _guard(spec, state), spec.ids())
    state.feature("one").started_at = 100
    state.features["three"].status, state.features["three"].completed_at = "passed", 200
    state.features["three"].footprint = Footprint(changed=["shared.txt"])  # it named docs/three.md only
    missed = record_conflict(state, "one", ["shared.txt"])
    assert (missed.with_features, missed.foreseen) == (["three"], False)
    state.features["two"].status, state.features["two"].completed_at = "passed", 300
    state.features["two"].footprint = Footprint(changed=["shared.txt"])
    foreseen = record_conflict(state, "one", ["shared.txt"])
    assert (foreseen.with_features, foreseen.foreseen) == (["three", "two"], True)
    prediction = state.feature("one").prediction
    assert prediction is not None and len(prediction.conflicts) == 2


def test_the_first_feature_on_a_shared_file_is_told_which_later_ones_build_on_it_and_what_they_need() -> None:
    spec = _shared_spec()
    state = RunState()
    predict_pending(spec, state, _guard(spec, state), spec.ids())
    note = forward_note(spec.feature("one"), spec, state)
    assert "two (shared.txt, needs parse_config(), needs line two)" in note
    assert "three" not in note and "four" not in note
    assert "four" in forward_note(spec.feature("base"), spec, state)  # a declared dependency
    assert forward_note(spec.feature("three"), spec, state) == ""


def test_the_forward_line_is_bounded() -> None:
    many = [_feature(f"f{i:02d}", f"Append `{'x' * 50}{i}` to shared.txt.") for i in range(40)]
    spec = _spec(*many)
    state = RunState()
    predict_pending(spec, state, _guard(spec, state), spec.ids())
    note = forward_note(spec.feature("f00"), spec, state)
    assert len(note) <= MAX_NOTE_CHARS and "and 35 more" in note


def _ready(busy: list[str], features: list[Feature], clash: set[frozenset[str]]) -> tuple[ReadyFeatures, list[Any]]:
    state = RunState()
    waits: list[tuple[str, str]] = []
    ready = ReadyFeatures(
        features, {f.id for f in features}, lambda: state, dict.fromkeys(busy), lambda _f: 3,
        likely_conflict=lambda a, b: frozenset((a.id, b.id)) in clash, settle=lambda _f: None,
        waits=lambda f, holder: waits.append((f.id, holder.id)),
    )
    return ready, waits


def test_a_ready_feature_that_would_clash_with_a_busy_one_waits_while_an_independent_one_starts() -> None:
    spec = _spec(*(_feature(fid, "d") for fid in ("one", "two", "three", "four")))
    features = list(spec.features)
    clash = {frozenset(pair) for pair in (("one", "two"), ("one", "four"), ("two", "four"))}
    ready, waits = _ready(["one"], features, clash)
    assert ready.pick() == spec.feature("three")
    assert waits == [("two", "one")]
    ready, waits = _ready(["one", "three"], features, clash)
    assert ready.pick() == spec.feature("two")  # nothing else is ready: the conflict step is the fallback
    assert waits == []


def test_the_live_view_and_plain_output_say_what_a_feature_waits_for() -> None:
    from orchestrator.commands.rendering.output import describe
    from orchestrator.store.event_kinds import FeatureWaiting

    line = describe(FeatureWaiting(id="feat-02", waits_for="feat-01", files=["shared.txt"]))
    assert line == "    feat-02 waits for feat-01: both change shared.txt"


def test_predicting_again_keeps_the_models_files_and_the_conflicts_met() -> None:
    spec = _shared_spec()
    state = RunState()
    predict_pending(spec, state, _guard(spec, state), spec.ids())
    record_conflict(state, "three", ["docs/three.md"])
    prediction = state.feature("three").prediction
    assert prediction is not None
    prediction.by_model = ["docs/index.md"]
    again = predict(spec.feature("three"), spec, state, _guard(spec, state))
    assert again.by_model == ["docs/index.md"] and len(again.conflicts) == 1


def test_the_impact_models_call_counts_in_the_runs_totals_not_the_summarizers_as_loading_the_journal_does(
    tmp_path: Path,
) -> None:
    from orchestrator.config import RunConfig
    from orchestrator.llm.client import ModelClient
    from orchestrator.llm.costs.spend import Spend
    from orchestrator.run.checks.impact_agent.impact_model import model_predictions
    from tests.sdk_doubles import StreamsCreate

    class Answers(StreamsCreate):
        def create(self, **request: Any) -> Any:
            from anthropic.types import Message

            return Message.model_validate({
                "id": "msg_1", "type": "message", "role": "assistant", "model": request["model"],
                "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 20},
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "predict_footprints",
                             "input": {"features": [{"id": "three", "files": ["docs/index.md"]}]}}],
            })

    class Sdk:
        messages = Answers()

    spec = _shared_spec()
    state = RunState()
    predict_pending(spec, state, _guard(spec, state), spec.ids())
    spend = Spend()
    client = ModelClient(RunConfig(retry_attempts=1).client_settings(), Sdk(), spend)  # type: ignore[arg-type]
    assert model_predictions(client, "claude-haiku-4-5", spec, state, spec.ids(), tmp_path, print) == 1
    prediction = state.feature("three").prediction
    assert prediction is not None and prediction.by_model == ["docs/index.md"]
    assert spend.run.calls == 1 and spend.run.cost_usd > 0
    assert spend.run.snapshot().summarizer_cost_usd == 0 and spend.feature_cost_usd == 0
