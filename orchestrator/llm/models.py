"""Default model ids, read from the installed SDK's own list of models."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from shared_base.model_ids import DEFAULT_SUMMARIZER_MODEL

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
    """The newest Sonnet the SDK lists; claude-sonnet-4-5 when it lists none."""
    return newest_model("sonnet", "claude-sonnet-4-5")


def default_summarizer_model() -> str:
    """The newest Haiku the SDK lists; the Context Agent's own default when it lists none."""
    return newest_model("haiku", DEFAULT_SUMMARIZER_MODEL)


# ---- what each model can do ---------------------------------------------------------------
# Extended thinking by model generation, from Anthropic's extended-thinking docs:
# - budgeted thinking (`{"type": "enabled", "budget_tokens": N}`) on Claude 3.7 and Claude 4
#   up to 4.6; 4.7 and later refuse it (400) and take only adaptive thinking; on 4.6 (and
#   Mythos Preview) a budget is deprecated in favour of adaptive thinking, so a budget asked
#   for is sent as adaptive there (`prefers_adaptive`);
# - adaptive thinking (`{"type": "adaptive"}`, the model decides how much) from 4.6 on, with
#   thinking between tool calls built in;
# - thinking between tool calls on the budgeted 4.x models through the beta header below
#   (Claude 3.7 has none).
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
MIN_THINKING_BUDGET = 1024  # the API's floor for budget_tokens
_GENERATION = re.compile(r"claude-(?:(?P<family>[a-z]+)-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?|(?P<old>\d)-(?P<oldminor>\d)-(?P<oldfamily>[a-z]+))(?![0-9])")


class ThinkingSupport:
    """Which kinds of thinking a model takes (see the table above)."""

    __slots__ = ("adaptive", "budget", "interleaved_beta", "prefers_adaptive")

    def __init__(self, *, budget: bool, adaptive: bool, interleaved_beta: bool, prefers_adaptive: bool = False) -> None:
        self.budget, self.adaptive, self.interleaved_beta = budget, adaptive, interleaved_beta
        self.prefers_adaptive = prefers_adaptive

    @property
    def any(self) -> bool:
        return self.budget or self.adaptive


NO_THINKING = ThinkingSupport(budget=False, adaptive=False, interleaved_beta=False)


def model_generation(model: str) -> tuple[int, int] | None:
    """(major, minor) of a Claude model id in any provider's spelling: `claude-sonnet-4-5`,
    `anthropic.claude-sonnet-4-5-20250929-v1:0`, `claude-sonnet-4-5@20250929`, `claude-3-7-sonnet-...`."""
    match = _GENERATION.search(model)
    if match is None:
        return None
    if match["old"]:
        return int(match["old"]), int(match["oldminor"])
    minor = match["minor"]
    # A dated id such as claude-sonnet-4-20250514: the date is no minor version.
    return int(match["major"]), int(minor) if minor else 0


# Models whose ids carry no generation.
_THINKING_EXCEPTIONS = {
    "claude-mythos-preview": ThinkingSupport(budget=True, adaptive=True, interleaved_beta=False, prefers_adaptive=True)
}


def thinking_support(model: str) -> ThinkingSupport:
    """What thinking `model` takes; a model of unknown generation takes none."""
    for name, support in _THINKING_EXCEPTIONS.items():
        if name in model:
            return support
    generation = model_generation(model)
    if generation is None or generation < (3, 7):
        return NO_THINKING
    if generation < (4, 0):
        return ThinkingSupport(budget=True, adaptive=False, interleaved_beta=False)
    if generation < (4, 6):
        return ThinkingSupport(budget=True, adaptive=False, interleaved_beta=True)
    if generation < (4, 7):
        return ThinkingSupport(budget=True, adaptive=True, interleaved_beta=True, prefers_adaptive=True)
    return ThinkingSupport(budget=False, adaptive=True, interleaved_beta=False)


def thinking_problem(model: str, setting: str) -> str | None:
    """Why `model` cannot think as `setting` ("auto" or a budget) asks, or None when it can."""
    support = thinking_support(model)
    if not support.any:
        return (
            f"model {model} does not support extended thinking; use --thinking off, or a model that "
            "does (Claude 3.7 Sonnet, Claude 4 and later)"
        )
    if setting.isdigit() and not support.budget:
        return (
            f"model {model} takes no thinking budget (it decides how much to think itself); "
            "use --thinking auto, or --thinking off"
        )
    return None
