"""How events reach the user: a live view in a terminal, plain lines in CI, JSON lines for tools.

stdout carries the run's own output (lines, the live view, or JSON events); warnings and
errors always go to stderr. With `--json` nothing but JSON events is written to stdout.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from orchestrator.commands import user_lines
from orchestrator.commands.check_excerpt import error_excerpt
from orchestrator.llm.pricing import usd
from orchestrator.store.event_kinds import (
    ApiCall,
    Checkpoint,
    DryRunPrompt,
    Event,
    FeatureBlocked,
    FeatureFinished,
    FeatureStarted,
    FinalVerification,
    Merge,
    NothingSelected,
    Notice,
    RegressionCheck,
    RunFinished,
    RunStarted,
    Summarization,
    ToolCall,
    Verification,
)

# Events that end a command's output: shown even with -q.
_FINAL_KINDS = {"run_finished", "dry_run_prompt", "nothing_selected"}


def wants_plain(stream: TextIO | None = None) -> bool:
    """Plain output when stdout is not a terminal, or CI / NO_COLOR is set."""
    stream = stream or sys.stdout
    if os.environ.get("CI") or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return True
    return not (hasattr(stream, "isatty") and stream.isatty())


def _money(value: float | None) -> str:
    return f"${value or 0:.4f}"


def describe(event: Event) -> str | None:
    """One human line for an event, or None for events not worth a line."""
    if isinstance(event, RunStarted):
        return (
            f"run {event.run_id}: {event.selected} feature(s) selected, {event.already_passed} already passed, "
            f"model {event.model}, context {event.context}"
        )
    if isinstance(event, FeatureStarted):
        on = f", escalated to {event.model}" if event.escalated else ""
        return f"[{event.index}/{event.total}] {event.id}: {event.name} (attempt {event.attempt}/{event.max_attempts}{on})"
    if isinstance(event, Verification):
        return _verification_line(event)
    if isinstance(event, FeatureFinished):
        return (
            f"    {event.id} {event.status.upper()} after {event.attempts} attempt(s), "
            f"{event.duration_ms / 1000:.1f}s, {event.tokens} tokens, {_money(event.cost_usd)}"
            + (f"; its work is on branch {event.failed_branch}" if event.failed_branch else "")
        )
    if isinstance(event, RegressionCheck):
        verdict = "ok" if event.success else f"FAILED (exit {event.exit_code})"
        return f"    regression check of {event.checked}: {verdict}"
    if isinstance(event, FinalVerification):
        failed = f"; regressed: {', '.join(event.failed)}" if event.failed else ""
        return f"final verification: {event.passed}/{event.checked} check(s) pass on the final tree{failed}"
    if isinstance(event, FeatureBlocked):
        return f"    {event.id} BLOCKED: {event.reason}"
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
            f"{event.pending} pending; {event.tokens} tokens, {_money(event.cost_usd)}, "
            f"{event.duration_ms / 1000:.1f}s"
            + (f" ({_by_model(event.cost_by_model)})" if event.cost_by_model else "")
        )
    if isinstance(event, NothingSelected):
        return event.message
    if isinstance(event, DryRunPrompt):
        return f"===== {event.id} =====\n{event.prompt}\n"
    return None


def _by_model(costs: dict[str, float]) -> str:
    return ", ".join(f"{model} {_money(cost)}" for model, cost in costs.items())


def _verification_line(event: Verification) -> str:
    if event.skipped:
        return f"    check: none configured; the agent's report decides ({'reported' if event.success else 'no report'})"
    verdict = "passed" if event.success else f"FAILED (exit {event.exit_code})"
    extra = f": {event.error}" if event.error else ""
    line = f"    check `{event.command}` {verdict}{extra}"
    if event.success:
        return line
    # The first meaningful lines of the output, so the reader sees why without opening the log.
    return "\n".join([line, *(f"      | {text}" for text in error_excerpt(event.output, None))])


def _tool_line(event: ToolCall) -> str:
    return f"      tool {event.tool}: {event.summary}"


class JsonRenderer:
    """--json: one event a line on stdout, nothing else; warnings still go to stderr too."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def handle(self, event: Event) -> None:
        self.out.write(json.dumps(event.dump(), ensure_ascii=False, default=str) + "\n")
        self.out.flush()
        if isinstance(event, Notice):
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
            self.err.write(f"orchestrate: {event.type}: {printable(event.message)}\n")
            self.err.flush()
            return
        if self.verbosity < 0 and event.type not in _FINAL_KINDS:
            return
        line = describe(event)
        if line is None and self.verbosity > 0 and isinstance(event, ToolCall):
            line = _tool_line(event)
        if line is not None:
            feature_id = getattr(event, "id", None)
            if self.tagged and feature_id:
                line = f"[{feature_id}] {line.lstrip()}"
            self.out.write(printable(line) + "\n")
            self.out.flush()

    def close(self) -> None:
        pass


