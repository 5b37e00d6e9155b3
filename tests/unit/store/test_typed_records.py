"""The state's check and attempt records are typed, and keep the JSON they always had on disk."""

from __future__ import annotations

import json

from orchestrator.store.records import AttemptRecord
from orchestrator.store.run_state import FeatureState, RunState
from shared_base.check_result import CheckResult

OLD_STATE = {
    "features": {
        "feat-01": {
            "status": "pending", "attempts": 1,
            "lastVerification": {"command": "pytest", "success": False, "exitCode": 1, "output": "boom",
                                 "error": None, "skipped": False, "attempt": 1},
            "awaitingCheck": {"attempt": 2, "record": {"attempt": 2, "stop": "reported", "turns": 3, "toolCalls": 2,
                                                       "maskedOutputs": 0, "error": None, "verification": None},
                              "report": {"summary": "done"}},
        }
    }
}


def test_an_old_state_file_loads_into_the_typed_records_and_saves_the_same_json() -> None:
    state = RunState.model_validate(OLD_STATE)
    entry = state.features["feat-01"]
    assert isinstance(entry.last_verification, CheckResult) and entry.last_verification.output == "boom"
    assert entry.awaiting_check is not None and isinstance(entry.awaiting_check.record, AttemptRecord)
    assert entry.awaiting_check.record.tool_calls == 2
    saved = json.loads(state.model_dump_json(by_alias=True))["features"]["feat-01"]
    assert saved["lastVerification"] == OLD_STATE["features"]["feat-01"]["lastVerification"]
    assert saved["awaitingCheck"] == OLD_STATE["features"]["feat-01"]["awaitingCheck"]


def test_a_settled_feature_saves_its_check_without_the_output() -> None:
    entry = FeatureState(status="passed", last_verification=CheckResult(command="x", success=True, output="long"))
    assert entry.dump()["lastVerification"]["output"] == ""
    assert entry.last_verification is not None and entry.last_verification.output == "long"
