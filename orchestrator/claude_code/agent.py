"""`--agent claude-code`: each attempt is one fresh Claude Code session through the Agent SDK.

The feature job hands it what it hands the built-in loop (`run.attempt.agent_seam.Agent`): the
prompt with the same sections, the attempt's tool context (workspace, sandbox, variables,
protected files), model and turn limit. The session runs on an event loop of the job's own
thread; the run's stop switch (Ctrl-C under `--jobs N`, a limit, an error) or an interrupt in the
main thread cancels it, and the launch stops whatever the CLI left running before the
interrupt goes on (exit 130, and a resumed run makes the attempt again).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKError, CLINotFoundError, query

from orchestrator.claude_code.launch import ApiEndpoint, CliLaunch
from orchestrator.claude_code.options import SessionSettings, session_options
from orchestrator.claude_code.report_server import ReportInbox, report_server
from orchestrator.claude_code.stream import StreamRecorder
from orchestrator.json_types import ApiMessage
from orchestrator.llm.client import ModelClient
from orchestrator.run.attempt.agent_loop import AgentSession, AttemptOutcome
from orchestrator.run.attempt.feature_prompt import appended_system_prompt
from orchestrator.spec.load import FeatureSpec

STOP_POLL_SECONDS = 0.2  # how often a session looks whether the run is stopping
STDERR_LINES = 20  # the CLI's last lines kept for the message of a session that failed

# Where the CLI's calls go for an attempt of `client`'s run (the metering proxy's address).
EndpointFor = Callable[[ModelClient], ApiEndpoint]


@dataclass(frozen=True)
class ClaudeCodeAgent:
    """The Claude Code agent of one run."""

    cli: str  # the Claude Code CLI (`availability.bundled_cli`)
    claude_settings: str
    mcp_config: str | None
    endpoint_for: EndpointFor
    name: str = "claude-code"

    def system_prompt(self, spec: FeatureSpec, strategy: str) -> str:
        return appended_system_prompt(spec)

    def attempt(self, session: AgentSession, history: list[ApiMessage], prompt: str, feature_id: str) -> AttemptOutcome:
        outcome = AttemptOutcome(stop="end_turn", model=session.model)
        inbox, recorder = ReportInbox(), StreamRecorder(outcome, feature_id, session.on_event)
        stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        settings = SessionSettings(
            model=session.model, max_turns=session.max_turns, system_append=session.system,
            claude_settings=self.claude_settings, mcp_config=Path(self.mcp_config) if self.mcp_config else None,
        )
        tools = session.tool_context
        with CliLaunch(Path(self.cli), tools.environment, self.endpoint_for(session.client)) as launch:
            options = session_options(settings, tools, report_server(inbox), launch.wrapper, launch.variables)
            options.stderr = stderr.append
            try:
                asyncio.run(_converse(prompt, options, recorder, _stopping(session.client)))
            except ClaudeSDKError as err:
                tail = " | ".join(stderr)
                outcome.stop, outcome.error = "error", f"Claude Code failed: {err}" + (f" ({tail})" if tail else "")
                outcome.final = outcome.error if isinstance(err, CLINotFoundError) else None
                session.on_event("warning", message=f"{feature_id}: {outcome.error}"[:1000], id=feature_id)
        if inbox.report is not None:
            outcome.report, outcome.stop = inbox.report, "reported"
        return outcome


async def _converse(prompt: str, options: ClaudeAgentOptions, recorder: StreamRecorder, stopping: Callable[[], bool]) -> None:
    """The session, message by message; cancelled (KeyboardInterrupt) when the run stops."""
    main = asyncio.current_task()
    assert main is not None

    async def watch() -> None:
        while not stopping():
            await asyncio.sleep(STOP_POLL_SECONDS)
        main.cancel()

    watcher = asyncio.create_task(watch())
    try:
        async for message in query(prompt=prompt, options=options):
            recorder.take(message)
    except asyncio.CancelledError:
        if stopping():
            raise KeyboardInterrupt("the run is stopping") from None
        raise
    finally:
        watcher.cancel()


def _stopping(client: ModelClient) -> Callable[[], bool]:
    pool = client.pool
    return (lambda: pool.stopping) if pool is not None else (lambda: False)


def direct_endpoint(client: ModelClient) -> ApiEndpoint:
    """The run's own API address and key, as the built-in agent's client has them.

    For development until the metering proxy serves the CLI: this hands the real key to the
    CLI process (not to its commands' files, but to its environment)."""
    sdk = client.sdk
    return ApiEndpoint(base_url=str(getattr(sdk, "base_url", "https://api.anthropic.com")).rstrip("/"),
                       api_key=str(getattr(sdk, "api_key", "") or ""))