@dataclass
class _View:
    """What the live view shows: the feature at work, the run's progress and spend so far."""

    feature: str = "-"
    position: str = ""
    attempt: str = ""
    turn: int = 0
    tokens: int = 0
    cost: float = 0.0
    started: float = 0.0  # time.monotonic() when its attempt started
    done: int = 0
    total: int = 0


class LiveRenderer:
    """A rich live view in a terminal: feature n of m, attempt, turn, tokens, cost, elapsed.

    The view is rendered afresh at every refresh (4 a second), so the clock keeps ticking during
    a long model call or check; every line, warnings included, goes through the live console so
    that none is glued to the status line.
    """

    def __init__(self, verbosity: int = 0, max_cost: float | None = None, console: Console | None = None) -> None:
        self.verbosity = verbosity
        self.max_cost = max_cost
        self.console = console or Console()
        self.started = time.monotonic()
        self.view = _View()
        self.busy: dict[str, _View] = {}  # --jobs N: one line per feature at work
        self.arriving = 0  # output tokens of the call in flight, as its stream brings them (an estimate)
        self.live = Live(console=self.console, refresh_per_second=4, transient=True, get_renderable=self._render)
        self.live.start()
        # Warnings, and every other line for stderr (`user_lines.say`), print above the rows while it is up.
        user_lines.attach(self.console)

    def _render(self) -> Table:
        table = Table.grid(padding=(0, 2))
        elapsed = time.monotonic() - self.started
        v = self.view
        budget = f" of {usd(self.max_cost)}" if self.max_cost else ""
        filled = int(20 * v.done / v.total) if v.total else 0
        if len(self.busy) > 1:
            self._render_workers(table, elapsed)
        else:
            table.add_row(
                Text(f"{v.position} {v.feature}", style="bold"), f"attempt {v.attempt}", f"turn {v.turn}",
                f"{int(elapsed // 60)}m{int(elapsed % 60):02d}s",
            )
        table.add_row(
            Text("█" * filled + "░" * (20 - filled), style="green"), f"{v.done} of {v.total} done",
            f"{v.tokens:,} tokens" + (f" (+{self.arriving:,} arriving)" if self.arriving else ""), f"{_money(v.cost)}{budget}",
        )
        return table

    def _render_workers(self, table: Table, elapsed: float) -> None:
        """One line per busy worker (feature, attempt, turn, its elapsed time), then how many, and the run's clock."""
        now = time.monotonic()
        for view in self.busy.values():
            took = now - view.started
            table.add_row(Text(f"{view.position} {view.feature}", style="bold"), f"attempt {view.attempt}",
                          f"turn {view.turn}", f"{int(took // 60)}m{int(took % 60):02d}s")
        table.add_row(Text(f"{len(self.busy)} at work", style="bold"), "", "", f"{int(elapsed // 60)}m{int(elapsed % 60):02d}s")

    def handle(self, event: Event) -> None:
        if isinstance(event, Notice):
            # Text, not markup: the message may quote paths, check output or files.
            user_lines.say(printable(event.message), label=f"orchestrate: {event.type}: ", label_style="yellow")
            return
        if isinstance(event, RunStarted):
            self.view.total = event.selected
        elif isinstance(event, FeatureStarted):
            self.view = _View(feature=event.id, position=f"{event.index}/{event.total}",
                              attempt=f"{event.attempt}/{event.max_attempts}", cost=self.view.cost,
                              tokens=self.view.tokens, started=time.monotonic(), done=self.view.done,
                              total=event.total)
            self.busy[event.id] = self.view
        elif isinstance(event, ApiCall):
            worker = self.busy.get(event.id or event.feature or "", self.view)
            worker.turn = event.turn
            self.view.turn, self.view.tokens, self.view.cost = event.turn, event.run_tokens, event.run_cost_usd
            self.arriving = 0  # now counted in the run's tokens
        elif isinstance(event, (FeatureFinished, FeatureBlocked)):
            self.busy.pop(event.id, None)
            self.view.done += 1
        line = describe(event)
        if line is not None and (self.verbosity >= 0 or event.type in _FINAL_KINDS):
            self.live.console.print(printable(line), highlight=False, markup=False)
        elif isinstance(event, ToolCall) and self.verbosity > 0:
            self.live.console.print(printable(_tool_line(event)), highlight=False, markup=False)
        self.live.refresh()

    def output_arriving(self, tokens: int) -> None:
        self.arriving = tokens  # shown at the next refresh (4 a second)

    def close(self) -> None:
        user_lines.detach(self.console)
        self.live.stop()


def make_renderer(
    json_mode: bool, verbosity: int, max_cost: float | None = None, *, tagged: bool = False
) -> JsonRenderer | PlainRenderer | LiveRenderer:
    """JSON lines, plain lines, or the live view in a terminal (with --max-cost shown); `tagged`
    (--jobs N) marks each plain line with its feature."""
    if json_mode:
        return JsonRenderer()
    if wants_plain():
        return PlainRenderer(verbosity, tagged=tagged)
    return LiveRenderer(verbosity, max_cost)
