"""Plain output: lines a CI log or a pipe can hold, with no escape sequence from anyone's text."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from orchestrator.commands.rendering.output import JsonRenderer, PlainRenderer, describe, printable
from orchestrator.store.event_kinds import Checkpoint, FeatureBlocked, Notice, ToolCall, Verification, parse_event
from orchestrator.store.events import EventSink
from shared_base.check_result import CheckResult


def test_control_characters_are_shown_escaped_newlines_and_tabs_kept() -> None:
    assert printable("a\x1b[31mred\x1b[0m\tb\nc\x07\x9b") == "a\\x1b[31mred\\x1b[0m\tb\nc\\x07\\x9b"


def test_plain_lines_and_warnings_carry_no_escape_sequence() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = PlainRenderer(verbosity=1, out=out, err=err)
    renderer.handle(ToolCall(type="tool_call", ts=0, turn=1, tool="bash", summary="printf '\x1b]0;pwned\x07'"))
    renderer.handle(Notice(type="warning", ts=0, message="check printed \x1b[2J"))
    assert "\x1b" not in out.getvalue() + err.getvalue()
    assert "\\x1b]0;pwned\\x07" in out.getvalue()
    assert err.getvalue() == "orchestrate: warning: check printed \\x1b[2J\n"


def test_the_event_log_and_the_renderers_share_one_typed_event(tmp_path: Path) -> None:
    out = io.StringIO()
    log = tmp_path / "events.jsonl"
    sink = EventSink(JsonRenderer(out=out, err=io.StringIO()), log)
    sink.emit(Verification.of("feat-01", CheckResult(command="true", success=True, exit_code=0, attempt=1)))
    sink.emit(FeatureBlocked(id="feat-02", reason="feat-01 failed"))
    sink.context_event("summarizer.failed", {"error": "timed out", "trigger": "interval"})

    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [list(line)[:2] for line in lines] == [["type", "ts"]] * 3
    assert list(lines[0])[2:] == ["id", "command", "success", "exitCode", "output", "error", "skipped", "attempt"]
    assert lines[2] | {"ts": 0} == {"type": "error", "ts": 0, "message": "context agent: timed out",
                                    "source": "summarizer.failed", "details": {"error": "timed out", "trigger": "interval"}}
    assert [json.loads(line) for line in out.getvalue().splitlines()] == lines
    assert describe(parse_event(lines[1])) == "    feat-02 BLOCKED: feat-01 failed"


def test_an_event_of_no_declared_kind_or_with_an_undeclared_key_is_refused() -> None:
    with pytest.raises(ValidationError):
        Checkpoint(id="feat-01", sha="abc", extra=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        parse_event({"type": "no_such_kind", "ts": 0, "message": "x"})


def test_an_event_says_its_kind_and_time_itself_and_secrets_never_reach_the_log(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "x" * 40)
    log = tmp_path / "events.jsonl"
    sink = EventSink(JsonRenderer(out=io.StringIO(), err=io.StringIO()), log)
    before = int(time.time() * 1000)
    written = sink.emit(Notice(type="warning", message="key sk-ant-api03-" + "x" * 40 + " leaked", id="feat-01"))
    line = json.loads(log.read_text())
    assert list(line) == ["type", "ts", "message", "id"] and line["type"] == "warning"
    assert before <= line["ts"] <= int(time.time() * 1000) + 1
    assert "x" * 40 not in log.read_text() and written.message == line["message"]
    assert Checkpoint(id="feat-01", sha="abc").dump() | {"ts": 0} == {
        "type": "checkpoint", "ts": 0, "id": "feat-01", "sha": "abc"}


@pytest.mark.parametrize("verbosity", [0, 1])
def test_a_note_shows_only_with_dash_v_a_warning_always(verbosity: int) -> None:
    err = io.StringIO()
    renderer = PlainRenderer(verbosity=verbosity, out=io.StringIO(), err=err)
    renderer.handle(Notice(type="note", ts=0, message="feat-01 (Claude Code, call 1): the API answered 400"))
    renderer.handle(Notice(type="warning", ts=0, message="something to act on"))
    shown = err.getvalue()
    assert "orchestrate: warning: something to act on" in shown
    assert ("orchestrate: note: feat-01 (Claude Code, call 1)" in shown) == (verbosity > 0)
    json_err = io.StringIO()
    JsonRenderer(out=io.StringIO(), err=json_err).handle(Notice(type="note", ts=0, message="mended"))
    assert json_err.getvalue() == ""  # the note is in the event stream, not on stderr


def test_the_closing_line_shows_the_worst_case_bookings_so_its_parts_add_up_to_the_total() -> None:
    from orchestrator.llm.costs.pricing import TokenUsage
    from orchestrator.store.event_kinds import RunFinished

    event = RunFinished(ts=0, outcome="passed", exit_code=0, passed=8, failed=0, blocked=0, pending=0, tokens=10,
                        usage=TokenUsage(), cost_usd=0.4113, duration_ms=8700, unconfirmed_cost_usd=0.1471, unconfirmed_calls=1,
                        cost_by_model={"claude-haiku-5-5": 0.0101, "claude-sonnet-5-5": 0.2541})
    line = describe(event)
    assert line is not None and line.endswith(
        "$0.4113, 8.7s (claude-haiku-5-5 $0.0101, claude-sonnet-5-5 $0.2541; "
        "$0.2642 answered + $0.1471 booked at worst case for 1 call cut off before its answer)")
    plain = RunFinished(ts=0, outcome="passed", exit_code=0, passed=1, failed=0, blocked=0, pending=0, tokens=10,
                        usage=TokenUsage(), cost_usd=0.02, duration_ms=1000)
    assert describe(plain) == "run passed: 1 passed, 0 failed, 0 blocked, 0 pending; 10 tokens, $0.0200, 1.0s"


def test_a_resumed_runs_closing_line_says_the_scope_of_each_figure() -> None:
    from orchestrator.llm.costs.pricing import TokenUsage
    from orchestrator.store.event_kinds import RunFinished

    event = RunFinished(ts=0, outcome="passed", exit_code=0, passed=8, failed=0, blocked=0, pending=0, tokens=10,
                        usage=TokenUsage(), cost_usd=0.02, duration_ms=8700, resumed=True)
    assert describe(event) == ("run passed: 8 passed, 0 failed, 0 blocked, 0 pending; 10 tokens, $0.0200 (all runs), "
                               "8.7s (this run)")
