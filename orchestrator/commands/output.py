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
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

# Events that plain and live modes print as a line; the rest only update the view or the log.
_QUIET_KINDS = {"tool_call", "api_call", "attempt_started", "text_output"}
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


def describe(event: dict[str, Any]) -> str | None:
    """One human line for an event, or None for events not worth a line."""
    kind = event["type"]
    if kind == "run_started":
        return (
            f"run {event['runId']}: {event['selected']} feature(s) selected, {event['alreadyPassed']} already passed, "
            f"model {event['model']}, context {event['context']}"
        )
    if kind == "feature_started":
        return f"[{event['index']}/{event['total']}] {event['id']}: {event['name']} (attempt {event['attempt']}/{event['maxAttempts']})"
    if kind == "verification":
        if event.get("skipped"):
            return f"    check: none configured; the agent's report decides ({'reported' if event.get('success') else 'no report'})"
        verdict = "passed" if event.get("success") else f"FAILED (exit {event.get('exitCode')})"
        extra = f": {event['error']}" if event.get("error") else ""
        return f"    check `{event.get('command')}` {verdict}{extra}"
    if kind == "feature_finished":
        return (
            f"    {event['id']} {event['status'].upper()} after {event['attempts']} attempt(s), "
            f"{event['durationMs'] / 1000:.1f}s, {event['tokens']} tokens, {_money(event.get('costUsd'))}"
        )
    if kind == "feature_blocked":
        return f"    {event['id']} BLOCKED: {event['reason']}"
    if kind == "summarization":
        state = "ok" if event.get("success") else f"fallback ({event.get('error')})"
        return f"    context summarized ({event['trigger']}, {len(event.get('features', []))} feature(s)): {state}"
    if kind == "checkpoint":
        return f"    checkpoint commit {event['sha'][:10]}"
    if kind == "run_finished":
        return (
            f"run {event['outcome']}: {event['passed']} passed, {event['failed']} failed, {event['blocked']} blocked, "
            f"{event['pending']} pending; {event['tokens']} tokens, {_money(event.get('costUsd'))}, "
            f"{event['durationMs'] / 1000:.1f}s"
        )
    if kind == "nothing_selected":
        return event["message"]
    if kind == "dry_run_prompt":
        return f"===== {event['id']} =====\n{event['prompt']}\n"
    return None


class JsonRenderer:
    """--json: one event a line on stdout, nothing else; warnings still go to stderr too."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def handle(self, event: dict[str, Any]) -> None:
        self.out.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        self.out.flush()
        if event["type"] in ("warning", "error"):
            self.err.write(f"orchestrate: {event['type']}: {event.get('message')}\n")
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

    def __init__(self, verbosity: int = 0, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.verbosity = verbosity
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def handle(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind in ("warning", "error"):
            self.err.write(f"orchestrate: {kind}: {printable(str(event.get('message')))}\n")
            self.err.flush()
            return
        if self.verbosity < 0 and kind not in _FINAL_KINDS:
            return
        line = describe(event)
        if line is None and self.verbosity > 0 and kind == "tool_call":
            line = f"      tool {event.get('tool')}: {event.get('summary', '')}"
        if line is not None:
            self.out.write(printable(line) + "\n")
            self.out.flush()

    def close(self) -> None:
        pass


class LiveRenderer:
    """A rich live view in a terminal: feature n of m, attempt, turn, tokens, cost, elapsed."""

    def __init__(self, verbosity: int = 0) -> None:
        self.verbosity = verbosity
        self.console = Console()
        self.err_console = Console(stderr=True)
        self.started = time.monotonic()
        self.view: dict[str, Any] = {"feature": "-", "position": "", "attempt": "", "turn": 0, "tokens": 0, "cost": 0.0}
        self.live = Live(self._render(), console=self.console, refresh_per_second=4, transient=True)
        self.live.start()

    def _render(self) -> Table:
        table = Table.grid(padding=(0, 2))
        elapsed = time.monotonic() - self.started
        v = self.view
        table.add_row(
            f"[bold]{v['position']}[/bold] {v['feature']}",
            f"attempt {v['attempt']}",
            f"turn {v['turn']}",
            f"{v['tokens']:,} tokens",
            _money(v["cost"]),
            f"{int(elapsed // 60)}m{int(elapsed % 60):02d}s",
        )
        return table

    def handle(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind in ("warning", "error"):
            # The message may quote paths, check output or files: never read it as markup.
            self.err_console.print(f"[yellow]orchestrate: {kind}:[/yellow] {escape(str(event.get('message')))}",
                                   highlight=False)
            return
        if kind == "feature_started":
            self.view.update(
                feature=event["id"], position=f"{event['index']}/{event['total']}",
                attempt=f"{event['attempt']}/{event['maxAttempts']}", turn=0,
            )
        elif kind == "api_call":
            self.view.update(turn=event.get("turn", 0), tokens=event.get("runTokens", 0), cost=event.get("runCostUsd", 0.0))
        line = describe(event)
        if line is not None and (self.verbosity >= 0 or kind in _FINAL_KINDS):
            self.live.console.print(line, highlight=False, markup=False)
        elif kind == "tool_call" and self.verbosity > 0:
            self.live.console.print(f"      tool {event.get('tool')}: {event.get('summary', '')}", highlight=False, markup=False)
        self.live.update(self._render())

    def close(self) -> None:
        self.live.stop()


def make_renderer(json_mode: bool, verbosity: int) -> Any:
    if json_mode:
        return JsonRenderer()
    if wants_plain():
        return PlainRenderer(verbosity)
    return LiveRenderer(verbosity)
