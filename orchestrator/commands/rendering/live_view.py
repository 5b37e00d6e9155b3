"""The live view in a terminal, and the choice of a command's renderer (`make_renderer`).

Each feature at work has a row naming its phase with the phase's own clock (`agent turn 3`,
`check`, `regression 5/14`, `merging`), so a long check or merge no longer looks like a
model turn that does not end; the run's own phase (`final verification 120/800`) takes the
first row when no feature is at work. Phases reach the view as `Phase`s (`EventSink.phase`),
never as events.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from orchestrator.commands.rendering import user_lines
from orchestrator.commands.rendering.output import (
    FINAL_KINDS,
    JsonRenderer,
    PlainRenderer,
    describe,
    money,
    printable,
    tool_line,
    wants_plain,
)
from orchestrator.llm.costs.pricing import usd
from orchestrator.store.event_kinds import (
    ApiCall,
    Event,
    FeatureBlocked,
    FeatureFinished,
    FeatureStarted,
    Notice,
    RunStarted,
    ToolCall,
)
from orchestrator.store.events import Phase


def clock(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


@dataclass
class _View:
    """What the live view shows of a feature at work, and the run's progress and spend so far."""

    feature: str = "-"
    position: str = ""
    attempt: str = ""
    turn: int = 0
    tokens: int = 0
    cost: float = 0.0
    done: int = 0
    total: int = 0
    phase: str = "agent"
    steps: tuple[int, int] = (0, 0)  # the phase's steps done of all (`regression 5/14`)
    phase_started: float = 0.0  # time.monotonic() when the phase began

    def enter(self, phase: Phase) -> None:
        if phase.name != self.phase:
            self.phase, self.phase_started = phase.name, time.monotonic()
        self.steps = (phase.done, phase.total)

    def phase_label(self) -> str:
        if self.phase == "agent":
            return f"agent turn {max(self.turn, 1)}"
        done, total = self.steps
        return f"{self.phase} {done}/{total}" if total else self.phase


class LiveRenderer:
    """A rich live view in a terminal: feature n of m, attempt, phase and its clock, tokens,
    cost, the run's clock.

    The view is rendered afresh at every refresh (4 a second), so the clocks keep ticking during
    a long model call or check; every line, warnings included, goes through the live console so
    that none is glued to the status line.
    """

    def __init__(self, verbosity: int = 0, max_cost: float | None = None, console: Console | None = None) -> None:
        self.verbosity = verbosity
        self.max_cost = max_cost
        self.console = console or Console()
        self.started = time.monotonic()
        self.view = _View()
        self.busy: dict[str, _View] = {}  # one row per feature at work (several with --jobs N)
        self.arriving = 0  # output tokens of the call in flight, as its stream brings them (an estimate)
        self.run_phase: _View | None = None  # the run's own phase: final verification
        self.live = Live(console=self.console, refresh_per_second=4, transient=True, get_renderable=self._render)
        self.live.start()
        # Warnings, and every other line for stderr (`user_lines.say`), print above the rows while it is up.
        user_lines.attach(self.console)

    def _render(self) -> Table:
        table = Table.grid(padding=(0, 2))
        now = time.monotonic()
        v = self.view
        budget = f" of {usd(self.max_cost)}" if self.max_cost else ""
        filled = int(20 * v.done / v.total) if v.total else 0
        for view in self.busy.values() or ([v] if self.run_phase is None else []):
            table.add_row(Text(f"{view.position} {view.feature}", style="bold"), f"attempt {view.attempt}",
                          view.phase_label(), clock(now - view.phase_started))
        if self.run_phase is not None and not self.busy:
            table.add_row(Text(self.run_phase.phase_label(), style="bold"), "", "",
                          clock(now - self.run_phase.phase_started))
        if len(self.busy) > 1:
            table.add_row(Text(f"{len(self.busy)} at work", style="bold"), "", "", "")
        table.add_row(
            Text("█" * filled + "░" * (20 - filled), style="green"), f"{v.done} of {v.total} done",
            f"{v.tokens:,} tokens" + (f" (+{self.arriving:,} arriving)" if self.arriving else ""),
            f"{money(v.cost)}{budget}", clock(now - self.started),
        )
        return table

    def show_phase(self, phase: Phase) -> None:
        """A feature's (or the run's) phase changed or moved on a step."""
        if phase.feature is None:
            self.run_phase = self.run_phase or _View(phase="", phase_started=time.monotonic())
            self.run_phase.enter(phase)
        elif phase.feature in self.busy:
            self.busy[phase.feature].enter(phase)
        self.live.refresh()

    def handle(self, event: Event) -> None:
        if isinstance(event, Notice):
            if event.type == "note" and self.verbosity <= 0:
                return
            # Text, not markup: the message may quote paths, check output or files.
            user_lines.say(printable(event.message), label=f"orchestrate: {event.type}: ", label_style="yellow")
            return
        self._follow(event)
        line = describe(event, self.verbosity > 0)
        if line is not None and (self.verbosity >= 0 or event.type in FINAL_KINDS):
            self.live.console.print(printable(line), highlight=False, markup=False)
        elif isinstance(event, ToolCall) and self.verbosity > 0:
            self.live.console.print(printable(tool_line(event)), highlight=False, markup=False)
        self.live.refresh()

    def _follow(self, event: Event) -> None:
        """What the rows show after `event`."""
        if isinstance(event, RunStarted):  # one scope for the row: the selection, all runs of it
            self.view.total, self.view.done = event.selected, event.already_passed
            self.view.tokens, self.view.cost = event.spent_tokens or 0, event.spent_usd or 0.0
        elif isinstance(event, FeatureStarted):
            self.view = _View(feature=event.id, position=f"{event.index}/{event.total}",
                              attempt=f"{event.attempt}/{event.max_attempts}", cost=self.view.cost,
                              tokens=self.view.tokens, phase_started=time.monotonic(), done=self.view.done,
                              total=event.total)
            self.busy[event.id] = self.view
        elif isinstance(event, ApiCall):
            worker = self.busy.get(event.id or event.feature or "", self.view)
            worker.turn = event.turn
            worker.enter(Phase("agent"))
            self.view.tokens, self.view.cost = event.run_tokens, event.run_cost_usd
            self.arriving = 0  # now counted in the run's tokens
        elif isinstance(event, (FeatureFinished, FeatureBlocked)):
            self.busy.pop(event.id, None)
            self.view.done += 1

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
