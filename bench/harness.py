"""One orchestrator run in this process, measured.

The real `Runner` is built with the parts `orchestrate run` builds (`orchestrator.run.factory`),
with a quiet renderer that only takes timestamps, and an SDK client pointed at the fake
Messages API: in this process (`run_project`, which also reads the billed usage) or in
another one (`run_spec` given its URL). Two stopwatches measure what the overhead figure
must leave out: the time inside the model calls (SDK, HTTP and the fake, the stand-in for
the model) and inside the feature checks (subprocesses). The check stopwatch and the
injection sampler come in through the runner's seams: a verifier and a context view.
"""

from __future__ import annotations

import json
import os
import resource
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Collection
from typing import Any, Callable, Iterator

import anthropic

from context_agent.injection.context_injection import ContextInjection
from shared_base.tokens import estimate_tokens
from context_agent.injection.render import render_project_context
from orchestrator.config import ContextStrategy, RunConfig
from orchestrator.run.attempt.context_view import ContextView
from orchestrator.run.runner import Runner, RunOptions
from orchestrator.run.factory import build_parts
from orchestrator.run.checks.running.check_command import Verifier
from shared_base.check_result import CheckResult
from orchestrator.spec.load import load_spec
from orchestrator.store.event_kinds import Event, Notice
from orchestrator.store.events import EventSink
from orchestrator.store.disk.paths import ProjectPaths
from fake_messages_api.server import FakeAPI
from fake_messages_api.billing.ledger import UsageReport

API_KEY = "sk-ant-bench-0000"


@dataclass
class Stopwatch:
    """Seconds spent inside the wrapped calls, and how many calls."""

    seconds: float = 0.0
    calls: int = 0

    @contextmanager
    def timing(self) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


class _TimedMessages:
    """`sdk.messages` with every `create` and `stream` call timed."""

    def __init__(self, messages: Any, watch: Stopwatch) -> None:
        self._messages = messages
        self._watch = watch

    def create(self, **request: Any) -> Any:
        with self._watch.timing():
            return self._messages.create(**request)

    @contextmanager
    def stream(self, **request: Any) -> Iterator[Any]:
        """The streamed call (the one the model client makes), timed from its request to its last event."""
        with self._watch.timing(), self._messages.stream(**request) as stream:
            yield stream


class TimedSDK:
    """An `anthropic.Anthropic` whose model calls are timed (the only SDK use of the runner)."""

    def __init__(self, sdk: anthropic.Anthropic, watch: Stopwatch) -> None:
        self.messages = _TimedMessages(sdk.messages, watch)


@dataclass
class FeatureMark:
    """Cumulative clocks when one feature finished."""

    wall: float
    http: float
    check: float
    cpu: float = 0.0  # the process's own CPU time since the run began (every thread): what a loaded machine does not inflate


class QuietRenderer:
    """Prints nothing; notes when each feature finished, and counts warnings and errors."""

    def __init__(self, clock: Callable[[], FeatureMark]) -> None:
        self.clock = clock
        self.marks: list[FeatureMark] = []
        self.warnings: list[str] = []

    def handle(self, event: Event) -> None:
        if event.type == "feature_finished":
            self.marks.append(self.clock())
        elif isinstance(event, Notice) and len(self.warnings) < 20:
            self.warnings.append(event.message)

    def close(self) -> None:
        pass


@dataclass
class RunMeasure:
    """What one run cost and produced."""

    features: int
    exit_code: int
    wall_s: float
    http_s: float
    check_s: float
    http_calls: int
    fsync_s: float
    fsyncs: int
    marks: list[FeatureMark]
    injection_tokens: dict[int, int] = field(default_factory=dict)
    max_injection_tokens: int = 0
    warnings: list[str] = field(default_factory=list)
    usage: UsageReport | None = None  # when the fake ran in this process


