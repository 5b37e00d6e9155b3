"""`orchestrate report --html PATH` and `run --html PATH`: one self-contained HTML page of a run.

Inline CSS and SVG only (no script, no font, no network), so it opens from a CI artifact
as it is. At 10,000 features the charts aggregate (`html_charts`) and the table lists the
features that are not passed plus the first passed ones.
"""

from __future__ import annotations

import json
import os
from html import escape
from pathlib import Path

from context_agent.budget import INJECTION_BUDGET
from orchestrator.commands.rendering.cost_words import calls_cut_off
from orchestrator.commands.rendering.user_lines import WARNING, say
from orchestrator.commands.report import html_charts as charts
from orchestrator.commands.report.report_data import load_report_data
from orchestrator.commands.report.report_model import FeatureRow, ReportData
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.disk.atomic import write_report_atomic
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.user_errors import EXIT_OK, UsageError

MAX_TABLE_ROWS = 500
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1000px;color:#1d2330;background:#fbfbfd}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e3e6ec;padding-bottom:4px}
.meta{color:#5d6675}.cards{display:flex;gap:12px;flex-wrap:wrap;margin:14px 0}
.card{background:#fff;border:1px solid #e3e6ec;border-radius:8px;padding:8px 14px;min-width:110px}
.card b{display:block;font-size:20px}.chart{display:block;background:#fff;border:1px solid #e3e6ec;border-radius:8px;max-width:100%;height:auto}
.lbl{font-size:11px;fill:#5d6675}.tick-ok{stroke:#1d2330;stroke-width:1.5}.tick-bad{stroke:#d64545;stroke-width:2.5}
.reg-ok{fill:#1d2330}.reg-bad{fill:#e08a1e}.budget{stroke:#d64545;stroke-dasharray:6 4}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px}th,td{border-bottom:1px solid #eceef2;padding:4px 6px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}.st{font-weight:600}.st-passed{color:#2e9e5b}.st-failed,.st-blocked{color:#d64545}
.st-regressed{color:#e08a1e}pre{margin:0;white-space:pre-wrap;font-size:12px;color:#7a2020}.legend span{margin-right:14px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}:target{background:#fff7d6}
.axis{stroke:#9aa1ad;stroke-width:1}.bar-name{font-size:10px}.in-bar{font-size:11px;fill:#fff;pointer-events:none}
td.feat{white-space:nowrap}td.files{min-width:190px}td.files small{display:block;overflow-wrap:anywhere}
td pre{overflow-wrap:anywhere}
"""


def _legend(items: list[tuple[str, str]]) -> str:
    return '<p class="legend">' + "".join(f'<span><i class="sw" style="background:{c}"></i>{escape(n)}</span>' for n, c in items) + "</p>"


def _cards(data: ReportData) -> str:
    counts: dict[str, int] = {}
    for row in data.features:
        counts[row.state.status] = counts.get(row.state.status, 0) + 1
    totals = data.totals
    tokens = totals.get("tokens") or {}
    items = [("features", f"{len(data.features):,}"), *((s, f"{n:,}") for s, n in sorted(counts.items())),
             ("cost", f"${float(totals.get('costUsd') or 0):.4f}"),
             *_worst_case(float(totals.get("unconfirmedCostUsd") or 0), int(totals.get("unconfirmedCalls") or 0)),
             ("summarizer", f"${float(totals.get('summarizerCostUsd') or 0):.4f}"),
             ("tokens", f"{sum(int(v or 0) for v in tokens.values()):,}"), ("model calls", f"{int(totals.get('apiCalls') or 0):,}"),
             *_durations(data)]
    return '<div class="cards">' + "".join(f'<div class="card"><b>{escape(v)}</b>{escape(k)}</div>' for k, v in items) + "</div>"


def _worst_case(unconfirmed: float, calls: int) -> list[tuple[str, str]]:
    """The part of the cost booked at worst case for calls cut off before their answer (in the cost, in no model's)."""
    if unconfirmed < 0.00005:
        return []
    return [(f"of it booked at worst case for {calls_cut_off(calls)}", f"${unconfirmed:.4f}")]


def _durations(data: ReportData) -> list[tuple[str, str]]:
    """The time as the CLI's closing line says it (the last run's), and all runs' when there were several."""
    runs = data.run_durations_ms
    if not runs:
        return [("duration", f"{data.duration_ms / 1000:.1f}s")]
    last = [("duration, last run", f"{runs[-1] / 1000:.1f}s")]
    return last if len(runs) == 1 else [*last, (f"duration, all {len(runs)} runs", f"{sum(runs) / 1000:.1f}s")]


def _table_rows(rows: list[FeatureRow]) -> tuple[list[FeatureRow], int]:
    """Not-passed features first (all of them up to the cap), then passed ones in spec order."""
    shown = [r for r in rows if r.state.status != "passed"][:MAX_TABLE_ROWS]
    shown += [r for r in rows if r.state.status == "passed"][: MAX_TABLE_ROWS - len(shown)]
    return shown, len(rows) - len(shown)


def _row(row: FeatureRow, log_href: str) -> str:
    entry = row.state
    failure = "<pre>" + escape("\n".join(row.failure)) + "</pre>" if row.failure else ""
    # One file a line: a path is read whole, not broken at the column's edge.
    footprint = "<br>".join(escape(name) for name in row.footprint[:8]) + (" …" if len(row.footprint) > 8 else "")
    return (f'<tr id="feature-{escape(row.id)}"><td class="feat"><a href="#feature-{escape(row.id)}">{escape(row.id)}</a>'
            f'<br><small>{escape(row.name)}</small></td><td class="st st-{escape(entry.status)}">{escape(entry.status)}</td>'
            f'<td class="num">{entry.attempts}</td><td class="num">{entry.duration_ms / 1000:.1f}s</td>'
            f'<td class="num">${entry.cost_usd:.4f}</td><td class="num">{row.context_tokens if row.context_tokens is not None else ""}</td>'
            f'<td>{failure}</td><td class="files"><small>{footprint}</small></td><td><a href="{escape(log_href)}">log</a></td></tr>')


def _table(data: ReportData, logs_href: str) -> str:
    shown, hidden = _table_rows(data.features)
    head = ("<tr><th>feature</th><th>status</th><th>attempts</th><th>duration</th><th>cost</th>"
            "<th>context</th><th>last failure</th><th>footprint</th><th></th></tr>")
    body = "".join(_row(r, f"{logs_href}/{r.id}.json") for r in shown)
    note = (f"<p>{hidden:,} more passed features are not listed; "
            "<code>orchestrate status --all</code> prints them all.</p>") if hidden else ""
    return f"<table>{head}{body}</table>{note}"


def _merges(data: ReportData) -> str:
    """The merge queue's outcomes (not merged first) and the final verification, when the run had them."""
    parts = []
    if data.merges:
        rows = sorted(data.merges, key=lambda m: m.result == "merged")[:MAX_TABLE_ROWS]
        body = "".join(
            f'<tr><td><a href="#feature-{escape(m.feature)}">{escape(m.feature)}</a></td>'
            f'<td class="st st-{"passed" if m.result == "merged" else "failed"}">{escape(m.result)}</td>'
            f'<td class="num">{m.attempt}</td><td><code>{escape(m.sha[:12])}</code></td><td>{escape(m.message)}</td></tr>'
            for m in rows
        )
        merged = sum(m.result == "merged" for m in data.merges)
        parts.append(f"<h2>Merges</h2><p>{merged:,} of {len(data.merges):,} merge(s) landed.</p><table><tr><th>feature"
                     f"</th><th>result</th><th>attempt</th><th>commit</th><th>why not</th></tr>{body}</table>")
    final = data.final_verification
    if final is not None:
        failed = [str(fid) for fid in final.get("failed") or []]
        regressed = f"; regressed: {escape(', '.join(failed))}" if failed else ""
        parts.append(f"<h2>Final verification</h2><p>{int(final.get('passed') or 0):,} of {int(final.get('checked') or 0):,} "
                     f"check(s) pass on the final tree{regressed}.</p>")
    return "".join(parts)


def render_html(data: ReportData, logs_href: str = ".autonomous/logs", name: str = "") -> str:
    """The whole page for `data`; `logs_href` is where the feature logs are, seen from the page;
    `name` (the spec's `project`) titles it."""
    title = f"{escape(name)}: orchestrate run report" if name else "orchestrate run report"
    summarizer = float(data.totals.get("summarizerCostUsd") or 0)
    total = float(data.totals.get("costUsd") or 0)
    share = f"{summarizer / total:.1%}" if total else "0%"
    outcome = _legend([("passed", charts.COLOURS["passed"]), ("failed", charts.COLOURS["failed"]),
                       ("running / interrupted (run again)", charts.COLOURS["running"])])
    return "".join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f"<title>{title} ({escape(data.run_id)})</title><style>{_CSS}</style></head><body>",
        f"<h1>{title}</h1><p class=\"meta\">project {escape(data.project)} · run {escape(data.run_id)}"
        f" · model {escape(data.model)}</p>", _cards(data),
        f"<h2>Timeline</h2><p>Attempts per worker; ticks are checks (red: failed), diamonds regression checks; "
        f"{len(data.summarizations)} summarization(s).</p>{outcome}",
        charts.gantt(data.spans, data.lanes, data.duration_ms),
        "<h2>Tokens per feature</h2>", _legend([(k, c) for k, c in charts.TOKEN_KINDS]), charts.token_bars(data.features),
        f"<h2>Cost per feature</h2><p>Total ${total:.4f}; the summarizer's share ${summarizer:.4f} ({share}).</p>",
        charts.cost_bars(data.features),
        f"<h2>Context per feature</h2><p>Tokens of the injected project context, against its {INJECTION_BUDGET:,}-token budget.</p>",
        charts.context_bars(data.features, INJECTION_BUDGET),
        "<h2>Prompt size over the run</h2><p>Input tokens of each model call (fresh, cache read and cache write).</p>",
        charts.prompt_line(data.prompt_sizes, data.duration_ms),
        _merges(data), "<h2>Features</h2>", _table(data, logs_href), "</body></html>\n",
    ])


def _spec_names(spec_path: str) -> tuple[str, dict[str, str]]:
    """The spec's project name (as the spec loader defaults it: the file's stem) and feature names."""
    try:
        spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
        features = {str(f["id"]): str(f.get("name", "")) for f in spec.get("features", []) if isinstance(f, dict)}
        return str(spec.get("project") or Path(spec_path).stem), features
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "", {}


def build_html(paths: ProjectPaths, target: Path, loaded: LoadedSpec | None = None) -> str:
    """The report page of the project at `paths`, to be written at `target`."""
    if loaded is None:
        state = paths.state_file
        spec_path = json.loads(state.read_text(encoding="utf-8")).get("specPath", "") if state.is_file() else ""
        project, names = _spec_names(str(spec_path))
    else:
        project, names = loaded.spec.project, {f.id: f.name for f in loaded.spec.features}
    data = load_report_data(paths, names)
    logs_href = Path(os.path.relpath(paths.logs_dir, target.resolve().parent)).as_posix()
    return render_html(data, logs_href, project)


def write_html_report(paths: ProjectPaths, target: Path) -> int:
    """`orchestrate report --html PATH`."""
    if not paths.state_file.is_file():
        raise UsageError(f"no run recorded in {paths.root} (no {paths.state_file}); run `orchestrate run SPEC` first")
    try:
        write_report_atomic(target, build_html(paths, target))
    except OSError as err:
        raise UsageError(f"cannot write {target}: {err.strerror or err}") from err
    print(f"HTML report written to {target}")
    return EXIT_OK


def write_html_after_run(paths: ProjectPaths, target: Path, loaded: LoadedSpec | None = None) -> None:
    """`run --html PATH`: write the page; a failure to write is a warning, not a failed run."""
    try:
        write_report_atomic(target, build_html(paths, target, loaded))
    except OSError as err:
        say(f"could not write the HTML report {target}: {err}", label=WARNING, label_style="yellow")
