"""Request validation with the API's rules and close to its wording.

A request the real API would refuse must be refused here too, or a bug in the orchestrator
(a dangling ``tool_use``, a fifth cache breakpoint, a tool without a schema) would pass every
test and fail in production. Each rule raises `ApiError` 400 ``invalid_request_error`` with a
message that names the field by its path, as the API does (``messages.2.content.0: ...``).
"""

from __future__ import annotations

from typing import Any

from fake_messages_api.api_errors import invalid_request
from fake_messages_api.billing.prompt import cache_controls
from fake_messages_api.request_validation import sdk_facts
from fake_messages_api.request_validation.validation_tools import check_tool_choice, check_tool_pairing, check_tools

MAX_CACHE_BREAKPOINTS = 4
DEFAULT_MAX_OUTPUT_TOKENS = 128_000
_ROLES = ("user", "assistant")
# With one of these betas a conversation may hold `system`-role turns of text (Claude Code sends
# its environment as one); without them the API refuses them, and Claude Code resends without.
# Claude Code names per-turn control for the models it knows, and mid-conversation tool changes
# (its system turns also carry tool additions and removals) for any model, the demo's included.
SYSTEM_TURNS_BETAS = ("per-turn-control-2026-07-01", "mid-conversation-tool-changes-2026-07-01",
                      "mid-conversation-system-2026-04-07")


def validate_request(
    body: Any,
    *,
    endpoint: str = "messages",
    beta: bool = False,
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
    betas: tuple[str, ...] = (),
) -> None:
    """Raise `ApiError` (400) if the API would refuse `body` at `endpoint`.

    `endpoint` is ``messages`` or ``count_tokens`` (which takes no ``max_tokens``); `betas` are
    the request's ``anthropic-beta`` names.
    """
    if not isinstance(body, dict):
        raise invalid_request("Request body must be a JSON object.")
    # Sampling settings the installed SDK no longer types but the API still takes (Claude Code sends
    # `temperature` when thinking is off); with thinking on, `thinking.py` refuses them as the API does.
    allowed = sdk_facts.request_params(endpoint, beta) | ({"temperature", "top_k", "top_p"} if endpoint == "messages" else set())
    for key in body:
        if key not in allowed:
            raise invalid_request(f"{key}: Extra inputs are not permitted")
    _check_model(body)
    if endpoint == "messages":
        _check_max_tokens(body, max_output_tokens)
        if "stream" in body and not isinstance(body["stream"], bool):
            raise invalid_request("stream: Input should be a valid boolean")
    tool_names = check_tools(body.get("tools"))
    _check_system(body.get("system"))
    roles = (*_ROLES, "system") if set(SYSTEM_TURNS_BETAS) & set(betas) else _ROLES
    _check_messages(body.get("messages"), has_tools=bool(tool_names), roles=roles)
    check_tool_choice(body.get("tool_choice"), tool_names)
    _check_cache_control(body)
    _check_output_config(body.get("output_config"))


def _check_model(body: dict[str, Any]) -> None:
    if "model" not in body:
        raise invalid_request("model: Field required")
    if not isinstance(body["model"], str) or not body["model"].strip():
        raise invalid_request("model: Input should be a non-empty string")


def _check_max_tokens(body: dict[str, Any], limit: int) -> None:
    if "max_tokens" not in body:
        raise invalid_request("max_tokens: Field required")
    value = body["max_tokens"]
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_request("max_tokens: Input should be a valid integer")
    if value < 1:
        raise invalid_request("max_tokens: Input should be greater than or equal to 1")
    if value > limit:
        raise invalid_request(
            f"max_tokens: {value} > {limit}, which is the maximum allowed number of output "
            f"tokens for {body.get('model')}"
        )



def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise invalid_request("system: Input should be a valid string or list of text blocks")
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise invalid_request(f"system.{i}.type: Input should be 'text'")
        if not isinstance(block.get("text"), str) or not block["text"]:
            raise invalid_request(f"system.{i}.text: text content blocks must be non-empty")


def _check_messages(messages: Any, *, has_tools: bool, roles: tuple[str, ...]) -> None:
    if messages is None:
        raise invalid_request("messages: Field required")
    if not isinstance(messages, list):
        raise invalid_request("messages: Input should be a valid list")
    if not messages:
        raise invalid_request("messages: at least one message is required")
    for i, message in enumerate(messages):
        _check_message(message, i, last=i == len(messages) - 1, roles=roles)
    if messages[0]["role"] != "user":
        raise invalid_request('messages: first message must use the "user" role')
    check_tool_pairing(messages, has_tools)


