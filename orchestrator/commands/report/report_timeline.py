"""The events of `events.jsonl` turned into the report's timeline: attempts, checks, prompt sizes.

An attempt starts at `feature_started` and ends at its `verification`, `feature_finished` or
`feature_blocked`. Lanes come from a `worker` field when events carry one; otherwise attempts
that overlap in time are put on separate lanes, so several workers show as several lanes.
"""

from __future__ import annotations

from orchestrator.commands.report.report_model import MergeRow, ReportData, Span
from orchestrator.json_types import JsonObject


class Timeline:
    """Collects spans from events in file order."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.last = 0
        self.open: dict[str, Span] = {}
        self.spans: list[Span] = []
        self.workers: dict[str, int] = {}
        self.prompt_sizes: list[tuple[int, int]] = []
        self.summarizations: list[int] = []
        self.meta: dict[str, str] = {}
        self.merges: list[MergeRow] = []
        self.final_verification: JsonObject | None = None
        self.run_durations: list[int] = []

    def _ms(self, event: JsonObject) -> int:
        ts = int(event.get("ts") or 0)
        if self.first is None:
            self.first = ts
        self.last = max(self.last, ts - self.first)
        return ts - self.first

    def add(self, event: JsonObject) -> None:
        """Take one event into account."""
        kind, at = event.get("type"), self._ms(event)
        fid = str(event.get("id") or event.get("feature") or "")
        self._outcomes(kind, fid, event)
        if kind in ("run_started", "run_finished"):  # an attempt still open when its run ended was cut short
            for open_id in list(self.open):
                self._close(open_id, at, "interrupted")
        if kind == "run_finished":
            self.run_durations.append(int(event.get("durationMs") or 0))
        if kind == "run_started":
            self.meta = {"run_id": str(event.get("runId", "")), "model": str(event.get("model", ""))}
        elif kind == "feature_started":
            span = Span(fid, int(event.get("attempt") or 1), at, at)
            if "worker" in event:
                span.lane = self.workers.setdefault(str(event["worker"]), len(self.workers))
            self._close(fid, at, "failed")
            self.open[fid] = span
            self.spans.append(span)
        elif kind == "api_call":
            usage = event.get("usage") or {}
            prompt = sum(int(usage.get(k) or 0) for k in ("input", "cacheRead", "cacheWrite"))
            self.prompt_sizes.append((at, prompt))
        elif kind == "verification" and fid in self.open:
            self.open[fid].checks.append((at, bool(event.get("success"))))
            self.open[fid].end = at
            if not event.get("success"):
                self._close(fid, at, "failed")
        elif kind in ("regression_check", "final_verification"):
            target = self.open.get(fid) or (self.spans[-1] if self.spans else None)
            if target is not None:
                target.regression_checks.append((at, bool(event.get("success", event.get("passed", True)))))
        elif kind in ("feature_finished", "feature_blocked"):
            self._close(fid, at, "passed" if event.get("status") == "passed" else "failed")
        elif kind == "summarization":
            self.summarizations.append(at)

    def _outcomes(self, kind: object, fid: str, event: JsonObject) -> None:
        """Merges and the last final verification, listed as they are (not on the timeline)."""
        if kind == "merge":
            self.merges.append(MergeRow(fid, str(event.get("result") or ""), int(event.get("attempt") or 0),
                                        str(event.get("sha") or ""), str(event.get("message") or "")))
        elif kind == "final_verification":
            self.final_verification = event

    def _close(self, fid: str, at: int, outcome: str) -> None:
        span = self.open.pop(fid, None)
        if span is not None:
            span.end, span.outcome = max(span.end, at), outcome

    def finish(self, data: ReportData) -> None:
        """Put the spans, lanes and series into `data`."""
        for span in self.open.values():
            span.end = self.last
        if not self.workers:
            _assign_lanes(self.spans)
        data.spans = self.spans
        data.lanes = 1 + max((s.lane for s in self.spans), default=0)
        data.prompt_sizes = self.prompt_sizes
        data.summarizations = self.summarizations
        data.merges, data.final_verification = self.merges, self.final_verification
        data.duration_ms = self.last
        data.run_durations_ms = self.run_durations
        data.run_id = data.run_id or self.meta.get("run_id", "")
        data.model = self.meta.get("model", "")


def _assign_lanes(spans: list[Span]) -> None:
    """Greedy interval colouring: each attempt takes the first lane free at its start."""
    lane_ends: list[int] = []
    for span in sorted(spans, key=lambda s: s.start):
        for lane, end in enumerate(lane_ends):
            if end <= span.start:
                span.lane, lane_ends[lane] = lane, span.end
                break
        else:
            span.lane = len(lane_ends)
            lane_ends.append(span.end)
