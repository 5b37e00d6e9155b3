"""Model ids as each provider names them: Anthropic's API, Amazon Bedrock, Google Vertex AI.

Users name models as Anthropic does (`claude-sonnet-4-5`); Bedrock and Vertex have their own
ids for the same models. The table below maps the ones we know; an id already in the
provider's own form (`anthropic.` / `us.anthropic.` / an ARN on Bedrock, `@` on Vertex) is
passed through, so a model missing here can always be used by its provider-native id.
"""

from __future__ import annotations

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


class UnknownModelMapping(ValueError):
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


def native_model_id(provider: str, model: str) -> str:
    """`model` as `provider` names it; raises `UnknownModelMapping` when no mapping is known."""
    if provider == "anthropic" or is_native(provider, model):
        return model
    known = _NATIVE_IDS.get(_ALIASES.get(model, model))
    if known is not None:
        bedrock, vertex = known
        if provider == "bedrock":
            return bedrock
        if provider == "vertex":
            return vertex  # for the newest models, the same name as Anthropic's
    raise UnknownModelMapping(provider, model)
