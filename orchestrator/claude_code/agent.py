"""`--agent claude-code`: each attempt is one fresh Claude Code session through the Agent SDK.

The feature job hands it what it hands the built-in loop (`run.attempt.agent_seam.Agent`): the
prompt with the same sections, the attempt's tool context (workspace, sandbox, variables,
protected files), model and turn limit. The session runs on an event loop of the job's own
thread; the run's stop switch (Ctrl-C under `--jobs N`, a limit, an error) or an interrupt in the
main thread cancels it, and the launch stops whatever the CLI left running before the
interrupt goes on (exit 130, and a resumed run makes the attempt again).

Who pays (`billing`): with an API key every call goes through the attempt's metering proxy (the
caps checked before each call, the spend booked and journaled, `api_call` events), and the CLI
holds only the proxy's dummy key; on a Claude plan the CLI signs in itself, within the budget
of the attempt (`PlanAttempt`), and its reported cost is booked.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ClaudeSDKError, CLINotFoundError, ResultMessage

from orchestrator.agent_settings import DEFAULT_PLAN_ATTEMPT_BUDGET
from orchestrator.claude_code.billing import BillingMode, PlanAttempt
from orchestrator.claude_code.metering.metering_proxy import MeteringProxy
from orchestrator.claude_code.metering.provider_relay import ProviderUpstream
from orchestrator.claude_code.metering.upstream import Upstream
from orchestrator.claude_code.session.launch import ApiEndpoint, CliLaunch
from orchestrator.claude_code.session.options import SessionSettings, sdk_thinking, session_options
from orchestrator.claude_code.session.project_config import ProjectConfig, config_digests, read_project_config
from orchestrator.claude_code.session.report_server import ReportInbox, report_server
from orchestrator.claude_code.session.stream import StreamRecorder, session_result
from orchestrator.json_types import ApiMessage
from orchestrator.llm.client import ModelClient
from orchestrator.run.attempt.agent_loop import REPORT_REMINDER, AgentSession, AttemptOutcome
from orchestrator.run.attempt.feature_prompt import appended_system_prompt
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.store.event_kinds import Notice
from orchestrator.store.run_state import RunState

STOP_POLL_SECONDS = 0.2  # how often a session looks whether the run is stopping
STDERR_LINES = 20  # the CLI's last lines kept for the message of a session that failed

@dataclass(frozen=True)
class Payment:
    """How one attempt's calls are paid: where they go, the attempt's budget, what books its result."""

    endpoint: ApiEndpoint | None  # None: the CLI's own sign-in (a Claude plan)
    budget: float | None  # the SDK's max_budget_usd (a Claude plan: always one)
    on_result: Callable[[ResultMessage], None]


@dataclass(frozen=True)
class ClaudeCodeAgent:
    """The Claude Code agent of one run."""

    cli: str  # the Claude Code CLI (`availability.bundled_cli`)
    claude_settings: str
    mcp_config: str | None
    billing: BillingMode
    plan_attempt_budget: float = DEFAULT_PLAN_ATTEMPT_BUDGET  # a Claude plan attempt's budget without --max-cost
    name: str = "claude-code"
    allow: frozenset[str] = frozenset()  # the kinds of the project's configuration loaded (`claude_code_kinds`)
    # The project's configuration as the run began (`run_began`), read before any agent of this process worked.
    _project: dict[str, ProjectConfig] = field(default_factory=dict, compare=False, repr=False)
    _project_lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def system_prompt(self, spec: FeatureSpec, strategy: str) -> str:
        return appended_system_prompt(spec)

    def attempt(self, session: AgentSession, history: list[ApiMessage], prompt: str, feature_id: str) -> AttemptOutcome:
        outcome = AttemptOutcome(stop="end_turn", model=session.model)
        inbox, recorder = ReportInbox(), StreamRecorder(outcome, feature_id, session.on_event)
        stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        settings = SessionSettings(
            model=session.model, max_turns=session.max_turns, system_append=session.system,
            claude_settings=self.claude_settings, mcp_config=Path(self.mcp_config) if self.mcp_config else None,
            thinking=sdk_thinking(session.request_fields.get("thinking")),
            project=self._project_config(session, feature_id),
        )
        tools = session.tool_context
        with self._paid(session, feature_id) as payment, CliLaunch(
            Path(self.cli), tools.environment, payment.endpoint, max_output_tokens=session.max_output_tokens,
        ) as launch:
            options = session_options(settings, tools, report_server(inbox), launch.wrapper, launch.variables)
            options.stderr, options.max_budget_usd = stderr.append, payment.budget
            def unreported() -> bool:  # a turn ended normally without the report: its summary would be lost
                return (inbox.report is None and outcome.stop == "end_turn" and outcome.error is None
                        and bool(recorder.results) and not recorder.errored)

            try:
                asyncio.run(_converse(prompt, options, recorder, payment.on_result, _stopping(session.client),
                                      unreported))
            except ClaudeSDKError as err:
                tail = " | ".join(stderr)
                outcome.stop, outcome.error = "error", f"Claude Code failed: {err}" + (f" ({tail})" if tail else "")
                outcome.final = outcome.error if isinstance(err, CLINotFoundError) else None
                session.on_event(Notice(type="warning", message=f"{feature_id}: {outcome.error}"[:1000], id=feature_id))
        if inbox.report is not None:
            outcome.report, outcome.stop = inbox.report, "reported"
        return outcome

    def run_began(self, state: RunState, root: Path) -> None:
        """Record the project's configuration files when the run first begins; read what of them is
        allowed and still as they were then (a resumed run: never what an agent wrote meanwhile)."""
        if state.claude_config_at_start is None:
            state.claude_config_at_start = config_digests(root)
        with self._project_lock:
            self._project["run"] = read_project_config(root, self.allow, state.claude_config_at_start)

    def _project_config(self, session: AgentSession, feature_id: str) -> ProjectConfig | None:
        """The allowed configuration as `run_began` read it; said once when files were left out."""
        if not self.allow:
            return None
        with self._project_lock:
            project = self._project.get("run")
            if project is None:  # no run began (a lone attempt): nothing the run did not see at its start
                project = self._project["run"] = read_project_config(
                    session.tool_context.project_root, self.allow, config_digests(session.tool_context.project_root))
            if project.left_out and not self._project.get("said"):
                self._project["said"] = project
                session.on_event(Notice(type="warning", id=feature_id, message=(
                    f"Claude Code configuration not loaded, as it is not what the run began with (written or changed "
                    f"during the run): {', '.join(project.left_out)}")))
        return project

    @contextlib.contextmanager
    def _paid(self, session: AgentSession, feature_id: str) -> Iterator[Payment]:
        """The attempt's billing around its session; LimitReached after it when a cap stopped it."""
        if self.billing == "api-key":  # every call through the metering proxy, the real key on its side only
            with MeteringProxy(upstream=_upstream(session.client), client=session.client, models={session.model},
                               feature_id=feature_id, attempt=session.attempt, on_event=session.on_event) as proxy:
                yield Payment(ApiEndpoint(proxy.base_url, proxy.token, session.model), None, lambda _result: None)
            proxy.raise_if_refused()
            return
        with PlanAttempt(session.client, model=session.model, feature_id=feature_id, attempt=session.attempt,
                         on_event=session.on_event, ceiling=self.plan_attempt_budget) as plan:
            yield Payment(None, plan.budget, plan.record)
        plan.raise_if_capped()


