"""`orchestrate context --count`: the API's own count of a feature's first request.

The estimate `context` prints is the program's own; with credentials at hand the API's
count_tokens endpoint gives the exact figure for the same request (model, system prompt,
tools, messages), free of charge. Without credentials, or on Bedrock (which has no
count_tokens), the estimate stands and a line says why.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.config import RunConfig
from orchestrator.json_types import RequestDraft
from orchestrator.store.disk.no_follow import open_no_follow
from orchestrator.user_errors import UsageError
from shared_base.files import LinkRefused

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import MessageCountTokensParams


def counted_tokens(config: RunConfig, request: RequestDraft) -> tuple[int | None, str]:
    """(input tokens as the API counts them, "") or (None, why there is no count)."""
    if config.provider == "bedrock":
        return None, "Bedrock has no count_tokens endpoint"
    # The SDK takes seconds to import: only a count needs it.
    import anthropic

    from orchestrator.llm.endpoint.providers import native_model_id
    from orchestrator.llm.endpoint.sdk import make_sdk_client
    from orchestrator.llm.errors import ClientSetupError
    from orchestrator.safety.credentials.redaction import redact

    try:
        sdk = make_sdk_client(config.client_settings(), models=("model",))
    except ClientSetupError as err:
        return None, f"no credentials ({str(err).split(':')[0]})"
    counted: MessageCountTokensParams = {
        "model": native_model_id(config.provider, config.model),
        "system": request["system"], "tools": request["tools"], "messages": request["messages"],
    }
    try:
        result = sdk.messages.count_tokens(**counted)
    except anthropic.APIError as err:
        return None, f"count_tokens failed: {redact(str(err)).splitlines()[0][:200]}"
    finally:
        sdk.close()
    return int(result.input_tokens), ""


def count_line(config: RunConfig, request: RequestDraft, estimate: int) -> str:
    """The line `context --count` adds under the estimate."""
    try:
        counted, why = counted_tokens(config, request)
    except (UsageError, ValueError) as err:
        counted, why = None, str(err)
    if counted is None:
        return f"whole first request (count_tokens): not counted, {why}; the estimate stands\n"
    difference = (estimate - counted) / counted * 100 if counted else 0.0
    return f"whole first request (count_tokens, {config.model}): {counted} tokens; the estimate is {difference:+.1f}%\n"


def last_run_model(events_log: Path) -> str | None:
    """The agent model of the last run in `events_log` (its `run_started` event), or None."""
    model = None
    try:
        with io.TextIOWrapper(open_no_follow(events_log), encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if '"run_started"' not in line:
                    continue
                try:
                    found = json.loads(line).get("model")
                except (ValueError, AttributeError):
                    continue
                model = found if isinstance(found, str) and found else model
    except LinkRefused:
        raise
    except OSError:
        return None
    return model
