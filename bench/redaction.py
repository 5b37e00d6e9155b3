"""Redaction's cost per feature, and that of watching files that can sway a check (issue 13).

    python3 -m bench.redaction [FEATURES]      # default 200, the overhead benchmark's plan

Runs the real `Runner` in this process against the fake, with the overhead benchmark's spec
and plan (`short_plan`, every check `true`), and prints one line of JSON: per feature, the
top-level redaction calls, their CPU time, how often the two secret variables were looked up
in the environment, and the CPU time of the check-influence snapshots. The functions are
wrapped by name before the orchestrator imports them, so the script also measures older
commits (where a name is missing, it is skipped).
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from typing import Any, Callable

# A key of the real shape, so every redaction has a value to look for.
os.environ["ANTHROPIC_API_KEY"] = "sk-ant-api03-" + "Qw9_x-Yz" * 12


class Meter:
    """CPU time and calls of the outermost wrapped call (nested ones count in their caller)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self._depth = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return fn(*args, **kwargs)
            self._depth += 1
            self.calls += 1
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - start
                self._depth -= 1
        return wrapper


def main(count: int) -> dict[str, Any]:
    from orchestrator.safety.credentials import secrets

    redaction, snapshots = Meter(), Meter()
    for name in ("redact", "redact_value", "redact_piece", "known_secret_values", "scrubbed_environment"):
        if hasattr(secrets, name):
            setattr(secrets, name, redaction.wrap(getattr(secrets, name)))
    lookups = [0]
    real_get = os.environ.get

    def counting_get(name: str, default: Any = None) -> Any:
        if name in secrets.SECRET_VALUE_VARIABLES:
            lookups[0] += 1
        return real_get(name, default)

    os.environ.get = counting_get  # type: ignore[method-assign]
    try:
        from orchestrator.run.checks.influence import check_influence

        check_influence.take_snapshot = snapshots.wrap(check_influence.take_snapshot)  # type: ignore[assignment]
    except ImportError:
        pass
    from bench.harness import run_project
    from bench.plans import short_plan, spec_document
    from bench.summarizers import diligent_summarizer

    measure = run_project(spec_document(count), plan=short_plan, summarizer=diligent_summarizer)
    return {
        "features": count, "exit_code": measure.exit_code,
        "redaction_calls_per_feature": round(redaction.calls / count, 1),
        "redaction_cpu_ms_per_feature": round(1000 * redaction.seconds / count, 3),
        "secret_variable_lookups_per_feature": round(lookups[0] / count, 1),
        "snapshots_per_feature": round(snapshots.calls / count, 1),
        "snapshot_cpu_ms_per_feature": round(1000 * snapshots.seconds / count, 3),
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)))
