"""How events reach the user: a live view in a terminal, plain lines in CI, JSON lines for tools.

stdout carries the run's own output (lines, the live view, or JSON events); warnings and
errors always go to stderr. With `--json` nothing but JSON events is written to stdout.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TextIO

from orchestrator.commands.rendering.cost_words import worst_case_part
from orchestrator.store.agent_words import for_the_user
from orchestrator.store.check_excerpt import check_verdict, error_excerpt, failure_reason
from orchestrator.store.event_kinds import (
    Checkpoint,
    DryRunPrompt,
    Event,
    FeatureBlocked,
    FeatureFinished,
    FeatureStarted,
    FeatureWaiting,
    FinalVerification,
    Merge,
    NothingSelected,
    Notice,
    RegressionCheck,
    RegressionSummary,
    RunFinished,
    RunStarted,
    Summarization,
    ToolCall,
    Verification,
)

# Events that end a command's output: shown even with -q.
FINAL_KINDS = {"run_finished", "dry_run_prompt", "nothing_selected"}


def wants_plain(stream: TextIO | None = None) -> bool:
    """Plain output when stdout is not a terminal, or CI / NO_COLOR is set."""
    stream = stream or sys.stdout
    if os.environ.get("CI") or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return True
    return not (hasattr(stream, "isatty") and stream.isatty())


def money(value: float | None) -> str:
    return f"${value or 0:.4f}"


def describe(event: Event, verbose: bool = False) -> str | None:
    """One human line for an event, or None for events not worth a line. A feature gets a fixed
    number of lines however many checks the guard re-runs; `verbose` (-v) adds each check's
    command and each re-run check's line."""
    if isinstance(event, RunStarted):
        return (
            f"run {event.run_id}: {event.selected} feature(s) selected, {event.already_passed} already passed, "
            f"model {event.model}, context {event.context}" + (f"; billing: {event.billing}" if event.billing else "")
        )
    if isinstance(event, FeatureStarted):
        on = f", escalated to {event.model}" if event.escalated else ""
        return f"[{event.index}/{event.total}] {event.id}: {event.name} (attempt {event.attempt}/{event.max_attempts}{on})"
    if isinstance(event, Verification):
        return _verification_line(event, verbose)
    if isinstance(event, FeatureFinished):
        entry = event.state
        return (
            f"    {event.id} {entry.status.upper()} after {entry.attempts} attempt(s), "
            f"{entry.duration_ms / 1000:.1f}s, {entry.tokens.total} tokens, {money(entry.cost_usd)}"
            + (f"; its work is on branch {entry.failed_branch}" if entry.failed_branch else "")
            + (f"; {entry.reason}" if entry.status == "needs_review" and entry.reason else "")
        )
    if isinstance(event, RegressionCheck):
        if not verbose:
            return None
        line = f"      regression check of {event.checked}: {check_verdict(event.check, 'ok')}"
        return "\n".join([line, *excerpt_lines(event.check.output, event.check.error, "        ")])
    if isinstance(event, RegressionSummary):
        return regression_line(event)
    if isinstance(event, FinalVerification):
        return _final_verification_lines(event)
    if isinstance(event, FeatureBlocked):
        return f"    {event.id} BLOCKED: {event.reason}"
    if isinstance(event, FeatureWaiting):
        return f"    {event.id} waits for {event.waits_for}: both change {', '.join(event.files)}"
    if isinstance(event, Summarization):
        state = "ok" if event.success else f"fallback ({event.error})"
        return f"    context summarized ({event.trigger}, {len(event.features)} feature(s)): {state}"
    if isinstance(event, Checkpoint):
        return f"    checkpoint commit {event.sha[:10]}"
    if isinstance(event, Merge):
        return f"    merge {event.result}" + (f": {event.message}" if event.message else "")
    if isinstance(event, RunFinished):
        return (
            f"run {event.outcome}: {event.passed} passed, {event.failed} failed, {event.blocked} blocked, "
            f"{event.pending} pending; {event.tokens} tokens, {money(event.cost_usd)}"
            + (" (all runs), " if event.resumed else ", ")
            + f"{event.duration_ms / 1000:.1f}s" + (" (this run)" if event.resumed else "") + _cost_parts(event)
        )
    if isinstance(event, NothingSelected):
        return event.message
    if isinstance(event, DryRunPrompt):
        return f"===== {event.id} =====\n{event.prompt}\n"
    return None


