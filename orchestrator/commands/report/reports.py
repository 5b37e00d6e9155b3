"""Run reports for machines: `--report` (JSON), `--junit` (JUnit XML), GitHub step summary."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from orchestrator.commands.rendering.cost_words import worst_case_part
from orchestrator.config import RunConfig
from orchestrator.json_types import JsonObject
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.llm.costs.spend import RunTotals
from orchestrator.run.verdict import RunResult
from orchestrator.safety.credentials.redaction import redact_value
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.agent_words import for_the_user
from orchestrator.store.check_excerpt import check_verdict, error_excerpt
from orchestrator.store.disk.atomic import write_report_atomic
from orchestrator.store.records import CamelModel
from shared_base.check_result import CheckResult


class ReportedFeature(CamelModel):
    id: str
    name: str
    category: str
    status: str
    attempts: int
    duration_ms: int
    tokens: TokenUsage
    cost_usd: float
    reason: str | None
    verification: CheckResult | None
    models: list[str] = Field(default_factory=list)  # the models of its attempts, first used first


class ReportTotals(RunTotals):
    """The run's money (`RunTotals`, its costs rounded to the micro-dollar) and its features counted by status."""

    features: int
    passed: int
    failed: int
    regressed: int = 0
    needs_review: int = Field(0, alias="needs_review")  # spelled as the status it counts
    blocked: int
    pending: int
    in_progress: int = Field(alias="in_progress")  # spelled as the status it counts

    @model_serializer(mode="wrap")
    def _as_reports_had_it(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        """The counts first, then the money, `byModel` before the unconfirmed calls and always
        there (even empty): the report's `totals` as it always was."""
        data: JsonObject = handler(self)
        counts = {key: value for key, value in data.items() if key not in _MONEY_KEYS}
        money = {key: value for key, value in data.items() if key in _MONEY_KEYS}
        by_model_key = "byModel" if "costUsd" in money else "by_model"
        by_model = money.pop(by_model_key, {})
        unconfirmed = {key: money.pop(key) for key in list(money) if key.startswith("unconfirmed")}
        return {**counts, **money, by_model_key: by_model, **unconfirmed}


_MONEY_KEYS = {key for name, info in RunTotals.model_fields.items() for key in (name, info.alias or name)}


class RunReport(CamelModel):
    """`--report FILE`: per selected feature status, attempts, duration, tokens, cost; totals."""

    run_id: str
    project: str = ""  # the spec's `project`: the JUnit suite's name and the summary's title
    spec: str
    spec_hash: str
    outcome: str
    exit_code: int
    message: str | None
    model: str
    escalate_model: str | None = None
    context: str
    duration_ms: int
    totals: ReportTotals
    features: list[ReportedFeature]


def run_report(result: RunResult, loaded: LoadedSpec, config: RunConfig) -> RunReport:
    """The JSON report of `result`, secrets redacted."""
    state = result.state
    features = []
    for feature_id in result.selected:
        feature = loaded.spec.feature(feature_id)
        entry = state.feature(feature_id)
        features.append(ReportedFeature(
            id=feature_id, name=feature.name, category=feature.category, status=entry.status,
            attempts=entry.attempts, duration_ms=entry.duration_ms, tokens=entry.tokens,
            cost_usd=round(entry.cost_usd, 6), reason=entry.reason,
            verification=entry.last_verification,
            models=list(entry.models),
        ))
    counts = {s: sum(f.status == s for f in features)
              for s in ("passed", "failed", "regressed", "needs_review", "blocked", "pending", "in_progress")}
    totals = state.totals
    report = RunReport(
        run_id=state.run_id, project=loaded.spec.project, spec=str(loaded.path), spec_hash=loaded.sha256, outcome=result.outcome,
        exit_code=result.exit_code, message=result.message or None, model=config.model,
        escalate_model=config.escalate_model, context=config.context,
        duration_ms=result.duration_ms,
        totals=ReportTotals(
            features=len(features), **counts, **{
                **dict(totals), "cost_usd": round(totals.cost_usd, 6),
                "summarizer_cost_usd": round(totals.summarizer_cost_usd, 6),
                "unconfirmed_cost_usd": round(totals.unconfirmed_cost_usd, 6),
            },
        ),
        features=features,
    )
    return RunReport.model_validate(redact_value(report.dump()))


def junit_xml(report: RunReport) -> str:
    """One testcase per feature: failed features as failures, blocked or unfinished ones as skipped."""
    features = report.features
    failures = sum(f.status in ("failed", "regressed") for f in features)
    skipped = sum(f.status not in ("passed", "failed", "regressed") for f in features)
    suite = ET.Element("testsuite", {
        "name": report.project or Path(report.spec).stem, "tests": str(len(features)),
        "failures": str(failures), "errors": "0", "skipped": str(skipped),
        "time": f"{report.duration_ms / 1000:.3f}",
    })
    for feature in features:
        case = ET.SubElement(suite, "testcase", {
            "classname": feature.category, "name": feature.id, "time": f"{feature.duration_ms / 1000:.3f}",
        })
        check = feature.verification or CheckResult()
        if feature.status in ("failed", "regressed"):
            node = ET.SubElement(case, "failure", {
                "message": (f"regressed: {feature.reason}" if feature.status == "regressed" else feature.reason)
                or "check failed",
                "type": f"exit {check.exit_code if feature.verification else None}",
            })
            node.text = _xml_safe(check.output or for_the_user(check.error) or "")
        elif feature.status != "passed":
            ET.SubElement(case, "skipped", {"message": f"{feature.status}: {feature.reason or 'not run'}"})
        ET.SubElement(case, "system-out").text = _xml_safe(
            f"attempts={feature.attempts} tokens={feature.tokens.total} costUsd={feature.cost_usd}"
        )
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


FENCE = "`" * 3  # a markdown code block's


def step_summary(report: RunReport) -> str:
    """A markdown table of the run for GitHub Actions' job summary."""
    totals = report.totals
    lines = [
        f"### orchestrate: {report.project or Path(report.spec).stem}: {report.outcome} ({totals.passed}/{totals.features} passed)",
        "",
        "| feature | status | attempts | tokens | cost (USD) |",
        "|---|---|---:|---:|---:|",
    ]
    for f in report.features:
        status = "**regressed**" if f.status == "regressed" else f.status
        lines.append(f"| `{f.id}` | {status} | {f.attempts} | {f.tokens.total:,} | {f.cost_usd:.4f} |")
    worst = worst_case_part(totals.cost_usd, totals.unconfirmed_cost_usd, totals.unconfirmed_calls)
    lines += ["", f"Total: {totals.tokens.total:,} tokens, ${totals.cost_usd:.4f}{f' ({worst})' if worst else ''}, "
              f"{report.duration_ms / 1000:.1f}s.", ""]
    return "\n".join(lines + _failed_checks(report))


def _failed_checks(report: RunReport) -> list[str]:
    """Under the table, each failed or regressed feature's reason and its check's first meaningful lines."""
    lines: list[str] = []
    for feature in report.features:
        check = feature.verification
        if feature.status not in ("failed", "regressed") or check is None or check.success:
            continue
        lines += [f"**`{feature.id}`** {feature.status}: {feature.reason or check_verdict(check)}", ""]
        excerpt = [line.replace(FENCE, "` ` `") for line in error_excerpt(check.output, check.error)]
        if excerpt:
            lines += [FENCE, *excerpt, FENCE, ""]
    return lines


def _xml_safe(text: str) -> str:
    # XML 1.0 cannot carry most control characters; check output may contain them.
    return "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else "\ufffd" for ch in text)


def write_all(result: RunResult, loaded: LoadedSpec, config: RunConfig, *, report_path: Path | None,
              junit_path: Path | None) -> None:
    """Write whichever reports were asked for (and the GitHub summary when running there)."""
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not (report_path or junit_path or summary_path):
        return
    report = run_report(result, loaded, config)
    if report_path:
        write_report_atomic(report_path, json.dumps(report.dump(), indent=2, ensure_ascii=False) + "\n")
    if junit_path:
        write_report_atomic(junit_path, junit_xml(report))
    if summary_path:
        with open(summary_path, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))
