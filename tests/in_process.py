"""A run in this process against the fake API, through the real factory: for tests that read
the run's result or count what it does (fsyncs, bytes) rather than drive the CLI."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import anthropic

from orchestrator.commands.rendering.output import PlainRenderer
from orchestrator.config import RunConfig
from orchestrator.run.factory import build_runner
from orchestrator.run.runner import RunOptions
from orchestrator.run.verdict import RunResult
from orchestrator.spec.load import load_spec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.events import EventSink


def run_in_process(project: Path, spec: Path, fake: Any) -> tuple[RunResult, ProjectPaths]:
    """Run `spec` in `project` once, commits off, quiet; the result and the project's paths."""
    paths = ProjectPaths.for_project(project)
    events = EventSink(PlainRenderer(out=io.StringIO(), err=io.StringIO()), paths.events_log)
    sdk = anthropic.Anthropic(base_url=fake.base_url, api_key="sk-ant-test-0123456789abcdef", max_retries=0)
    try:
        result = build_runner(load_spec(spec), RunConfig(commit=False), RunOptions(), paths, events, sdk=sdk).run()
    finally:
        sdk.close()
    return result, paths