def _cost_parts(event: RunFinished) -> str:
    """The total's parts, which add up to it: each model's answered calls, the worst-case bookings."""
    parts = [_by_model(event.cost_by_model)] if event.cost_by_model else []
    worst = worst_case_part(event.cost_usd, event.unconfirmed_cost_usd or 0.0, event.unconfirmed_calls or 0)
    parts += [worst] if worst else []
    return f" ({'; '.join(parts)})" if parts else ""


def _by_model(costs: dict[str, float]) -> str:
    return ", ".join(f"{model} {money(cost)}" for model, cost in costs.items())


def _verification_line(event: Verification, verbose: bool) -> str:
    check = event.check
    if check.skipped:
        return f"    check: none configured; the agent's report decides ({'reported' if check.success else 'no report'})"
    verdict = check_verdict(check)
    extra = f": {for_the_user(check.error)}" if check.error else ""
    line = f"    check `{check.command}` {verdict}{extra}" if verbose else f"    check {verdict}{extra}"
    if check.success:
        return line
    # The first meaningful lines of the output, so the reader sees why without opening the log.
    return "\n".join([line, *excerpt_lines(check.output, None, "      ")])


def _final_verification_lines(event: FinalVerification) -> str:
    """The verdict, then each failed check's first meaningful lines (the event keeps its output)."""
    failed = f"; regressed: {', '.join(event.failed)}" if event.failed else ""
    lines = [f"final verification: {event.passed}/{event.checked} check(s) pass on the final tree{failed}"]
    for failure in event.failures:
        check = failure.check
        lines.append(f"    {failure.id}: check FAILED ({failure_reason('', check.error, check.exit_code)})")
        lines += excerpt_lines(check.output, None, "      ")
    return "\n".join(lines)


def excerpt_lines(output: str | None, error: str | None, indent: str) -> list[str]:
    """A failed check's first meaningful lines, each as `<indent>| line`."""
    return [f"{indent}| {text}" for text in error_excerpt(output, error)]


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def regression_line(event: RegressionSummary) -> str | None:
    """The guard's run after a feature in one line: `regression: 14 checks of 14 affected
    features passed (2.1 s)`; None when it found no passed feature affected."""
    if not event.affected:
        return None
    took = f"({event.duration_ms / 1000:.1f} s)"
    deferred = f", {event.deferred} deferred to final verification" if event.deferred else ""
    if not event.failed:
        return (f"    regression: {_counted(event.ran, 'check')} of {_counted(event.affected, 'affected feature')} "
                f"passed {took}{deferred}")
    named = ", ".join(event.failed[:5]) + (f" and {len(event.failed) - 5} more" if len(event.failed) > 5 else "")
    return (f"    regression: {len(event.failed)} of {_counted(event.ran, 'check')} FAILED ({named}) "
            f"{took}{deferred}")


def tool_line(event: ToolCall) -> str:
    return f"      tool {event.tool}: {event.summary}"


class JsonRenderer:
    """--json: one event a line on stdout, nothing else; warnings still go to stderr too."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def handle(self, event: Event) -> None:
        self.out.write(json.dumps(event.dump(), ensure_ascii=False, default=str) + "\n")
        self.out.flush()
        if isinstance(event, Notice) and event.type != "note":
            self.err.write(f"orchestrate: {event.type}: {event.message}\n")
            self.err.flush()

    def close(self) -> None:
        pass


# Control characters other than newline and tab: an escape sequence in a feature name, a
# command of the agent or a check's output must not drive the reader's terminal or CI log.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with control characters shown as `\\xNN` escapes."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


class PlainRenderer:
    """Plain lines, no ANSI codes: for CI, pipes and NO_COLOR."""

    def __init__(
        self, verbosity: int = 0, out: TextIO | None = None, err: TextIO | None = None, *, tagged: bool = False
    ) -> None:
        self.verbosity = verbosity
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.tagged = tagged  # --jobs N: features' lines interleave, so each starts with its feature's id

    def handle(self, event: Event) -> None:
        if isinstance(event, Notice):
            if event.type != "note" or self.verbosity > 0:
                self.err.write(f"orchestrate: {event.type}: {printable(event.message)}\n")
                self.err.flush()
            return
        if self.verbosity < 0 and event.type not in FINAL_KINDS:
            return
        line = describe(event, self.verbosity > 0)
        if line is None and self.verbosity > 0 and isinstance(event, ToolCall):
            line = tool_line(event)
        if line is not None:
            feature_id = getattr(event, "id", None)
            if self.tagged and feature_id:
                line = f"[{feature_id}] {line.lstrip()}"
            self.out.write(printable(line) + "\n")
            self.out.flush()

    def close(self) -> None:
        pass
