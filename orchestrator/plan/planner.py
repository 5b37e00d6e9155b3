"""Phase 1 of `orchestrate plan`: the description becomes a valid native spec.

Chunk by chunk, the planner is forced to answer with the `submit_spec` tool. Each answer is
merged with the features already planned (`chunks.merge_features`) and validated by
`orchestrator.spec.load.parse_spec`, the code that checks every spec, plus the planner's own
rules (a check command per feature, the `--features` bound). An invalid answer is sent back
with its located problems, at most `max_repairs` times; then `PlanInvalid` is raised and
nothing is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from orchestrator.json_types import ApiRequest, JsonObject
from orchestrator.llm.client import ModelClient
from orchestrator.llm.conversation import user_text
from orchestrator.plan.chunks import RawFeature, dependency_order, merge_features, split_description
from orchestrator.plan.plan_prompts import PLANNER_SYSTEM, planner_prompt, repair_prompt
from orchestrator.plan.schema import SPEC_TOOL, spec_tool
from orchestrator.plan.structured import ForcedToolConversation, StructuredAnswer, forced_request
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.spec.load import parse_spec
from orchestrator.spec.spec_errors import SpecError
from orchestrator.user_errors import OrchestrateError

DEFAULT_CHUNK_CHARS = 24_000
DEFAULT_MAX_REPAIRS = 2
_LOCATED = re.compile(r"^features\[(\d+)\]")


class PlanInvalid(OrchestrateError):
    """The planner's answer stayed invalid after every repair; nothing was written."""


@dataclass
class PlannerSettings:
    """How phase 1 runs."""

    model: str
    max_tokens: int
    max_features: int | None = None
    max_chunk_chars: int = DEFAULT_CHUNK_CHARS
    max_repairs: int = DEFAULT_MAX_REPAIRS
    file_map: str = ""
    """The existing project's files (`file_map.project_file_map`)."""


@dataclass
class PlannedSpec:
    """Phase 1's result: a valid spec, and what it took to get it."""

    spec: FeatureSpec
    chunks: int = 1
    repairs: int = 0
    dropped: list[str] = field(default_factory=list)
    problems_seen: list[str] = field(default_factory=list)


def planner_requests(description: str, settings: PlannerSettings, runner: str | None) -> list[ApiRequest]:
    """The first request of every chunk, as `--dry-run` prints them (no call is made)."""
    chunks = split_description(description, settings.max_chunk_chars)
    requests = []
    for part, chunk in enumerate(chunks, 1):
        text = _prompt(chunk, part, len(chunks), [], settings.file_map, _share(settings.max_features, len(chunks)), runner)
        requests.append(forced_request(settings.model, settings.max_tokens, PLANNER_SYSTEM, spec_tool(), [user_text(text)]))
    return requests


def plan_spec(
    client: ModelClient, settings: PlannerSettings, description: str, *, runner: str | None,
    default_project: str, on_progress: Callable[[str], None] = lambda _m: None,
) -> PlannedSpec:
    """Plan `description` into a valid spec. Raises `PlanInvalid`, or the client's exceptions."""
    chunks = split_description(description, settings.max_chunk_chars)
    kept: list[RawFeature] = []
    top: JsonObject = {"project": default_project, "description": ""}
    repairs, dropped_all, seen = 0, list[str](), list[str]()
    for part, chunk in enumerate(chunks, 1):
        on_progress(f"planning part {part} of {len(chunks)}")
        conversation = ForcedToolConversation(client, settings.model, PLANNER_SYSTEM, spec_tool(), settings.max_tokens)
        limit = _share(settings.max_features, len(chunks))
        answer = conversation.ask(_prompt(chunk, part, len(chunks), kept, settings.file_map, limit, runner))
        for repair in range(settings.max_repairs + 1):
            merged, problems, dropped = _check(answer, kept, top, limit)
            if not problems:
                kept = merged
                dropped_all += dropped
                if part == 1 and answer.data:
                    top = _settings_of(answer.data, top)
                break
            seen += problems
            if repair == settings.max_repairs:
                raise PlanInvalid(
                    f"the planner's answer for part {part} was still invalid after {repair} repair(s):\n  "
                    + "\n  ".join(problems[:20])
                )
            on_progress(f"repairing part {part}: {len(problems)} problem(s)")
            repairs += 1
            answer = conversation.reject(answer, repair_prompt(problems))
    spec = _validated({**top, "features": dependency_order(kept)})
    return PlannedSpec(spec, chunks=len(chunks), repairs=repairs, dropped=dropped_all, problems_seen=seen)


def _prompt(chunk: str, part: int, parts: int, kept: list[RawFeature], file_map: str, limit: int | None,
            runner: str | None) -> str:
    return planner_prompt(chunk, part=part, parts=parts, planned=kept, file_map=file_map, max_features=limit, runner=runner)


def _share(total: int | None, parts: int) -> int | None:
    return None if total is None else max(1, -(-total // parts))


def _settings_of(data: JsonObject, top: JsonObject) -> JsonObject:
    chosen = dict(top)
    for key in ("project", "description"):
        if isinstance(data.get(key), str) and data[key].strip():
            chosen[key] = data[key]
    return chosen


def _check(
    answer: StructuredAnswer, kept: list[RawFeature], top: JsonObject, limit: int | None
) -> tuple[list[RawFeature], list[str], list[str]]:
    """The merged features, the answer's problems (located in the answer), what was dropped."""
    data = answer.data
    if answer.cut_off:  # whatever it holds is incomplete: say why, not what is missing
        return kept, [f"the answer was cut off at max_tokens before its {SPEC_TOOL} call was complete: "
                      "plan fewer, shorter features"], []
    if data is None:
        return kept, [f"no {SPEC_TOOL} call with an object input"], []
    new = data.get("features")
    if not isinstance(new, list) or not new:
        return kept, ["features: must be a non-empty list of features"], []
    new = [dict(f) if isinstance(f, dict) else f for f in new]
    merged, dropped = merge_features([dict(f) for f in kept], new)
    origin = {id(f): i for i, f in enumerate(new)}
    where = {m: origin.get(id(f), m) for m, f in enumerate(merged) if m >= len(kept)}
    problems = _own_rules(new, limit)
    try:
        _validated({**_settings_of(data, top), "features": merged})
    except SpecError as err:
        problems += [_relocate(p, where) for p in err.problems]
    return merged, problems, dropped


def _own_rules(new: list[Any], limit: int | None) -> list[str]:
    problems = []
    if limit is not None and len(new) > limit:
        problems.append(f"features: {len(new)} features; plan at most {limit} (merge the smallest ones)")
    for i, feature in enumerate(new):
        if isinstance(feature, dict) and not (isinstance(feature.get("verify"), str) and feature["verify"].strip()):
            problems.append(f"features[{i}].verify: required here (the command that checks this feature)")
    return problems


def _relocate(problem: str, where: dict[int, int]) -> str:
    match = _LOCATED.match(problem)
    if match is None or int(match.group(1)) not in where:
        return problem
    return f"features[{where[int(match.group(1))]}]" + problem[match.end():]


def _validated(candidate: JsonObject) -> FeatureSpec:
    """`candidate` checked exactly as a spec file is. Raises `SpecError`."""
    raw = json.dumps(candidate, ensure_ascii=False).encode("utf-8")
    return parse_spec(raw, source="the planner's answer", default_project=str(candidate.get("project", "project"))).spec
