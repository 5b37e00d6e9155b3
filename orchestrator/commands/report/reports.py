"""Run reports for machines: `--report` (JSON), `--junit` (JUnit XML), GitHub step summary."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer, model_validator
from pydantic.alias_generators import to_camel

from orchestrator.commands.rendering.cost_words import worst_case_part
from orchestrator.config import RunConfig
from orchestrator.json_types import JsonObject
from orchestrator.llm.costs.spend import RunTotals
from orchestrator.run.verdict import RunResult
from orchestrator.safety.credentials.redaction import redact_value
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.agent_words import for_the_user
from orchestrator.store.check_excerpt import check_verdict, error_excerpt
from orchestrator.store.disk.atomic import write_report_atomic
from orchestrator.store.records import CamelModel
from orchestrator.store.run_state import FeatureState
from shared_base.check_result import CheckResult

# The state's fields a report row shows, in the report's order, by their name in `FeatureState`
# (its `lastVerification` is the row's `verification`).
REPORTED_FIELDS = ("status", "attempts", "duration_ms", "tokens", "cost_usd", "reason", "last_verification", "models")
_REPORTED_AS = {"last_verification": "verification"}


class ReportedFeature(CamelModel):
    """One selected feature in `--report`: who it is (the spec's id, name, category) and its state
    as the run left it. A view of `FeatureState`, which declares the fields: written flat, the
    state's `REPORTED_FIELDS` beside the id, and read back the same way."""

    id: str
    name: str
    category: str
    state: FeatureState

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: object) -> object:
        if not isinstance(data, dict) or "state" in data:
            return data
        identity = ("id", "name", "category")
        state = {("lastVerification" if key == "verification" else key): value
                 for key, value in data.items() if key not in identity}
        return {**{key: data[key] for key in identity if key in data}, "state": state}

    @model_serializer(mode="plain")
    def _flat(self, info: SerializationInfo) -> dict[str, object]:
        row: dict[str, object] = {"id": self.id, "name": self.name, "category": self.category}
        for name in REPORTED_FIELDS:
            key = _REPORTED_AS.get(name, name)
            value = getattr(self.state, name)
            row[to_camel(key) if info.by_alias else key] = round(value, 6) if name == "cost_usd" else value
        return row


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
        features.append(ReportedFeature(id=feature_id, name=feature.name, category=feature.category,
                                        state=state.feature(feature_id)))
    counts = {s: sum(f.state.status == s for f in features)
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
    failures = sum(f.state.status in ("failed", "regressed") for f in features)
    skipped = sum(f.state.status not in ("passed", "failed", "regressed") for f in features)
    suite = ET.Element("testsuite", {
        "name": report.project or Path(report.spec).stem, "tests": str(len(features)),
        "failures": str(failures), "errors": "0", "skipped": str(skipped),
        "time": f"{report.duration_ms / 1000:.3f}",
    })
    for feature in features:
        entry = feature.state
        case = ET.SubElement(suite, "testcase", {
            "classname": feature.category, "name": feature.id, "time": f"{entry.duration_ms / 1000:.3f}",
        })
        check = entry.last_verification or CheckResult()
        if entry.status in ("failed", "regressed"):
            node = ET.SubElement(case, "failure", {
                "message": (f"regressed: {entry.reason}" if entry.status == "regressed" else entry.reason)
                or "check failed",
                "type": f"exit {check.exit_code if entry.last_verification else None}",
            })
            node.text = _xml_safe(check.output or for_the_user(check.error) or "")
        elif entry.status != "passed":
            ET.SubElement(case, "skipped", {"message": f"{entry.status}: {entry.reason or 'not run'}"})
        ET.SubElement(case, "system-out").text = _xml_safe(
            f"attempts={entry.attempts} tokens={entry.tokens.total} costUsd={entry.cost_usd}"
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
        entry = f.state
        status = "**regressed**" if entry.status == "regressed" else entry.status
        lines.append(f"| `{f.id}` | {status} | {entry.attempts} | {entry.tokens.total:,} | {entry.cost_usd:.4f} |")
    worst = worst_case_part(totals.cost_usd, totals.unconfirmed_cost_usd, totals.unconfirmed_calls)
    lines += ["", f"Total: {totals.tokens.total:,} tokens, ${totals.cost_usd:.4f}{f' ({worst})' if worst else ''}, "
              f"{report.duration_ms / 1000:.1f}s.", ""]
    return "\n".join(lines + _failed_checks(report))


def _failed_checks(report: RunReport) -> list[str]:
    """Under the table, each failed or regressed feature's reason and its check's first meaningful lines."""
    lines: list[str] = []
    for feature in report.features:
        entry, check = feature.state, feature.state.last_verification
        if entry.status not in ("failed", "regressed") or check is None or check.success:
            continue
        lines += [f"**`{feature.id}`** {entry.status}: {entry.reason or check_verdict(check)}", ""]
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