async def _converse(
    prompt: str, options: ClaudeAgentOptions, recorder: StreamRecorder, on_result: Callable[[ResultMessage], None],
    stopping: Callable[[], bool], unreported: Callable[[], bool],
) -> None:
    """The session, message by message; cancelled (KeyboardInterrupt) when the run stops. A turn
    that ends without `report_feature` is reminded once, in the same session, as the built-in loop does."""
    main = asyncio.current_task()
    assert main is not None

    async def watch() -> None:
        while not stopping():
            await asyncio.sleep(STOP_POLL_SECONDS)
        main.cancel()

    watcher = asyncio.create_task(watch())
    try:
        async with ClaudeSDKClient(options=options) as client:
            try:
                await client.query(prompt)
                await _receive(client, recorder)
                if unreported():
                    await client.query(REPORT_REMINDER)
                    await _receive(client, recorder)
            finally:  # booked once, with every turn's usage and the session's cost (`session_result`)
                if recorder.results:
                    on_result(session_result(recorder.results))
    except asyncio.CancelledError:
        if stopping():
            raise KeyboardInterrupt("the run is stopping") from None
        raise
    finally:
        watcher.cancel()


async def _receive(client: ClaudeSDKClient, recorder: StreamRecorder) -> None:
    """One turn's messages, up to and with its `ResultMessage`."""
    async for message in client.receive_response():
        recorder.take(message)


def _upstream(client: ModelClient) -> Upstream | ProviderUpstream:
    """The Anthropic API with the run's key, or Bedrock / Vertex through the run's own SDK client."""
    provider = client.settings.provider
    if provider == "anthropic":
        return Upstream.from_environment()
    assert client.sdk is not None, "a metered run on Bedrock or Vertex has its SDK client (billing.makes_own_calls)"
    return ProviderUpstream.of(provider, client.sdk)


def _stopping(client: ModelClient) -> Callable[[], bool]:
    pool = client.pool
    return (lambda: pool.stopping) if pool is not None else (lambda: False)
