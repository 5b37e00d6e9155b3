"""The report's charts as inline SVG: no script, no network, a fixed number of shapes.

Beyond `MAX_BARS` features (or `MAX_SPANS` attempts) values are aggregated into buckets, so a
10,000-feature run draws as many shapes as a 100-feature one.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from orchestrator.commands.report_model import FeatureRow, Span

WIDTH = 960
MAX_BARS = 120
MAX_SPANS = 1500
MAX_POINTS = 600
COLOURS = {"passed": "#2e9e5b", "failed": "#d64545", "running": "#8a8f98", "regressed": "#e08a1e"}
TOKEN_KINDS = (("input", "#5b8def"), ("cacheRead", "#9ec5ff"), ("cacheWrite", "#b38cf0"), ("output", "#f2a541"))


def _svg(height: int, body: str, label: str) -> str:
    return (f'<svg class="chart" role="img" aria-label="{escape(label)}" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">{body}</svg>')


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f}s"


def gantt(spans: Sequence[Span], lanes: int, duration_ms: int) -> str:
    """Attempts per lane over time, coloured by outcome; checks as ticks, regression checks as diamonds."""
    lane_h, left, top = 24, 70, 18
    height = top + lanes * lane_h + 24
    scale = (WIDTH - left - 10) / max(duration_ms, 1)
    parts = [f'<text x="4" y="{top + i * lane_h + 16}" class="lbl">worker {i + 1}</text>' for i in range(lanes)]
    if len(spans) > MAX_SPANS:
        parts += _binned_spans(spans, lanes, duration_ms, left, top, lane_h)
    else:
        for s in spans:
            x, y = left + s.start * scale, top + s.lane * lane_h + 3
            w = max((s.end - s.start) * scale, 1.5)
            parts.append(
                f'<a href="#feature-{escape(s.feature)}"><rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{lane_h - 6}" '
                f'fill="{COLOURS.get(s.outcome, "#8a8f98")}" rx="2"><title>{escape(s.feature)} attempt {s.attempt}: '
                f'{s.outcome}, {_seconds(s.end - s.start)}</title></rect></a>')
            parts += [f'<line x1="{left + t * scale:.1f}" x2="{left + t * scale:.1f}" y1="{y - 2}" y2="{y + lane_h - 4}" '
                      f'class="{"tick-ok" if ok else "tick-bad"}"><title>check {"passed" if ok else "failed"}</title></line>'
                      for t, ok in s.checks]
            parts += [f'<path d="M{left + t * scale:.1f} {y - 3} l4 4 l-4 4 l-4 -4 z" class="{"reg-ok" if ok else "reg-bad"}">'
                      f'<title>regression check {"passed" if ok else "failed"}</title></path>' for t, ok in s.regression_checks]
    axis_y = top + lanes * lane_h + 14
    parts += [f'<text x="{left + f * (WIDTH - left - 10):.0f}" y="{axis_y}" class="lbl" '
              f'text-anchor="{"end" if f == 1.0 else "start"}">{_seconds(int(duration_ms * f))}</text>'
              for f in (0, 0.25, 0.5, 0.75, 1.0)]
    return _svg(height, "".join(parts), "timeline of attempts")


def _binned_spans(spans: Sequence[Span], lanes: int, duration_ms: int, left: int, top: int, lane_h: int) -> list[str]:
    bins = 300
    width = (WIDTH - left - 10) / bins
    counts: dict[tuple[int, int], list[int]] = {}
    for s in spans:
        cell = counts.setdefault((s.lane, min(bins - 1, s.start * bins // max(duration_ms, 1))), [0, 0])
        cell[0 if s.outcome == "passed" else 1] += 1
    parts = []
    for (lane, b), (ok, bad) in counts.items():
        colour = COLOURS["failed"] if bad > ok else COLOURS["passed"]
        parts.append(f'<rect x="{left + b * width:.1f}" y="{top + lane * lane_h + 3}" width="{width:.1f}" '
                     f'height="{lane_h - 6}" fill="{colour}"><title>{ok} passed, {bad} failed attempts</title></rect>')
    return parts


def buckets(rows: Sequence[FeatureRow]) -> list[tuple[str, list[FeatureRow]]]:
    """Features one per bar, or grouped into at most `MAX_BARS` consecutive buckets."""
    if len(rows) <= MAX_BARS:
        return [(r.id, [r]) for r in rows]
    size = -(-len(rows) // MAX_BARS)
    return [(f"{rows[i].id} … ({len(rows[i:i + size])})", list(rows[i:i + size])) for i in range(0, len(rows), size)]


def token_bars(rows: Sequence[FeatureRow]) -> str:
    """Stacked tokens per feature (input, cache read, cache write, output)."""
    groups = buckets(rows)
    height, base = 200, 180
    totals = [{k: sum(int(r.tokens.get(k) or 0) for r in g) for k, _ in TOKEN_KINDS} for _, g in groups]
    peak = max((sum(t.values()) for t in totals), default=0) or 1
    bar_w = (WIDTH - 20) / max(len(groups), 1)
    parts = []
    for i, ((label, _), t) in enumerate(zip(groups, totals, strict=True)):
        y = float(base)
        for kind, colour in TOKEN_KINDS:
            h = t[kind] / peak * (base - 10)
            if h > 0:
                y -= h
                parts.append(f'<rect x="{10 + i * bar_w:.1f}" y="{y:.1f}" width="{max(bar_w - 2, 1):.1f}" height="{h:.1f}" '
                             f'fill="{colour}"><title>{escape(label)}: {kind} {t[kind]:,}</title></rect>')
    return _svg(height, "".join(parts), "tokens per feature")


def cost_bars(rows: Sequence[FeatureRow]) -> str:
    """Cost per feature (or bucket), in dollars."""
    groups = buckets(rows)
    values = [sum(r.cost_usd for r in g) for _, g in groups]
    peak = max(values, default=0) or 1
    bar_w = (WIDTH - 20) / max(len(groups), 1)
    parts = [f'<rect x="{10 + i * bar_w:.1f}" y="{150 - v / peak * 130:.1f}" width="{max(bar_w - 2, 1):.1f}" '
             f'height="{max(v / peak * 130, 0.5):.1f}" fill="#5b8def"><title>{escape(label)}: ${v:.4f}</title></rect>'
             for i, ((label, _), v) in enumerate(zip(groups, values, strict=True))]
    return _svg(160, "".join(parts), "cost per feature")


def context_bars(rows: Sequence[FeatureRow], budget: int) -> str:
    """Injected context per feature (the largest in a bucket) against the token budget."""
    groups = buckets(rows)
    values = [max((r.context_tokens or 0 for r in g), default=0) for _, g in groups]
    peak = max([*values, budget]) * 1.1
    bar_w = (WIDTH - 20) / max(len(groups), 1)
    line_y = 150 - budget / peak * 140
    parts = [f'<rect x="{10 + i * bar_w:.1f}" y="{150 - v / peak * 140:.1f}" width="{max(bar_w - 2, 1):.1f}" '
             f'height="{max(v / peak * 140, 0.5):.1f}" fill="{"#d64545" if v > budget else "#2e9e5b"}">'
             f'<title>{escape(label)}: {v:,} tokens</title></rect>'
             for i, ((label, _), v) in enumerate(zip(groups, values, strict=True))]
    parts.append(f'<line x1="10" x2="{WIDTH - 10}" y1="{line_y:.1f}" y2="{line_y:.1f}" class="budget"/>'
                 f'<text x="{WIDTH - 150}" y="{line_y - 4:.1f}" class="lbl">budget {budget:,} tokens</text>')
    return _svg(160, "".join(parts), "context size per feature")


def prompt_line(points: Sequence[tuple[int, int]], duration_ms: int) -> str:
    """Prompt tokens of each model call over the run (the largest per pixel bin)."""
    if not points:
        return _svg(40, '<text x="10" y="24" class="lbl">no model calls recorded</text>', "prompt size")
    bins: dict[int, int] = {}
    for at, tokens in points:
        b = at * MAX_POINTS // max(duration_ms, 1)
        bins[b] = max(bins.get(b, 0), tokens)
    peak = max(bins.values()) or 1
    xy = " ".join(f"{10 + b / MAX_POINTS * (WIDTH - 20):.1f},{150 - v / peak * 140:.1f}" for b, v in sorted(bins.items()))
    body = (f'<polyline points="{xy}" fill="none" stroke="#5b8def" stroke-width="1.5"/>'
            f'<text x="12" y="14" class="lbl">peak {peak:,} tokens</text>')
    return _svg(160, body, "prompt size over the run")
