"""Model ids as each provider names them: Anthropic's API, Amazon Bedrock, Google Vertex AI.

Users name models as Anthropic does (`claude-sonnet-4-5`); Bedrock and Vertex have their own
ids for the same models. The table below maps the ones we know; every other model the
installed SDK lists from Claude 4.6 on is named as Anthropic has named those since 4.6
(`anthropic.<id>` on Bedrock, `<id>` on Vertex), so the defaults, read from the SDK's list,
work on every provider. A model neither covers falls back to the newest mapped model of its
family, with a notice (`resolve_model`). An id already in the provider's own form
(`anthropic.` / `us.anthropic.` / an ARN on Bedrock, `@` on Vertex) is passed through, so any
model can always be used by its provider-native id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from orchestrator.llm.models import known_models, model_generation
from orchestrator.user_errors import OrchestrateError

# Anthropic id -> (Bedrock model id, Vertex AI model id), from the providers' model lists.
_NATIVE_IDS: dict[str, tuple[str, str]] = {
    "claude-opus-4-6": ("anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
    "claude-sonnet-4-6": ("anthropic.claude-sonnet-4-6", "claude-sonnet-4-6"),
    "claude-opus-4-5": ("anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5@20251101"),
    "claude-haiku-4-5": ("anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5@20251001"),
    "claude-sonnet-4-5": ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5@20250929"),
    "claude-opus-4-1": ("anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1@20250805"),
    "claude-opus-4-0": ("anthropic.claude-opus-4-20250514-v1:0", "claude-opus-4@20250514"),
    "claude-sonnet-4-0": ("anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4@20250514"),
    "claude-3-7-sonnet-latest": ("anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet@20250219"),
    "claude-3-5-haiku-latest": ("anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku@20241022"),
}
# Dated Anthropic ids name the same models.
_ALIASES = {
    "claude-opus-4-5-20251101": "claude-opus-4-5",
    "claude-haiku-4-5-20251001": "claude-haiku-4-5",
    "claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
    "claude-opus-4-1-20250805": "claude-opus-4-1",
    "claude-opus-4-20250514": "claude-opus-4-0",
    "claude-sonnet-4-20250514": "claude-sonnet-4-0",
    "claude-3-7-sonnet-20250219": "claude-3-7-sonnet-latest",
    "claude-3-5-haiku-20241022": "claude-3-5-haiku-latest",
}
_BEDROCK_NATIVE = ("anthropic.", "arn:aws:bedrock:")
_BEDROCK_REGION_PREFIXES = ("us.", "eu.", "apac.", "au.", "jp.", "global.", "us-gov.")
_EXAMPLE = {"bedrock": "anthropic.claude-sonnet-4-5-20250929-v1:0", "vertex": "claude-sonnet-4-5@20250929"}


class UnknownModelMapping(OrchestrateError):
    """No provider-native id is known for a model; the message says how to give one."""

    def __init__(self, provider: str, model: str, flag: str = "--model") -> None:
        super().__init__(
            f"no {provider} model id is known for {model!r}: pass {provider}'s own id instead, "
            f"e.g. {flag} {_EXAMPLE.get(provider, model)}"
        )


def is_native(provider: str, model: str) -> bool:
    """True when `model` is already in `provider`'s own form."""
    if provider == "bedrock":
        return model.startswith(_BEDROCK_NATIVE) or (
            model.startswith(_BEDROCK_REGION_PREFIXES) and ".anthropic." in f".{model}"
        )
    if provider == "vertex":
        return "@" in model
    return True


@dataclass(frozen=True)
class ResolvedModel:
    """A model as a provider names it, and the notice to show when another model stands in."""

    native: str
    notice: str | None = None


# The SDK names models from 4.6 on without a date, and the providers have used the same names.
_UNDATED_FROM = (4, 6)
_DATED = re.compile(r"-\d{8}$")
_FAMILY = re.compile(r"^claude-(?P<family>[a-z]+)-\d")


@cache
def _mapped() -> dict[str, tuple[str, str]]:
    """Every model with a provider id: the table, then the SDK's undated ids from 4.6 on."""
    mapped = dict(_NATIVE_IDS)
    for model in known_models():
        generation = model_generation(model)
        recent = generation is None or generation >= _UNDATED_FROM  # a preview's id carries no generation
        if model not in mapped and model not in _ALIASES and recent and not _DATED.search(model):
            mapped[model] = (f"anthropic.{model}", model)
    return mapped


def _pick(provider: str, ids: tuple[str, str]) -> str:
    return ids[0] if provider == "bedrock" else ids[1]


def resolve_model(provider: str, model: str) -> ResolvedModel:
    """`model` as `provider` names it, or the newest mapped model of its family with a notice;
    raises `UnknownModelMapping` when neither is known."""
    if provider == "anthropic" or is_native(provider, model):
        return ResolvedModel(model)
    mapped = _mapped()
    known = mapped.get(_ALIASES.get(model, model))
    if known is not None:
        return ResolvedModel(_pick(provider, known))
    family = _FAMILY.match(model)
    same_family = [m for m in mapped if family and _FAMILY.match(m) and _FAMILY.match(m)["family"] == family["family"]]  # type: ignore[index]
    if not same_family:
        raise UnknownModelMapping(provider, model)
    newest = max(same_family, key=lambda m: model_generation(m) or (0, 0))
    return ResolvedModel(
        _pick(provider, mapped[newest]),
        f"no {provider} model id is known for {model!r}: using {newest} ({_pick(provider, mapped[newest])}) instead; "
        f"pass {provider}'s own id to choose another",
    )


def native_model_id(provider: str, model: str) -> str:
    """`model` as `provider` names it (see `resolve_model`); raises `UnknownModelMapping` when no mapping is known."""
    return resolve_model(provider, model).native
