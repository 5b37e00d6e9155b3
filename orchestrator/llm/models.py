"""Default model ids, read from the installed SDK's own list of models."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from context_agent import DEFAULT_SUMMARIZER_MODEL

_MODEL_ID = re.compile(r'"(claude-[a-z0-9.-]+)"')
_VERSIONED = re.compile(r"^claude-(?P<family>[a-z]+)-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?$")


def known_models() -> list[str]:
    """Every model id the installed `anthropic` SDK lists in `anthropic.types.model.Model`.

    Read from the SDK's source rather than imported: importing `anthropic` costs seconds,
    and commands like `validate` and `--dry-run` should not pay for it.
    """
    spec = importlib.util.find_spec("anthropic")
    if spec is None or not spec.submodule_search_locations:
        return []
    source = Path(next(iter(spec.submodule_search_locations))) / "types" / "model.py"
    try:
        text = source.read_text(encoding="utf-8")
    except OSError:
        return []
    return _MODEL_ID.findall(text)


def newest_model(family: str, fallback: str) -> str:
    """The newest undated model id of a family ("sonnet", "haiku", "opus") in the SDK's list."""
    best: tuple[int, int] | None = None
    best_id = fallback
    for model_id in known_models():
        match = _VERSIONED.match(model_id)
        if not match or match["family"] != family:
            continue
        version = (int(match["major"]), int(match["minor"] or 0))
        if best is None or version > best:
            best, best_id = version, model_id
    return best_id


def default_agent_model() -> str:
    return newest_model("sonnet", "claude-sonnet-4-5")


def default_summarizer_model() -> str:
    """The newest Haiku the SDK lists; the Context Agent's own default when it lists none."""
    return newest_model("haiku", DEFAULT_SUMMARIZER_MODEL)
