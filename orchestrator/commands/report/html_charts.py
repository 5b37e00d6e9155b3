"""The report's charts as inline SVG: no script, no network, a fixed number of shapes.

Beyond `MAX_BARS` features (or `MAX_SPANS` attempts) values are aggregated into buckets, so a
10,000-feature run draws as many shapes as a 100-feature one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from orchestrator.commands.report.report_model import FeatureRow, Span

WIDTH = 960
MAX_BARS = 120
MAX_SPANS = 1500
MAX_POINTS = 600
NAMED_BARS = 60  # bars named under the axis; past it, every k-th
COLOURS = {"passed": "#2e9e5b", "failed": "#d64545", "running": "#8a8f98", "interrupted": "#8a8f98",
           "regressed": "#e08a1e"}
# An outcome in the words `orchestrate logs` uses for it.
SAID = {"interrupted": "interrupted (run again)"}
TOKEN_KINDS = (("input", "#5b8def"), ("cacheRead", "#9ec5ff"), ("cacheWrite", "#b38cf0"), ("output", "#f2a541"))
_TOKEN_FIELDS = {"input": "input", "cacheRead": "cache_read", "cacheWrite": "cache_write", "output": "output"}


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
                f'{SAID.get(s.outcome, s.outcome)}, {_seconds(s.end - s.start)}</title></rect></a>')
            if w > 7 * len(s.feature) + 8:  # named on the bar where the name fits
                parts.append(f'<text x="{x + 4:.1f}" y="{y + lane_h - 10}" class="in-bar">{escape(s.feature)}</text>')
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
        cell[0 if s.outcome in ("passed", "interrupted") else 1] += 1
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


@dataclass
class Bar:
    """One bar: its name under it, and its parts bottom up as (value, colour, what the part is)."""

    label: str
    parts: list[tuple[float, str, str]]


def _short(label: str, limit: int = 22) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _bars(bars: Sequence[Bar], unit: Callable[[float], str], label: str, budget: float | None = None) -> str:
    """Vertical bars with a value axis (0, half, top, in `unit`) and each bar named under it,
    rotated; past `NAMED_BARS` bars every k-th is named, so the names never overlap."""
    left, top, plot_h = 86, 12, 140
    names_h = 20 + 5 * max((len(_short(bar.label)) for bar in bars), default=0)  # rotated names, 10px font
    base = top + plot_h
    totals = [sum(value for value, _c, _t in bar.parts) for bar in bars]
    peak = max([*totals, budget or 0]) * (1.1 if budget else 1.0) or 1
    bar_w = (WIDTH - left - 10) / max(len(bars), 1)
    parts = [f'<line x1="{left}" x2="{left}" y1="{top}" y2="{base}" class="axis"/>',
             f'<line x1="{left}" x2="{WIDTH - 10}" y1="{base}" y2="{base}" class="axis"/>']
    for share in (0.0, 0.5, 1.0):
        y = base - share * plot_h
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" class="lbl tick" text-anchor="end">{escape(unit(peak * share))}'
                     f'</text><line x1="{left - 3}" x2="{left}" y1="{y:.1f}" y2="{y:.1f}" class="axis"/>')
    step = -(-len(bars) // NAMED_BARS)
    for i, bar in enumerate(bars):
        x, y = left + i * bar_w, float(base)
        for value, colour, what in bar.parts:
            h = value / peak * plot_h
            if h > 0:
                y -= h
                parts.append(f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{max(bar_w - 2, 1):.1f}" height="{h:.1f}" '
                             f'fill="{colour}"><title>{escape(bar.label)}: {escape(what)}</title></rect>')
        if i % step == 0:
            cx = x + bar_w / 2
            parts.append(f'<text class="lbl bar-name" text-anchor="end" transform="translate({cx + 3:.1f} {base + 10}) '
                         f'rotate(-55)">{escape(_short(bar.label))}</text>')
    if budget is not None:
        line_y = base - budget / peak * plot_h
        parts.append(f'<line x1="{left}" x2="{WIDTH - 10}" y1="{line_y:.1f}" y2="{line_y:.1f}" class="budget"/>'
                     f'<text x="{WIDTH - 12}" y="{line_y - 4:.1f}" class="lbl" text-anchor="end">budget '
                     f'{escape(unit(budget))}</text>')
    return _svg(base + names_h, "".join(parts), label)


def _tokens(value: float) -> str:
    return f"{value:,.0f} tokens"


def token_bars(rows: Sequence[FeatureRow]) -> str:
    """Stacked tokens per feature (input, cache read, cache write, output)."""
    bars = []
    for name, group in buckets(rows):
        sums = [(kind, colour, sum(int(getattr(r.state.tokens, _TOKEN_FIELDS[kind])) for r in group))
                for kind, colour in TOKEN_KINDS]
        bars.append(Bar(name, [(value, colour, f"{kind} {value:,}") for kind, colour, value in sums]))
    return _bars(bars, _tokens, "tokens per feature")


def cost_bars(rows: Sequence[FeatureRow]) -> str:
    """Cost per feature (or bucket), in dollars."""
    bars = []
    for name, group in buckets(rows):
        value = sum(r.state.cost_usd for r in group)
        bars.append(Bar(name, [(value, "#5b8def", f"${value:.4f}")]))
    return _bars(bars, lambda value: f"${value:.4f}", "cost per feature")


def context_bars(rows: Sequence[FeatureRow], budget: int) -> str:
    """Injected context per feature (the largest in a bucket) against the token budget."""
    bars = []
    for name, group in buckets(rows):
        value = max((r.context_tokens or 0 for r in group), default=0)
        bars.append(Bar(name, [(value, "#d64545" if value > budget else "#2e9e5b", f"{value:,} tokens")]))
    return _bars(bars, _tokens, "context size per feature", budget=budget)


def prompt_line(points: Sequence[tuple[int, int]], duration_ms: int) -> str:
    """Prompt tokens of each model call over the run (the largest per pixel bin), with a token
    axis and a time axis."""
    if not points:
        return _svg(40, '<text x="10" y="24" class="lbl">no model calls recorded</text>', "prompt size")
    bins: dict[int, int] = {}
    for at, tokens in points:
        b = at * MAX_POINTS // max(duration_ms, 1)
        bins[b] = max(bins.get(b, 0), tokens)
    peak = max(bins.values()) or 1
    left, top, plot_h = 86, 12, 140
    base, width = top + plot_h, WIDTH - left - 10
    xy = " ".join(f"{left + b / MAX_POINTS * width:.1f},{base - v / peak * plot_h:.1f}" for b, v in sorted(bins.items()))
    parts = [f'<polyline points="{xy}" fill="none" stroke="#5b8def" stroke-width="1.5"/>',
             f'<line x1="{left}" x2="{left}" y1="{top}" y2="{base}" class="axis"/>',
             f'<line x1="{left}" x2="{WIDTH - 10}" y1="{base}" y2="{base}" class="axis"/>']
    parts += [f'<text x="{left - 6}" y="{base - share * plot_h + 4:.1f}" class="lbl tick" text-anchor="end">'
              f'{_tokens(peak * share)}</text>' for share in (0.0, 0.5, 1.0)]
    parts += [f'<text x="{left + f * width:.0f}" y="{base + 16}" class="lbl tick" text-anchor="{"end" if f == 1.0 else "start"}">'
              f'{_seconds(int(duration_ms * f))}</text>' for f in (0, 0.25, 0.5, 0.75, 1.0)]
    return _svg(base + 24, "".join(parts), "prompt size over the run")