def _check_message(message: Any, i: int, *, last: bool, roles: tuple[str, ...]) -> None:
    where = f"messages.{i}"
    if not isinstance(message, dict):
        raise invalid_request(f"{where}: Input should be a valid dictionary")
    if message.get("role") not in roles:
        raise invalid_request(f"{where}.role: Input should be {' or '.join(repr(r) for r in roles)}")
    # A system turn may set the next reply's effort (per-turn control); other turns hold content only.
    extra = set(message) - {"role", "content"} - ({"output_config"} if message["role"] == "system" else set())
    if "output_config" in message and not extra:
        _check_output_config(message["output_config"])
    if extra:
        raise invalid_request(f"{where}.{sorted(extra)[0]}: Extra inputs are not permitted")
    if "content" not in message:
        raise invalid_request(f"{where}.content: Field required")
    content = message["content"]
    empty_allowed = last and message["role"] == "assistant"
    if isinstance(content, str):
        if not content and not empty_allowed:
            raise invalid_request(
                f"{where}: all messages must have non-empty content except for the optional "
                "final assistant message"
            )
        return
    if not isinstance(content, list):
        raise invalid_request(f"{where}.content: Input should be a valid string or list")
    if not content and not empty_allowed:
        raise invalid_request(
            f"{where}: all messages must have non-empty content except for the optional "
            "final assistant message"
        )
    for j, block in enumerate(content):
        _check_block(block, f"{where}.content.{j}", message["role"])


def _check_block(block: Any, where: str, role: str) -> None:
    if not isinstance(block, dict):
        raise invalid_request(f"{where}: Input should be a valid dictionary")
    block_type = block.get("type")
    if block_type not in sdk_facts.content_block_types():
        raise invalid_request(f"{where}: Input tag '{block_type}' found using 'type' is not valid")
    if role == "system" and block_type != "text":
        raise invalid_request(f"{where}: system messages may only hold text blocks")
    if block_type == "text":
        if not isinstance(block.get("text"), str):
            raise invalid_request(f"{where}.text.text: Field required")
        if not block["text"]:
            raise invalid_request(f"{where}.text: text content blocks must be non-empty")
    elif block_type == "tool_use":
        if role != "assistant":
            raise invalid_request(f"{where}: tool_use blocks may only appear in assistant messages")
        if not isinstance(block.get("id"), str) or not block["id"]:
            raise invalid_request(f"{where}.tool_use.id: Field required")
        if not isinstance(block.get("name"), str) or not block["name"]:
            raise invalid_request(f"{where}.tool_use.name: Field required")
        if not isinstance(block.get("input"), dict):
            raise invalid_request(f"{where}.tool_use.input: Input should be a valid dictionary")
    elif block_type == "tool_result":
        if role != "user":
            raise invalid_request(f"{where}: tool_result blocks may only appear in user messages")
        if not isinstance(block.get("tool_use_id"), str):
            raise invalid_request(f"{where}.tool_result.tool_use_id: Field required")
        content = block.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise invalid_request(f"{where}.tool_result.content: Input should be a valid string or list")
        if isinstance(content, list):
            for k, inner in enumerate(content):
                if not isinstance(inner, dict) or "type" not in inner:
                    raise invalid_request(f"{where}.tool_result.content.{k}: Input should be a content block")
                if inner["type"] == "text" and not inner.get("text"):
                    raise invalid_request(
                        f"{where}.tool_result.content.{k}.text: text content blocks must be non-empty"
                    )
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise invalid_request(f"{where}.tool_result.is_error: Input should be a valid boolean")



def _check_cache_control(body: dict[str, Any]) -> None:
    markers = cache_controls(
        [body.get("tools"), body.get("system"), body.get("messages")]
    )
    if isinstance(body.get("cache_control"), dict):
        markers.append(body["cache_control"])
    if len(markers) > MAX_CACHE_BREAKPOINTS:
        raise invalid_request(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(markers)}."
        )
    seen_short = False
    for marker in markers:
        if marker.get("type") != "ephemeral":
            raise invalid_request("cache_control.type: Input should be 'ephemeral'")
        ttl = marker.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            raise invalid_request("cache_control.ttl: Input should be '5m' or '1h'")
        # The API requires longer-lived entries before shorter ones in the prompt.
        if ttl == "1h" and seen_short:
            raise invalid_request(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block."
            )
        seen_short = seen_short or ttl == "5m"


def _check_output_config(config: Any) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise invalid_request("output_config: Input should be a valid dictionary")
    fmt = config.get("format")
    if fmt is None:
        return
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        raise invalid_request("output_config.format.type: Input should be 'json_schema'")
    if not isinstance(fmt.get("schema"), dict):
        raise invalid_request("output_config.format.schema: Field required")
