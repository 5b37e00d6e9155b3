"""Issue 13, item 19: many constraints. Every feature's agent reports one new project rule, and
memory is folded every 5 features without a model (the deterministic path that `--context
window` and `replay` take, and that a summarizer which never consolidates amounts to).

At the end: how many constraints are active, how large their store is, and what
`get_injection` and `record_report` take then (median of repeated calls, fsync included, as in
a run). Before the hard limit every rule stayed active and both calls grew with their number.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.memory import VOCABULARY, no_fsync
from context_agent.project_memory import ContextAgent
from orchestrator.store.disk.paths import ProjectPaths

SUMMARIZE_EVERY = 5
TIMED_CALLS = 20  # a multiple of SUMMARIZE_EVERY: the run ends folded


def measure(constraints: int = 5000) -> dict[str, Any]:
    """Record `constraints` distinct rules, one a feature, then time the calls a feature makes."""
    features = [SimpleNamespace(id=f"f{n}", name=f"Feature {n}", category="backend", description=_rule(n),
                                depends_on=[]) for n in range(constraints + TIMED_CALLS)]
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-constraints-") as tmp:
        root = Path(tmp)
        paths = ProjectPaths.for_project(root)
        # No summarizer model: the fold is deterministic (a failed call falls back to the same).
        agent = ContextAgent(root, features=features, on_event=lambda kind, data: None)
        with no_fsync():  # filling up is not what is measured; thousands of fsyncs would only slow it
            for number in range(constraints):
                _feature(agent, number)
        store_bytes = paths.context.active_constraints.stat().st_size
        active = len(json.loads(paths.context.active_constraints.read_text(encoding="utf-8"))["constraints"])
        # Then the same loop goes on, timed, fsyncs included, as in a run.
        injection_ms, report_ms = [], []
        for number in range(constraints, constraints + TIMED_CALLS):
            injection_ms.append(_ms(agent.get_injection, f"f{number}"))
            report_ms.append(_feature(agent, number))
    return {
        "recorded": constraints,
        "active": active,
        "store_kb": round(store_bytes / 1024, 1),
        "get_injection_ms": round(statistics.median(injection_ms), 1),
        "record_report_ms": round(statistics.median(report_ms), 1),
    }


def _feature(agent: ContextAgent, number: int) -> float:
    """Record feature `number`'s report, folding memory every 5 features; the ms recording took."""
    feature_id = f"f{number}"
    took = _ms(agent.record_report, feature_id, {"summary": f"Built feature {number}.", "constraints": [_rule(number)]})
    if (number + 1) % SUMMARIZE_EVERY == 0:
        agent.summarize([f"f{n}" for n in range(number + 1 - SUMMARIZE_EVERY, number + 1)], "every-5")
    return took


def _rule(number: int) -> str:
    words = [VOCABULARY[(number * step) % len(VOCABULARY)] for step in (1, 7, 13)]
    return f"Rule {number}: {words[0]} {words[1]} must always go through the {words[2]} layer"


def _ms(call: Callable[..., Any], *args: Any) -> float:
    start = time.perf_counter()
    call(*args)
    return 1000 * (time.perf_counter() - start)
