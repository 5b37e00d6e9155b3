"""A check's result is declared once (`shared_base.check_result.CheckResult`): the events, the
working-memory entry and the final-verification failure hold one and write its keys flat, as
they always did; nothing else in the program declares its fields over again."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import pytest
from pydantic import BaseModel

import context_agent
import orchestrator
from orchestrator.store.event_kinds import FinalVerification, RegressionCheck, Verification, parse_event
from orchestrator.store.memory_entries import CheckEvent
from orchestrator.store.records import CheckFailure, ReCheck
from shared_base.check_result import CheckResult, Influencer

CHECK_FIELDS = frozenset(CheckResult.model_fields)
HOLDERS = (Verification, RegressionCheck, CheckEvent, CheckFailure)


@functools.cache
def _models() -> list[tuple[str, type]]:
    """Every pydantic model and dataclass the program defines, by `module.Name`."""
    found = []
    for package in (orchestrator, context_agent):
        for module_info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if module_info.name.endswith("__main__"):
                continue
            module = importlib.import_module(module_info.name)
            for name, value in vars(module).items():
                if inspect.isclass(value) and value.__module__ == module.__name__ and (
                        issubclass(value, BaseModel) or dataclasses.is_dataclass(value)):
                    found.append((f"{module.__name__}.{name}", value))
    return found


def _fields(model: type) -> set[str]:
    if issubclass(model, BaseModel):
        return set(model.model_fields) | {field.alias for field in model.model_fields.values() if field.alias}
    return {field.name for field in dataclasses.fields(model)}


@pytest.mark.parametrize("holder", HOLDERS, ids=lambda model: model.__name__)
def test_a_holder_of_a_check_result_has_it_as_one_field_and_none_of_its_fields(holder: type[BaseModel]) -> None:
    assert holder.model_fields["check"].annotation is CheckResult
    aliases = {field.alias for field in CheckResult.model_fields.values() if field.alias}
    assert _fields(holder) & (CHECK_FIELDS | aliases) == set()


def test_no_model_but_check_result_declares_what_a_check_result_is() -> None:
    """Its defining trio (command, success, exit code) is declared by `CheckResult` alone (and
    `ReCheck`, which is one); a model that needs a check's result holds one."""
    trio = {"command", "success", "exit_code"}
    declared = [name for name, model in _models()
                if trio <= _fields(model) and not (issubclass(model, BaseModel) and issubclass(model, CheckResult))]
    assert declared == []
    # Nor the parts of one without the verdict (a failed check's command, exit code and output).
    partial = [name for name, model in _models()
               if {"command", "exit_code", "output"} <= _fields(model) and not issubclass(model, CheckResult)]
    assert partial == []
    # `ReCheck` is a check result and adds to it; it does not declare its fields again.
    assert set(ReCheck.__annotations__) & CHECK_FIELDS == set()


FAILED = CheckResult(command="pytest -q", success=False, exit_code=1, output="E   assert 0 == 3\n", error=None,
                     attempt=2, influencers=[Influencer(path="conftest.py", kind="conftest", change="added")])


def test_the_events_write_the_check_flat_with_the_keys_and_order_they_always_had() -> None:
    verification = Verification.of("feat-01", FAILED).model_copy(update={"ts": 7})
    assert json.dumps(verification.dump()) == (
        '{"type": "verification", "ts": 7, "id": "feat-01", "command": "pytest -q", "success": false, '
        '"exitCode": 1, "output": "E   assert 0 == 3\\n", "error": null, "skipped": false, "attempt": 2, '
        '"influencers": [{"path": "conftest.py", "kind": "conftest", "change": "added"}]}'
    )
    regression = RegressionCheck(ts=7, id="feat-03", checked="feat-01", check=FAILED, duration_ms=40)
    assert json.dumps(regression.dump()) == (
        '{"type": "regression_check", "ts": 7, "id": "feat-03", "checked": "feat-01", "command": "pytest -q", '
        '"success": false, "exitCode": 1, "error": null, "durationMs": 40, "output": "E   assert 0 == 3\\n"}'
    )
    final = FinalVerification(ts=7, checked=1, passed=0, failed=["feat-01"], duration_ms=3,
                              failures=[CheckFailure.of("feat-01", FAILED)])
    assert final.dump()["failures"] == [
        {"id": "feat-01", "command": "pytest -q", "exitCode": 1, "error": None, "output": "E   assert 0 == 3\n"}]
    for event in (verification, regression, final):
        assert parse_event(json.loads(json.dumps(event.dump()))).dump() == event.dump()  # read back as written
    assert parse_event(verification.dump()).check == FAILED  # type: ignore[union-attr]


def test_a_new_field_of_a_check_result_reaches_the_event_and_the_memory_entry_without_editing_them() -> None:
    class Wider(CheckResult):  # a check result with one more field, as a future edit of CheckResult
        seconds: float = 1.5

    check = Wider(command="true", success=True, exit_code=0, attempt=1)
    assert Verification.of("feat-01", check).dump()["seconds"] == 1.5
    entry = CheckEvent(feature_id="feat-01", check=check).model_dump(mode="json", by_alias=True)
    assert entry["seconds"] == 1.5 and entry["featureId"] == "feat-01" and entry["exitCode"] == 0


def test_the_context_agent_reads_a_logged_check_leniently_into_the_same_model(tmp_path: Path) -> None:
    logged = {**FAILED.dump(), "exitCode": "1", "success": None, "output": "x" * 900}
    read = CheckResult.from_mapping(logged)
    assert read.command == "pytest -q" and read.output == "x" * 800 and read.attempt == 2
    assert "exitCode" not in read.for_prompt() and "success" not in read.for_prompt()  # wrong types: unknown
    assert "influencers" not in read.for_prompt()  # the run's bookkeeping is not the summarizer's
    assert not read.known_failed and CheckResult.from_mapping(FAILED.dump()).known_failed
    # The summarizer reads the keys in the order it always had: the output and the error last.
    assert list(CheckResult.from_mapping({**FAILED.dump(), "error": "boom"}).for_prompt()) == [
        "command", "success", "exitCode", "skipped", "attempt", "output", "error"]
