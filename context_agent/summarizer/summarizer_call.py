"""The summarizer's one Claude call: the answer's schema, the request, and reading the answer.

The answer is a delta. The model returns a new summary plus only what changes in the stores
(new items, and ids of items it retires); it never has to restate what is stored, so leaving
something out cannot lose it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from context_agent.budget import (
    CONSOLIDATE_CONSTRAINTS_AT,
    CONSTRAINT_TOKENS,
    CONSTRAINTS_BUDGET,
    DECISION_TOKENS,
    MAX_ACTIVE_CONSTRAINTS,
    SUMMARY_TARGET_WORDS,
)
from context_agent.json_shapes import JsonSchema, SummarizerRequest
from context_agent.memory.stores import ContextStores
from context_agent.records.logs import FeatureOutcome
from context_agent.text import clip_item
from context_agent.words import normalized_key
from shared_base.json_values import JsonObject
from shared_base.tokens import estimate_tokens

MAX_ANSWER_TOKENS = 4096
# Items listed in the prompt at most; beyond this the prompt says how many were left out.
_MAX_LISTED_CONSTRAINTS = 200


class SummarizerError(Exception):
    """The summarizer's call failed or its answer is unusable."""


class _Answer(BaseModel):
    # Extra keys are ignored rather than failing the whole answer.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class _Restatement(_Answer):
    """Identity, not similarity: the model says which stored item an item states again."""

    restates: str = Field(
        default="",
        description="Id of the stored item this one states again (e.g. \"C12\" or \"D3\"), or \"\" when "
                    "it is new. A restatement renews the stored item instead of adding a copy.",
    )
    replaces: bool = Field(
        default=False,
        description="With restates: true when this wording should replace the stored one (clearer or "
                    "more precise); false keeps the stored wording.",
    )


class DecisionDraft(_Restatement):
    """A decision the summarizer adds, or one it restates."""

    text: str = Field(description="The decision and its reason, one line.")
    feature_id: str = Field(description="Id of the feature that made the decision.")


class ConstraintDraft(_Restatement):
    """A constraint the summarizer adds (possibly one merging several it retires), or one it restates."""

    description: str = Field(description="A rule every later feature must follow, one line.")
    feature_id: str = Field(description="Id of the feature it came from, or \"\" if general.")


class FailureDraft(_Answer):
    """A failure the summarizer found in the logs."""

    feature_id: str = Field(description="Id of the feature whose check failed.")
    description: str = Field(description="What failed and the key error, one line.")
    prevention: str = Field(description="How to avoid it, one short line.")


class PreventionUpdate(_Answer):
    """A better prevention for a stored failure."""

    failure_id: str = Field(description="Id of a stored failure, e.g. F12.")
    prevention: str = Field(description="How to avoid it, one short line.")


class SummarizerAnswer(_Answer):
    """The summarizer's structured output (sent to the API as its JSON schema)."""

    summary: str = Field(description="The new running summary; replaces the previous one.")
    new_decisions: list[DecisionDraft] = Field(description="Decisions not already stored.")
    retired_decision_ids: list[str] = Field(description="Ids of stored decisions now superseded.")
    new_constraints: list[ConstraintDraft] = Field(description="Constraints not already active.")
    retired_constraint_ids: list[str] = Field(
        description="Ids of constraints that no longer apply or were merged into a new one."
    )
    new_failures: list[FailureDraft] = Field(
        description="Failures in the logs that failure memory lacks."
    )
    preventions: list[PreventionUpdate] = Field(
        description="Better preventions for stored failures whose prevention is the default."
    )
    retired_failure_ids: list[str] = Field(
        default_factory=list,
        description="Ids of stored failures that no longer teach anything: fixed for good and unlikely to recur.",
    )


@cache
def answer_schema() -> JsonSchema:
    """`SummarizerAnswer`'s JSON schema in the form structured outputs accept (do not mutate)."""
    # Imported here: the SDK takes over a second to import, and only summarizing needs it.
    from anthropic import transform_schema

    # Without the defaults: the SDK would move each into its field's description as "{default: }"
    # or "{default: False}", noise the descriptions already say in words.
    return transform_schema(_without_defaults(SummarizerAnswer.model_json_schema()))


def _without_defaults(schema: JsonSchema) -> JsonSchema:
    """`schema` with every `default` keyword left out, at any depth."""
    cleaned: JsonSchema = {}
    for key, value in schema.items():
        if key == "default":
            continue
        if isinstance(value, dict):
            cleaned[key] = _without_defaults(value)
        elif isinstance(value, list):
            cleaned[key] = [_without_defaults(item) if isinstance(item, dict) else item for item in value]
        else:
            cleaned[key] = value
    return cleaned


SYSTEM_PROMPT = f"""You keep the compressed memory of a software project that an autonomous \
coding agent builds feature by feature. Every feature's prompt receives this memory under a \
hard token budget, so it must be short, factual and current.

You receive the previous running summary, the stored key decisions, failure memory and active \
constraints (each with an id), and the logs of the features completed since the last summary \
(their reported decisions and constraints are already in the stores, and left out of the logs). \
Answer with one JSON object:
- summary: the new running summary, replacing the previous one; at most about \
{SUMMARY_TARGET_WORDS} words, plain lines, most important first: what the project is, its \
structure and conventions, what is done, what failed and why, what to watch next. Keep what \
still matters from the previous summary.
- newDecisions: decisions made in the new features that are not stored yet, one line each, \
with the id of the feature that made them.
- retiredDecisionIds: ids of stored decisions that a later decision superseded.
- newConstraints: rules every later feature must follow that are not active yet.
- retiredConstraintIds: ids of constraints that no longer apply, or that you merged into one \
consolidated constraint given in newConstraints.
- newFailures: failures seen in the logs that failure memory lacks, with a prevention.
- preventions: for stored failures marked (default prevention), a better prevention when the \
logs show what fixed them.
- retiredFailureIds: ids of stored failures that no longer teach anything (fixed for good, \
unlikely to recur); they stop being shown to later features.
A decision or constraint you give that states a stored one again (in any words) carries that \
item's id in "restates", and "replaces": true only if your wording should replace the stored one.
Only list changes. Stored items you do not retire stay as they are, so never repeat them."""


