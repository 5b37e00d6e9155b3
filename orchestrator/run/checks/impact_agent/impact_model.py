"""The Impact Agent's optional model call (`impact_model`, off unless set): a small model reads
the pending features' text and the project's file list and names the files each will change,
where the deterministic prediction (`impact.predict`) knows only what the text spells out.

One forced tool call per batch of features at the run's start, at most `MAX_CALLS` a run,
through the run's `ModelClient`: reserved, capped by `--max-cost` and booked like every call
(purpose `impact`, with the run's other calls that are not an agent's). Its files go to
`Prediction.by_model`, beside the deterministic lists, which are always there; a call the API
refuses or cannot answer costs a warning and leaves them as they were.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from orchestrator.json_types import JsonSchema
from orchestrator.llm.client import ModelClient
from orchestrator.llm.errors import ApiUnavailable, ModelRequestRejected
from orchestrator.run.checks.guard.footprint import walked_dir
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.records import Prediction
from orchestrator.store.run_state import RunState

IMPACT_TOOL = "predict_footprints"
BATCH = 40  # features per call
MAX_CALLS = 5  # calls per run; features past them keep the deterministic prediction only
MAX_TOKENS = 2048
MAX_LISTED_FILES = 300  # the project's files shown to the model
MAX_FILES_PER_FEATURE = 12
MAX_TEXT_CHARS = 400  # of each feature's description and criteria
SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"features": {"type": "array", "items": {
        "type": "object",
        "properties": {"id": {"type": "string"}, "files": {"type": "array", "items": {"type": "string"}}},
        "required": ["id", "files"],
    }}},
    "required": ["features"],
}
SYSTEM = ("You predict which files of a software project each planned feature will create or change. "
          "Answer with relative paths only, through the tool; name no file a feature will only read.")


def project_files(root: Path) -> list[str]:
    """Up to `MAX_LISTED_FILES` of the project's files, relative, sorted (tools' caches and ours left out)."""
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        relative = os.path.relpath(current, root)
        prefix = "" if relative == "." else relative + "/"
        dirs[:] = sorted(d for d in dirs if walked_dir(prefix + d))
        found += [prefix + name for name in sorted(files)]
        if len(found) >= MAX_LISTED_FILES:
            break
    return found[:MAX_LISTED_FILES]


def _prompt(features: list[Feature], files: list[str]) -> str:
    listed = "\n".join(files) or "(no files yet)"
    wanted = [{"id": f.id, "text": " ".join([f.description, *f.acceptance])[:MAX_TEXT_CHARS]} for f in features]
    return (f"The project's files:\n{listed}\n\nThe planned features:\n{json.dumps(wanted, ensure_ascii=False)}\n\n"
            f"Call `{IMPACT_TOOL}` with the files each feature will create or change.")


def _usable(path: object) -> str | None:
    if not isinstance(path, str) or not path or len(path) > 300 or path.startswith(("/", "~")):
        return None
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    parts = path.split("/")
    return None if ".." in parts or not parts[0] or parts[0] in (".git", ".autonomous") else "/".join(parts)


def _apply(answer: object, features: list[Feature], state: RunState) -> None:
    ids = {feature.id for feature in features}
    items = answer.get("features") if isinstance(answer, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("id") not in ids or not isinstance(item.get("files"), list):
            continue
        files = {path for path in map(_usable, item["files"]) if path}
        entry = state.feature(item["id"])
        prediction = entry.prediction or Prediction()
        prediction.by_model = sorted(files - set(prediction.writes))[:MAX_FILES_PER_FEATURE]
        entry.prediction = prediction


def model_predictions(
    client: ModelClient, model: str, spec: FeatureSpec, state: RunState, ids: list[str], root: Path,
    warn: Callable[[str], None],
) -> int:
    """Ask `model` for the pending features' files; the calls made. LimitReached (a cap) stops the run as any call's does."""
    pending = [spec.feature(fid) for fid in ids if state.feature(fid).status == "pending"]
    if client.sdk is None or not pending:
        return 0
    files = project_files(root)
    calls = 0
    for start in range(0, min(len(pending), BATCH * MAX_CALLS), BATCH):
        batch = pending[start:start + BATCH]
        try:
            result = client.create(
                purpose="impact", model=model, max_tokens=MAX_TOKENS, system=SYSTEM,
                messages=[{"role": "user", "content": _prompt(batch, files)}],
                tools=[{"name": IMPACT_TOOL, "description": "The files each feature will create or change.",
                        "input_schema": SCHEMA}],
                tool_choice={"type": "tool", "name": IMPACT_TOOL},
            )
        except (ApiUnavailable, ModelRequestRejected) as err:
            warn(f"the impact model's prediction failed ({err}); the run goes on with the deterministic one")
            return calls
        calls += 1
        for block in result.message.content:
            if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == IMPACT_TOOL:
                _apply(getattr(block, "input", None), batch, state)
    return calls
