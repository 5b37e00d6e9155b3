"""Run reports for machines: `--report` (JSON), `--junit` (JUnit XML), GitHub step summary."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from orchestrator.config import RunConfig
from orchestrator.safety.secrets import redact_value
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.atomic import write_text_atomic


def run_report(result: Any, loaded: LoadedSpec, config: RunConfig) -> dict[str, Any]:
    """The JSON report: per selected feature status, attempts, duration, tokens, cost; totals."""
    state = result.state
    features = []
    for feature_id in result.selected:
        feature = loaded.spec.feature(feature_id)
        entry = state.feature(feature_id)
        features.append({
            "id": feature_id, "name": feature.name, "category": feature.category, "status": entry.status,
            "attempts": entry.attempts, "durationMs": entry.duration_ms, "tokens": entry.tokens.dump(),
            "costUsd": round(entry.cost_usd, 6), "reason": entry.reason,
            "verification": entry.last_verification,
        })
    counts = {s: sum(f["status"] == s for f in features) for s in ("passed", "failed", "blocked", "pending", "in_progress")}
    totals = state.totals
    return redact_value({
        "runId": state.run_id, "spec": str(loaded.path), "specHash": loaded.sha256, "outcome": result.outcome,
        "exitCode": result.exit_code, "message": result.message or None, "model": config.model,
        "context": config.context, "durationMs": result.duration_ms,
        "totals": {
            "features": len(features), **counts, "tokens": totals.tokens.dump(), "costUsd": round(totals.cost_usd, 6),
            "apiCalls": totals.api_calls, "summarizerTokens": totals.summarizer_tokens.dump(),
            "summarizerCostUsd": round(totals.summarizer_cost_usd, 6),
        },
        "features": features,
    })


def junit_xml(report: dict[str, Any]) -> str:
    """One testcase per feature: failed features as failures, blocked or unfinished ones as skipped."""
    features = report["features"]
    failures = sum(f["status"] == "failed" for f in features)
    skipped = sum(f["status"] not in ("passed", "failed") for f in features)
    suite = ET.Element("testsuite", {
        "name": f"orchestrate:{Path(report['spec']).stem}", "tests": str(len(features)),
        "failures": str(failures), "errors": "0", "skipped": str(skipped),
        "time": f"{report['durationMs'] / 1000:.3f}",
    })
    for feature in features:
        case = ET.SubElement(suite, "testcase", {
            "classname": feature["category"], "name": feature["id"], "time": f"{feature['durationMs'] / 1000:.3f}",
        })
        verification = feature.get("verification") or {}
        if feature["status"] == "failed":
            node = ET.SubElement(case, "failure", {
                "message": feature.get("reason") or "check failed",
                "type": f"exit {verification.get('exitCode')}",
            })
            node.text = _xml_safe(str(verification.get("output") or verification.get("error") or ""))
        elif feature["status"] != "passed":
            ET.SubElement(case, "skipped", {"message": f"{feature['status']}: {feature.get('reason') or 'not run'}"})
        ET.SubElement(case, "system-out").text = _xml_safe(
            f"attempts={feature['attempts']} tokens={sum(feature['tokens'].values())} costUsd={feature['costUsd']}"
        )
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def step_summary(report: dict[str, Any]) -> str:
    """A markdown table of the run for GitHub Actions' job summary."""
    totals = report["totals"]
    lines = [
        f"### orchestrate: {report['outcome']} ({totals['passed']}/{totals['features']} passed)",
        "",
        "| feature | status | attempts | tokens | cost (USD) |",
        "|---|---|---:|---:|---:|",
    ]
    for f in report["features"]:
        lines.append(
            f"| `{f['id']}` | {f['status']} | {f['attempts']} | {sum(f['tokens'].values()):,} | {f['costUsd']:.4f} |"
        )
    lines += ["", f"Total: {sum(totals['tokens'].values()):,} tokens, ${totals['costUsd']:.4f}, "
              f"{report['durationMs'] / 1000:.1f}s.", ""]
    return "\n".join(lines)


def _xml_safe(text: str) -> str:
    # XML 1.0 cannot carry most control characters; check output may contain them.
    return "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else "\ufffd" for ch in text)


def write_all(result: Any, loaded: LoadedSpec, config: RunConfig, *, report_path: Path | None,
              junit_path: Path | None) -> None:
    """Write whichever reports were asked for (and the GitHub summary when running there)."""
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not (report_path or junit_path or summary_path):
        return
    report = run_report(result, loaded, config)
    if report_path:
        write_text_atomic(report_path, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    if junit_path:
        write_text_atomic(junit_path, junit_xml(report))
    if summary_path:
        with open(summary_path, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))