def build_request(
    model: str, stores: ContextStores, outcomes: Sequence[FeatureOutcome], trigger: str
) -> SummarizerRequest:
    """The keyword arguments of `client.messages.create` for one summarization."""
    return {
        "model": model,
        "max_tokens": MAX_ANSWER_TOKENS,
        "system": SYSTEM_PROMPT,
        "messages": [{"role": "user", "content": _user_prompt(stores, outcomes, trigger)}],
        "output_config": {"format": {"type": "json_schema", "schema": answer_schema()}},
    }


def parse_answer(message: object) -> SummarizerAnswer:
    """The validated answer in an SDK `Message`; raises `SummarizerError` when unusable."""
    stop_reason = getattr(message, "stop_reason", None)
    if stop_reason in ("max_tokens", "refusal"):
        raise SummarizerError(f"summarizer answer incomplete (stop_reason {stop_reason})")
    text = "".join(
        getattr(block, "text", "") or ""
        for block in getattr(message, "content", None) or []
        if getattr(block, "type", None) == "text"
    )
    if not text.strip():
        raise SummarizerError("summarizer answer has no text")
    try:
        return SummarizerAnswer.model_validate(json.loads(_strip_fence(text)))
    except json.JSONDecodeError as exc:
        raise SummarizerError(f"summarizer answer is not JSON: {exc.msg} at char {exc.pos}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "answer"
        raise SummarizerError(
            f"summarizer answer does not match the schema ({exc.error_count()} problems; "
            f"{where}: {first['msg']})"
        ) from exc


def _strip_fence(text: str) -> str:
    # Structured output is plain JSON; a fence only appears from servers that ignore the
    # format, and costs nothing to accept.
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.DOTALL)
    return match.group(1) if match else text


def _user_prompt(stores: ContextStores, outcomes: Sequence[FeatureOutcome], trigger: str) -> str:
    summary = stores.summary.summary.strip() or "(none yet)"
    decisions = [f"- [{d.id}] (Feature {d.feature_id}) {d.text}" for d in stores.decisions.decisions]
    failures = [
        f"- [{f.id}] (Feature {f.feature_id}, attempt {f.attempt}) {f.description} -> {f.prevention}"
        + (" (default prevention)" if f.prevention_source == "default" else "")
        for f in stores.failures.failures
    ]
    active = stores.constraints.constraints
    constraints = [f"- [{c.id}] {c.description}" for c in active[:_MAX_LISTED_CONSTRAINTS]]
    if len(active) > _MAX_LISTED_CONSTRAINTS:
        constraints.append(f"- ... and {len(active) - _MAX_LISTED_CONSTRAINTS} more")
    logs = "\n".join(json.dumps(line, ensure_ascii=False) for line in _log_lines(stores, outcomes))
    return "\n\n".join(
        [
            f"Summarization trigger: {trigger}",
            f"## Previous summary\n{summary}",
            "## Key decisions\n" + ("\n".join(decisions) or "(none)"),
            "## Failure memory\n" + ("\n".join(failures) or "(none)"),
            "## Active constraints\n" + ("\n".join(constraints) or "(none)") + _crowded(active),
            "## Features since the last summary (one JSON log a line)\n" + (logs or "(none)"),
        ]
    )


def _crowded(active: Sequence[Any]) -> str:
    """The request to consolidate, when the constraints outgrow their share or near the limit."""
    tokens = sum(estimate_tokens(f"- {c.description}") for c in active)
    if len(active) >= CONSOLIDATE_CONSTRAINTS_AT:
        return (
            f"\nThere are {len(active)} active constraints; at most {MAX_ACTIVE_CONSTRAINTS} are kept, and "
            "beyond that the oldest ones added by the summarizer, then the agents' oldest, are retired "
            "without judgement: consolidate now (new merged constraint + the merged ids retired), and "
            "retire those that no longer apply."
        )
    if tokens > CONSTRAINTS_BUDGET:
        return (
            f"\nThe active constraints take about {tokens} tokens, more than their "
            f"{CONSTRAINTS_BUDGET}-token share of each prompt: consolidate overlapping ones "
            "(new merged constraint + the merged ids retired)."
        )
    return ""


def _log_lines(stores: ContextStores, outcomes: Sequence[FeatureOutcome]) -> list[JsonObject]:
    """The outcomes as the prompt shows them, without what the stores listed above already say:
    the reports were merged into the stores before this call."""
    stored_decisions = {normalized_key(d.text) for d in stores.decisions.decisions}
    stored_constraints = {normalized_key(c.description) for c in stores.constraints.constraints}
    lines = []
    for outcome in outcomes:
        line = outcome.for_prompt()
        report = line.get("report")
        if report:
            report["decisions"] = [
                d for d in report["decisions"] if normalized_key(clip_item(d, DECISION_TOKENS)) not in stored_decisions
            ]
            report["constraints"] = [
                c for c in report["constraints"]
                if normalized_key(clip_item(c, CONSTRAINT_TOKENS)) not in stored_constraints
            ]
            line["report"] = {key: value for key, value in report.items() if value}
            if not line["report"]:
                del line["report"]
        lines.append(line)
    return lines