def peak_rss_mb() -> float:
    """This process's peak resident set size so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class TimedVerifier:
    """A verifier whose every check is timed."""

    def __init__(self, verifier: Verifier, watch: Stopwatch) -> None:
        self.verifier = verifier
        self.watch = watch

    def check(self, command: str | None, attempt: int) -> CheckResult:
        with self.watch.timing():
            return self.verifier.check(command, attempt)


class SampledView(ContextView):
    """The run's context view, noting the injection's size at some positions (rendered,
    through the product's estimator) and the largest `tokenCount` of the run."""

    def __init__(self, view: ContextView, positions: set[int]) -> None:
        super().__init__(view.agent, view.spec, view.paths, strategy=view.strategy.name, depth=view.depth)
        self.feature_positions: dict[str, int] = {}  # the runner's, once it has selected
        self.positions = positions
        self.samples: dict[int, int] = {}
        self.largest = 0

    def get_injection(self, feature_id: str, reserved_tokens: int = 0, files: Collection[str] = ()) -> ContextInjection:
        injection = super().get_injection(feature_id, reserved_tokens, files)
        self.largest = max(self.largest, injection.token_count)
        position = self.feature_positions.get(feature_id)
        if position in self.positions:
            self.samples[position] = estimate_tokens(render_project_context(injection))
        return injection


@contextmanager
def timed_fsync(watch: Stopwatch) -> Iterator[None]:
    """Time every fsync (part of the overhead, but set by the disk rather than the code)."""
    original = os.fsync

    def fsync(fd: Any) -> None:
        with watch.timing():
            original(fd)

    os.fsync = fsync
    try:
        yield
    finally:
        os.fsync = original


def run_project(
    spec: dict[str, Any],
    *,
    plan: Any,
    summarizer: Callable[[dict[str, Any]], Any],
    context: ContextStrategy = "compressed",
    sample_positions: tuple[int, ...] = (),
) -> RunMeasure:
    """Run `spec` once, from a fresh project, against a fake in this process, and
    measure it, billed usage included."""
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-", dir=scratch_dir()) as tmp:
        root, spec_path = new_project(Path(tmp), spec)
        # One request kept: the ledger's counters and usage stay exact without holding every prompt.
        with FakeAPI(default_plan=plan, summarizer=summarizer, keep_requests=1) as fake:
            measure = run_spec(root, spec_path, fake.base_url, context=context, sample_positions=sample_positions)
            if fake.errors:
                raise RuntimeError(f"the fake API's plan or summarizer raised: {fake.errors[:3]!r}")
            measure.usage = fake.usage
        return measure


def new_project(directory: Path, spec: dict[str, Any]) -> tuple[Path, Path]:
    """An empty project directory and the spec file, both in `directory`."""
    root = directory / "project"
    root.mkdir()
    spec_path = directory / "spec.json"
    with open(spec_path, "w", encoding="utf-8") as handle:
        json.dump(spec, handle, indent=1)
    return root, spec_path


def run_spec(
    root: Path, spec_path: Path, base_url: str, *, context: ContextStrategy = "compressed",
    sample_positions: tuple[int, ...] = (), commit: bool = False,
) -> RunMeasure:
    """Run the spec in `root` with the real `Runner`, its model calls going to `base_url`.
    The clock runs from loading the spec to the end of the run, as `orchestrate run` would."""
    http, check, fsync = Stopwatch(), Stopwatch(), Stopwatch()
    # Checkpoint commits are off unless asked for (most projects here are no git repository); the rest is default.
    config = RunConfig(context=context, commit=commit)
    # Made before the clock starts: the SDK's client imports its HTTP stack and builds a TLS
    # context on creation (about 0.3 s), which is the model client's cost, not the loop's.
    sdk = anthropic.Anthropic(
        base_url=base_url, api_key=API_KEY, max_retries=config.api_max_retries, timeout=config.api_timeout
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    loaded = load_spec(spec_path)
    paths = ProjectPaths.for_project(root)
    renderer = QuietRenderer(lambda: FeatureMark(
        time.perf_counter() - started, http.seconds, check.seconds, time.process_time() - cpu_started))
    events = EventSink(renderer, paths.events_log)
    parts = build_parts(loaded, config, paths, events, sdk=TimedSDK(sdk, http))
    parts.verifier = TimedVerifier(parts.verifier, check)
    view = parts.context = SampledView(parts.context, set(sample_positions))
    runner = Runner(loaded, config, RunOptions(), paths, events, parts)
    view.feature_positions = runner.positions
    with timed_fsync(fsync):
        result = runner.run()
    wall = time.perf_counter() - started
    events.close()
    sdk.close()
    return RunMeasure(
        features=len(loaded.spec.features), exit_code=result.exit_code, wall_s=wall, http_s=http.seconds,
        check_s=check.seconds, http_calls=http.calls, fsync_s=fsync.seconds, fsyncs=fsync.calls, marks=renderer.marks,
        injection_tokens=view.samples, max_injection_tokens=view.largest, warnings=renderer.warnings,
    )


def scratch_dir() -> Path | None:
    """Where projects are created: $ORCHESTRATE_BENCH_TMP, else the system's temp directory."""
    value = os.environ.get("ORCHESTRATE_BENCH_TMP")
    return Path(value) if value else None
